// The proxy capability as the console runs it: the server on 127.0.0.1 in
// front of the fleet's tunnels, client tokens, the request log with its
// retention, caps kept across restarts, drain and resume for lifecycle
// actions — each operator change audited. Other services react to what it
// publishes: every answered request (`onDidAnswer`) and its pool figures.
import type { PoolCaps, ProxyStats, RequestLogRetention, RequestQuery, RequestRow, ServiceView, TokenView, TrafficClass } from '../../../src-preload/contract/index.js';
import { DisposableStore, Emitter, operatorActor, toAppError, type Clock, type Disposable, type Logger } from '../base/index.js';
import type { EventSink } from '../channel.js';
import type { ConfigService } from '../config/index.js';
import type { FleetService } from '../fleet/index.js';
import type { SecretStore } from '../ports.js';
import type { Store } from '../store/index.js';
import { ModelRegistry } from './registry.js';
import { RequestLog, type RequestRecord } from './request-log.js';
import { ProxyServer, type DrainResult, type UpstreamAvailability, type UpstreamResolver } from './server.js';
import { createTokenRepository, type TokenRepository } from './tokens.js';

/** How long waking a sleeping upstream takes (the lifecycle capability measures it); null if unknown. */
export interface WakeEstimates {
  expectedWakeMs(upstream: string): number | null;
}

export interface ProxyServiceDeps {
  store: Store;
  config: ConfigService;
  fleet: FleetService;
  secrets: SecretStore;
  wakeEstimates: WakeEstimates;
  emit: EventSink;
  clock: Clock;
  logger: Logger;
  /** Overrides config's port (0 = any free port). */
  port?: number;
}

const CAPS_SETTING = 'proxy.caps';
const STATS_INTERVAL_MS = 1_000;
/** Not real clients: no token row to stamp. */
const NOT_TOKENS = new Set(['anonymous', 'unauthenticated', 'metrics']);

export class ProxyService implements Disposable {
  private readonly disposables = new DisposableStore();
  /** Fires for every request of a client the proxy answered (as its row is queued for the log). */
  readonly onDidAnswer: (listener: (record: RequestRecord) => void) => Disposable;

  private constructor(
    private readonly deps: ProxyServiceDeps,
    readonly server: ProxyServer,
    readonly tokens: TokenRepository,
    private readonly requestLog: RequestLog,
    answered: Emitter<RequestRecord>,
  ) {
    this.onDidAnswer = answered.on.bind(answered);
  }

  static async start(deps: ProxyServiceDeps): Promise<ProxyService> {
    const { store, config, fleet, clock } = deps;
    const logger = deps.logger;
    const tokens = createTokenRepository(store.db, clock);
    const answered = new Emitter<RequestRecord>();
    const requestLog = new RequestLog({
      db: store.db,
      clock,
      logger,
      retention: () => {
        const r = config.current.proxy.requestLog;
        return { maxAgeMs: r.retentionDays * 86_400_000, maxRows: r.maxRows };
      },
      onAdded: (record) => answered.fire(record),
      onFlushed: (clients, at) => {
        try {
          tokens.touch([...clients].filter((c) => !NOT_TOKENS.has(c)), at);
        } catch (err) {
          logger.warn('could not stamp token use', { error: toAppError(err).message });
        }
      },
    });

    // The fleet's last view of each service (sleep state), refreshed every tick; no I/O per request.
    const services = new Map<string, ServiceView>();
    const remember = (hosts: ReturnType<typeof fleet.snapshot>['hosts']) => {
      services.clear();
      for (const h of hosts) for (const s of h.services) services.set(`${h.label}/${s.id}`, s);
    };
    remember(fleet.snapshot().hosts);
    const resolver: UpstreamResolver = {
      resolve(spec): UpstreamAvailability {
        const view = services.get(spec.key);
        // A server that wakes by itself on a request (llama-server --sleep-idle-seconds) is simply forwarded:
        // the request is what wakes it; holding it for an approval nobody can give would make it unreachable.
        if (view && (view.sleep === 'asleep-1' || view.sleep === 'asleep-2') && view.sleepControl !== 'automatic') {
          let wakeMs: number | null = null;
          try {
            wakeMs = deps.wakeEstimates.expectedWakeMs(spec.key);
          } catch (err) {
            logger.warn('wake estimate failed', { upstream: spec.key, error: toAppError(err).message });
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

    const settings = config.current.proxy;
    let server: ProxyServer;
    try {
      server = await ProxyServer.start({
        port: deps.port ?? settings.port,
        settings,
        registry: ModelRegistry.fromConfig(config.current),
        tokens,
        resolver,
        requestLog,
        secrets: deps.secrets,
        capsOverrides: readCapsOverrides(store, logger),
        clock,
        logger,
        fleetSnapshot: () => fleet.snapshot(),
      });
    } catch (err) {
      requestLog.dispose();
      throw err;
    }
    const service = new ProxyService(deps, server, tokens, requestLog, answered);
    const d = service.disposables;
    // Disposed in reverse: stats timer and subscriptions, then the server (drains), then the log (flushes).
    d.add(requestLog);
    d.add(answered);
    d.add(server);
    d.add(fleet.onDidTick((snapshot) => remember(snapshot.hosts)));
    d.add(config.onDidChange((next) => server.update(ModelRegistry.fromConfig(next), next.proxy)));
    d.add(clock.setInterval(() => deps.emit('proxy.stats', server.snapshot()), STATS_INTERVAL_MS));
    logger.info('proxy listening', { url: server.url });
    return service;
  }

  /** Base URL of the local OpenAI-compatible endpoint, or null while the proxy is not running. */
  url(): string | null {
    return this.server.url;
  }

  snapshot(): ProxyStats {
    return this.server.snapshot();
  }

  createToken(name: string, maxClass: TrafficClass, caller: string): { token: string; view: TokenView } {
    const created = this.tokens.create(name, maxClass);
    this.deps.store.audit.append({
      type: 'proxy.token.created',
      actor: operatorActor(caller),
      target: name,
      payload: { maxClass, prefix: created.view.prefix },
    });
    return created;
  }

  revokeToken(name: string, caller: string): TokenView {
    const view = this.tokens.revoke(name);
    this.deps.store.audit.append({ type: 'proxy.token.revoked', actor: operatorActor(caller), target: name, payload: { prefix: view.prefix } });
    return view;
  }

  setCaps(upstream: string, caps: PoolCaps, caller: string): PoolCaps {
    const { store, logger } = this.deps;
    const before = this.server.capsOf(upstream);
    const after = this.server.setCaps(upstream, caps);
    store.settings.set(CAPS_SETTING, { ...readCapsOverrides(store, logger), [upstream]: after });
    store.audit.append({
      type: 'proxy.caps.changed',
      actor: operatorActor(caller),
      target: upstream,
      payload: { slots: before.slots, before: before.caps, after },
    });
    return after;
  }

  requests(query: RequestQuery): RequestRow[] {
    return this.requestLog.query(query);
  }

  requestRetention(): RequestLogRetention {
    return this.requestLog.retentionView();
  }

  /** For lifecycle actions (restart): stop admitting, finish in-flight work until the deadline, cut the rest. */
  async drain(upstream: string, options: { deadlineMs: number }, actor: string): Promise<DrainResult> {
    const { audit } = this.deps.store;
    audit.append({ type: 'proxy.drain.started', actor, target: upstream, payload: { deadlineMs: options.deadlineMs } });
    const result = await this.server.drain(upstream, options);
    audit.append({ type: 'proxy.drain.finished', actor, target: upstream, payload: { ...result } });
    return result;
  }

  resume(upstream: string, actor: string): void {
    this.server.resume(upstream);
    this.deps.store.audit.append({ type: 'proxy.drain.resumed', actor, target: upstream, payload: {} });
  }

  /** Requests running and waiting on an upstream now, by the proxy's accounting; null when unknown. */
  load(upstream: string): { inFlight: number; queued: number } | null {
    const u = this.server.snapshot().upstreams.find((x) => x.upstream === upstream);
    return u ? { inFlight: u.inFlight, queued: u.queued } : null;
  }

  dispose(): Promise<void> {
    return this.disposables.dispose();
  }
}

function readCapsOverrides(store: Store, logger: Logger): Record<string, PoolCaps> {
  try {
    return store.settings.get<Record<string, PoolCaps>>(CAPS_SETTING) ?? {};
  } catch (err) {
    logger.warn('ignoring unreadable proxy caps setting', { error: toAppError(err).message });
    return {};
  }
}
