// Builds the proxy capability's services for the app and registers their
// lifetimes and events. Called once from app.ts, after the fleet and the ssh
// wiring: disposed before them, so the proxy drains before tunnels close.
import type { PoolCaps, ProxyStats, RequestLogRetention, RequestQuery, RequestRow, ServiceView, TokenView, TrafficClass } from '../../../src-preload/contract/index.js';
import { toAppError } from '../base/index.js';
import {
  ModelRegistry,
  ProxyServer,
  RequestLog,
  type RequestRecord,
  createTokenRepository,
  type DrainResult,
  type TokenRepository,
  type UpstreamAvailability,
  type UpstreamResolver,
} from '../proxy/index.js';
import type { AppContext } from '../app-context.js';

export interface ProxyWiring {
  /** Base URL of the local OpenAI-compatible endpoint, or null while the proxy is not running. */
  url(): string | null;
  readonly server: ProxyServer;
  readonly tokens: TokenRepository;
  snapshot(): ProxyStats;
  createToken(name: string, maxClass: TrafficClass, caller: string): { token: string; view: TokenView };
  revokeToken(name: string, caller: string): TokenView;
  setCaps(upstream: string, caps: PoolCaps, caller: string): PoolCaps;
  requests(query: RequestQuery): RequestRow[];
  requestRetention(): RequestLogRetention;
  /** For the lifecycle capability (restart): stop admitting, finish in-flight work until the deadline, cut the rest. */
  drain(upstream: string, options: { deadlineMs: number }, actor: string): Promise<DrainResult>;
  resume(upstream: string, actor: string): void;
  /**
   * For the lifecycle capability: told when a request reaches a sleeping model
   * (to propose one wake), and asked how long a wake takes (Retry-After and
   * `expected_wake_ms` of the 503 model_sleeping answer).
   */
  setSleepHooks(hooks: SleepHooks | null): void;
}

export interface SleepHooks {
  onSleepingRequest(upstream: string): void;
  expectedWakeMs(upstream: string): number | null;
}

const CAPS_SETTING = 'proxy.caps';
const STATS_INTERVAL_MS = 1_000;
/** Not real clients: no token row to stamp. */
const NOT_TOKENS = new Set(['anonymous', 'unauthenticated', 'metrics']);

export async function wireProxy(ctx: AppContext): Promise<ProxyWiring> {
  const { store, config, fleet, clock } = ctx;
  const logger = ctx.logger.child('proxy');
  const tokens = createTokenRepository(store.db, clock);

  let sleepHooks: SleepHooks | null = null;
  // Answered requests for a sleeping model tell the lifecycle capability (one wake proposal, however many).
  class HookedRequestLog extends RequestLog {
    override add(record: RequestRecord): void {
      super.add(record);
      if (record.errorCode === 'model_sleeping' && record.upstream && sleepHooks) {
        try {
          sleepHooks.onSleepingRequest(record.upstream);
        } catch (err) {
          logger.warn('sleep hook failed', { upstream: record.upstream, error: toAppError(err).message });
        }
      }
    }
  }
  const requestLog = ctx.disposables.add(
    new HookedRequestLog({
      db: store.db,
      clock,
      logger,
      retention: () => {
        const r = config.current.proxy.requestLog;
        return { maxAgeMs: r.retentionDays * 86_400_000, maxRows: r.maxRows };
      },
      onFlushed: (clients, at) => {
        try {
          tokens.touch([...clients].filter((c) => !NOT_TOKENS.has(c)), at);
        } catch (err) {
          logger.warn('could not stamp token use', { error: toAppError(err).message });
        }
      },
    }),
  );

  // The fleet's last view of each service (sleep state), refreshed every tick; no I/O per request.
  const services = new Map<string, ServiceView>();
  const remember = (hosts: ReturnType<typeof fleet.snapshot>['hosts']) => {
    services.clear();
    for (const h of hosts) for (const s of h.services) services.set(`${h.label}/${s.id}`, s);
  };
  remember(fleet.snapshot().hosts);
  ctx.disposables.add(fleet.onDidTick((snapshot) => remember(snapshot.hosts)));

  const resolver: UpstreamResolver = {
    resolve(spec): UpstreamAvailability {
      const view = services.get(spec.key);
      if (view && (view.sleep === 'asleep-1' || view.sleep === 'asleep-2')) {
        let wakeMs: number | null = null;
        try {
          // A read only: the resolver also runs for stats; the proposal hook fires from the request log (real requests).
          wakeMs = sleepHooks?.expectedWakeMs(spec.key) ?? null;
        } catch (err) {
          logger.warn('sleep hook failed', { upstream: spec.key, error: toAppError(err).message });
        }
        return {
          ok: false,
          code: 'model_sleeping',
          message: `${spec.model} is asleep (${view.sleep === 'asleep-1' ? 'level 1' : 'level 2'}); waking it needs an operator's approval in GPU Console`,
          retryAfterS: wakeMs !== null ? Math.max(1, Math.ceil(wakeMs / 1000)) : 30,
          extra: { sleep_level: view.sleep === 'asleep-1' ? 1 : 2, expected_wake_ms: wakeMs },
        };
      }
      try {
        return { ok: true, url: fleet.tunnelUrl(spec.label, spec.serviceId) };
      } catch (err) {
        return { ok: false, code: 'tunnel_down', message: `no tunnel to ${spec.key}: ${toAppError(err).message}`, retryAfterS: 5 };
      }
    },
  };

  const capsOverrides = readCapsOverrides(ctx);
  const settings = config.current.proxy;
  const server = await ProxyServer.start({
    port: ctx.options.proxyPort ?? settings.port,
    settings,
    registry: ModelRegistry.fromConfig(config.current),
    tokens,
    resolver,
    requestLog,
    secrets: ctx.secrets,
    capsOverrides,
    clock,
    logger,
  });
  ctx.disposables.add(server);
  logger.info('proxy listening', { url: server.url });

  ctx.disposables.add(config.onDidChange((next) => server.update(ModelRegistry.fromConfig(next), next.proxy)));
  ctx.disposables.add(clock.setInterval(() => ctx.emit('proxy.stats', server.snapshot()), STATS_INTERVAL_MS));

  return {
    url: () => server.url,
    server,
    tokens,
    snapshot: () => server.snapshot(),
    createToken(name, maxClass, caller) {
      const created = tokens.create(name, maxClass);
      store.audit.append({
        type: 'proxy.token.created',
        actor: ctx.operatorActor(caller),
        target: name,
        payload: { maxClass, prefix: created.view.prefix },
      });
      return created;
    },
    revokeToken(name, caller) {
      const view = tokens.revoke(name);
      store.audit.append({ type: 'proxy.token.revoked', actor: ctx.operatorActor(caller), target: name, payload: { prefix: view.prefix } });
      return view;
    },
    setCaps(upstream, caps, caller) {
      const before = server.capsOf(upstream);
      const after = server.setCaps(upstream, caps);
      const all = { ...readCapsOverrides(ctx), [upstream]: after };
      store.settings.set(CAPS_SETTING, all);
      store.audit.append({
        type: 'proxy.caps.changed',
        actor: ctx.operatorActor(caller),
        target: upstream,
        payload: { slots: before.slots, before: before.caps, after },
      });
      return after;
    },
    requests: (query) => requestLog.query(query),
    requestRetention: () => requestLog.retentionView(),
    async drain(upstream, options, actor) {
      store.audit.append({ type: 'proxy.drain.started', actor, target: upstream, payload: { deadlineMs: options.deadlineMs } });
      const result = await server.drain(upstream, options);
      store.audit.append({ type: 'proxy.drain.finished', actor, target: upstream, payload: { ...result } });
      return result;
    },
    resume(upstream, actor) {
      server.resume(upstream);
      store.audit.append({ type: 'proxy.drain.resumed', actor, target: upstream, payload: {} });
    },
    setSleepHooks(hooks) {
      sleepHooks = hooks;
    },
  };
}

function readCapsOverrides(ctx: AppContext): Record<string, PoolCaps> {
  try {
    return ctx.store.settings.get<Record<string, PoolCaps>>(CAPS_SETTING) ?? {};
  } catch (err) {
    ctx.logger.warn('ignoring unreadable proxy caps setting', { error: toAppError(err).message });
    return {};
  }
}

