// The proxy capability as the console runs it: the server on 127.0.0.1 in
// front of the fleet's tunnels, client tokens, the request log with its
// retention, caps kept across restarts, drain and resume for lifecycle
// actions — each operator change audited. Other services react to what it
// publishes: every answered request (`onDidAnswer`), its pool figures, and a
// request that met a sleeping model (`onDidWantWake`: lifecycle proposes the wake).
import type { ClientUsage, ClientUsageWindow, PoolCaps, ProxyStats, RequestLogRetention, RequestQuery, RequestRow, TokenLimitsPatch, TokenView, TrafficClass } from '../../../src-preload/contract/index.js';
import { DisposableStore, Emitter, operatorActor, toAppError, type Clock, type Disposable, type Logger, type OffPremCounter } from '../base/index.js';
import type { EventSink } from '../channel.js';
import type { ConfigService } from '../config/index.js';
import { fleetSnapshotOf, type FleetService } from '../fleet/index.js';
import type { SecretStore } from '../ports.js';
import type { Store } from '../store/index.js';
import { ModelRegistry } from './registry.js';
import { RequestLog, type RequestRecord } from './request-log.js';
import { ProxyServer, type DrainResult } from './server.js';
import { FleetResolver, type WakeEstimates, type WakePolicy, type WakeWanted } from './fleet-resolver.js';
import { UpstreamLatency } from './latency-window.js';
import type { TokenRepository } from './tokens.js';
import { buildGovernance } from './client-governance.js';
import type { Notices } from '../notify/index.js';
import type { PlaygroundIdentity } from './playground-identity.js';
import { TokenAdmin } from './token-admin.js';
import { Captures } from './captures.js';
import { ClientUsageQuery } from './client-usage.js';
import { requestWindows } from './request-window.js';

export type { WakeEstimates, WakePolicy, WakeWanted } from './fleet-resolver.js';

export interface ProxyServiceDeps {
  store: Store;
  config: ConfigService;
  fleet: FleetService;
  secrets: SecretStore;
  wakeEstimates: WakeEstimates;
  /** Whether a request to a sleeping model may wait for a wake (lifecycle's rule); null: never. */
  wakePolicy: WakePolicy | null;
  emit: EventSink;
  clock: Clock;
  logger: Logger;
  /** Overrides config's port (0 = any free port). */
  port?: number;
  /** Counts (and refuses) upstream calls outside loopback and the tunnels; exported on /metrics. */
  offPrem?: OffPremCounter | null;
  /** Where token budget thresholds (50 / 80 / 100 %) are announced; null: audited only. */
  notices?: Notices | null;
  /** The playground's in-memory identity, recognised by the token check (playground-identity.ts). */
  playground?: PlaygroundIdentity | null;
}

const CAPS_SETTING = 'proxy.caps';
const STATS_INTERVAL_MS = 1_000;
/** Not real clients: no token row to stamp. */
const NOT_TOKENS = new Set(['anonymous', 'unauthenticated', 'metrics']);

export class ProxyService implements Disposable {
  private readonly disposables = new DisposableStore();
  private usageQuery: ClientUsageQuery | null = null;
  /** Fires for every request of a client the proxy answered (as its row is queued for the log). */
  readonly onDidAnswer: (listener: (record: RequestRecord) => void) => Disposable;
  /**
   * A request met a sleeping model: held for a wake a standing approval allows (`standing`), or refused
   * `model_sleeping`. The one path to a wake proposal (lifecycle subscribes).
   */
  readonly onDidWantWake: (listener: (wanted: WakeWanted) => void) => Disposable;

  private constructor(
    private readonly deps: ProxyServiceDeps,
    private readonly resolver: FleetResolver,
    readonly server: ProxyServer,
    readonly tokens: TokenRepository,
    private readonly requestLog: RequestLog,
    answered: Emitter<RequestRecord>,
    private readonly latency: UpstreamLatency,
    /** Captured requests: status, lists, audited views and exports. */
    readonly captures: Captures,
  ) {
    this.onDidAnswer = answered.on.bind(answered);
    this.onDidWantWake = resolver.onDidWantWake;
  }

  static async start(deps: ProxyServiceDeps): Promise<ProxyService> {
    const { store, config, fleet, clock } = deps;
    const logger = deps.logger;
    // Tokens, their monthly budgets and the request path's limits (client-governance.ts).
    const { tokens, budget, limits } = buildGovernance({ store, config, clock, logger, notices: deps.notices ?? null });
    const answered = new Emitter<RequestRecord>();
    const latency = new UpstreamLatency();
    const requestLog = new RequestLog({
      db: store.db,
      clock,
      logger,
      health: store.health,
      backlogRows: config.current.proxy.requestLog.backlogRows,
      retention: () => {
        const r = config.current.proxy.requestLog;
        return { maxAgeMs: r.retentionDays * 86_400_000, maxRows: r.maxRows };
      },
      onAdded: (record) => {
        latency.record(record);
        answered.fire(record);
      },
      onFlushed: (clients, at) => {
        try {
          tokens.touch([...clients].filter((c) => !NOT_TOKENS.has(c)), at);
        } catch (err) {
          logger.warn('could not stamp token use', { error: toAppError(err).message });
        }
      },
    });

    // The fleet's last state of each host and service, as published (each round, each SSH change); no I/O per request.
    const resolver = new FleetResolver(fleet, deps.wakeEstimates, deps.wakePolicy, clock, logger);
    resolver.remember(fleet.lastPublished);

    const captures = new Captures({ store, config, secrets: deps.secrets, clock, logger });
    const settings = config.current.proxy;
    let server: ProxyServer;
    try {
      server = await ProxyServer.start({
        port: deps.port ?? settings.port,
        settings,
        registry: ModelRegistry.fromConfig(config.current),
        tokens: deps.playground ? deps.playground.over(tokens) : tokens,
        resolver,
        requestLog,
        secrets: deps.secrets,
        capsOverrides: readCapsOverrides(store, logger),
        clock,
        logger,
        // The /metrics exposition shows the fleet as the screen does (the contract's view, built at its edge).
        fleetSnapshot: () => fleetSnapshotOf(fleet.state()),
        storageHealth: () => store.health.current(),
        offPrem: deps.offPrem ?? null,
        limits,
        capture: captures.recorder,
      });
    } catch (err) {
      requestLog.dispose();
      await captures.dispose();
      throw err;
    }
    const service = new ProxyService(deps, resolver, server, tokens, requestLog, answered, latency, captures);
    const d = service.disposables;
    // Disposed in reverse: stats timer and subscriptions, then the server (drains), then the log (flushes).
    d.add(requestLog);
    d.add(budget);
    d.add(captures);
    d.add(answered);
    d.add(server);
    // Each round and each SSH state change (a link lost, a host connected before the first poll ends) publish a state.
    d.add(fleet.onDidChange((state) => resolver.remember(state)));
    d.add(resolver);
    // A request refused model_sleeping (no standing approval to hold it) still wants a wake someone may approve.
    d.add(
      answered.on((record) => {
        if (record.errorCode === 'model_sleeping' && record.upstream) resolver.wantWake(record.upstream);
      }),
    );
    d.add(config.onDidChange((next) => server.update(ModelRegistry.fromConfig(next), next.proxy)));
    d.add(clock.setInterval(() => deps.emit('proxy.stats', service.snapshot()), STATS_INTERVAL_MS));
    logger.info('proxy listening', { url: server.url });
    return service;
  }

  /** Base URL of the local OpenAI-compatible endpoint, or null while the proxy is not running. */
  url(): string | null {
    return this.server.url;
  }

  /** The server's figures, each upstream with the latency of its answers over the last minute. */
  snapshot(): ProxyStats {
    const stats = this.server.snapshot();
    return { ...stats, upstreams: stats.upstreams.map((u) => ({ ...u, latency: this.latency.figures(u.upstream, stats.at) })) };
  }

  // Token and cap changes are stored with their audit event in one transaction: on a full data folder
  // both are refused (STORE_DISK_FULL naming the folder) and nothing unaudited is left behind.
  createToken(name: string, maxClass: TrafficClass, caller: string, limits?: TokenLimitsPatch): { token: string; view: TokenView } {
    return this.tokenAdmin().create(name, maxClass, limits, caller);
  }

  /** A live token's class or limits (checked, stored and audited old → new by token-admin.ts). */
  setToken(name: string, maxClass: TrafficClass | undefined, limits: TokenLimitsPatch, caller: string): TokenView {
    return this.tokenAdmin().set(name, maxClass, limits, caller);
  }

  private tokenAdmin(): TokenAdmin {
    const { store, config, clock } = this.deps;
    return new TokenAdmin({ store, tokens: this.tokens, config, clock });
  }

  /** Whether the proxy would take this token now (the demo's traffic keeps its own). */
  acceptsToken(token: string): boolean {
    return this.tokens.check(token).ok;
  }

  revokeToken(name: string, caller: string): TokenView {
    return this.deps.store.atomically(`revoking token "${name}"`, () => {
      const view = this.tokens.revoke(name);
      this.deps.store.audit.append({ type: 'proxy.token.revoked', actor: operatorActor(caller), target: name, payload: { prefix: view.prefix } });
      return view;
    });
  }

  setCaps(upstream: string, caps: PoolCaps, caller: string): PoolCaps {
    const { store, logger } = this.deps;
    const before = this.server.capsOf(upstream);
    const after = this.server.setCaps(upstream, caps);
    try {
      store.atomically(`caps of ${upstream}`, () => {
        store.settings.set(CAPS_SETTING, { ...readCapsOverrides(store, logger), [upstream]: after });
        store.audit.append({ type: 'proxy.caps.changed', actor: operatorActor(caller), target: upstream, payload: { slots: before.slots, before: before.caps, after } });
      });
    } catch (err) {
      this.server.setCaps(upstream, before.caps); // not stored, not audited: not in force either
      throw err;
    }
    return after;
  }

  requests(query: RequestQuery): RequestRow[] {
    return this.requestLog.query(query);
  }

  requestRetention(): RequestLogRetention {
    return this.requestLog.retentionView();
  }

  /** Per-client usage over a window (the Clients panel), cost by cost.summary's byClient split. */
  clientUsage(window: ClientUsageWindow): ClientUsage {
    const { store, config, clock } = this.deps;
    this.usageQuery ??= new ClientUsageQuery({
      db: store.db,
      windows: requestWindows(store.db),
      tokens: () => this.tokens.list(),
      anonymousEnabled: () => config.current.proxy.anonymousLoopback.enabled,
      priceOf: (label) => config.current.hosts.find((h) => h.label === label)?.pricePerHourUsd ?? null,
      flush: () => this.requestLog.flush(),
    });
    return this.usageQuery.usage(window, clock.now());
  }

  /**
   * For lifecycle actions (restart): stop admitting, finish in-flight work until the deadline, cut the rest.
   * `purpose` calibrates the Retry-After of requests refused meanwhile (a restart: deadline + its expected time).
   */
  async drain(upstream: string, options: { deadlineMs: number; purpose?: 'restart' | 'sleep' | 'offload' | 'maintenance' }, actor: string): Promise<DrainResult> {
    const { audit } = this.deps.store;
    audit.append({ type: 'proxy.drain.started', actor, target: upstream, payload: { deadlineMs: options.deadlineMs, ...(options.purpose ? { purpose: options.purpose } : {}) } });
    let expectedActionMs: number | null = null;
    if (options.purpose === 'restart') {
      try {
        expectedActionMs = this.deps.wakeEstimates.expectedRestartMs?.(upstream) ?? null;
      } catch (err) {
        this.deps.logger.warn('restart estimate failed', { upstream, error: toAppError(err).message });
      }
    }
    const result = await this.server.drain(upstream, { ...options, expectedActionMs });
    audit.append({ type: 'proxy.drain.finished', actor, target: upstream, payload: { ...result } });
    return result;
  }

  resume(upstream: string, actor: string): void {
    this.server.resume(upstream);
    this.deps.store.audit.append({ type: 'proxy.drain.resumed', actor, target: upstream, payload: {} });
  }

  /** Requests running and waiting on an upstream now, by the proxy's accounting; null when unknown. */
  load(upstream: string): { inFlight: number; queued: number } | null {
    return this.server.load(upstream);
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
