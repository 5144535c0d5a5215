// The local OpenAI-compatible endpoint on 127.0.0.1. The request path runs as
// stages (stages/*.ts: endpoint → host guard → auth and class → body → resolve
// upstream → idempotency → admit → dispatch), each returning a typed result;
// this file owns the listening socket, each upstream's priority pool and
// stats, drain and close, and exactly one answer and one `requests` row per request.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { FleetSnapshot, PoolCaps, ProxyStats, StorageHealth } from '../../../src-preload/contract/index.js';
import { AppError, silentLogger, systemClock, type Clock, type Disposable, type Logger, type OffPremCounter } from '../base/index.js';
import type { ProxyConfig } from '../config/index.js';
import type { SecretStore } from '../ports.js';
import { renderFleetExposition } from '../telemetry/index.js';
import { perClass } from './classes.js';
import { ProxyErrorCode } from './errors.js';
import { Exchange, wire, writeError } from './exchange.js';
import { IdempotencyCache, type IdempotencyLimits, type IdempotencyUsage, type StoredAnswer } from './idempotency.js';
import { LiveList, type LiveNode } from './live-list.js';
import { AnswerWindow, isUpstreamFailure } from './answer-window.js';
import type { InFlightView } from './in-flight.js';
import { upstreamFigures, type FigureSources } from './upstream-figures.js';
import { renderProxyMetrics, renderStorageMetrics } from './metrics-text.js';
import { PriorityPool, validateCaps, type DrainInfo, type PoolPolicy } from './pool.js';
import type { ModelRegistry } from './registry.js';
import type { RequestLog } from './request-log.js';
import type { UpstreamResolver } from './resolver.js';
import { admit, admitNow } from './stages/admit.js';
import { authorize } from './stages/auth.js';
import { readJsonBody } from './stages/body.js';
import { answerMalformed } from './stages/malformed.js';
import type { ClientLimits } from './client-limits.js';
import { readTrace } from './stages/trace.js';
import { DispatchStage } from './stages/dispatch.js';
import { guardHost } from './stages/host.js';
import { beginIdempotent, failedAnswer, type CompleteIdempotent } from './stages/idempotency.js';
import { modelsView, queueView } from './stages/local.js';
import { shuttingDownError } from './stages/refusals.js';
import { sendJson, sendMetrics } from './stages/respond.js';
import { matchEndpoint } from './stages/endpoint.js';
import { stop, type StageEnv } from './stages/stage.js';
import { chooseNow, chooseUpstream, chosen, lookupPlacement, upstreamBody, type ChooseContext, type Target } from './stages/upstream.js';
import { AnswerCounters } from './answer-counters.js';
import { ReplicaRouter } from './router.js';
import { ClassStats, type UpstreamStats } from './stats.js';
import type { TokenRepository } from './tokens.js';
import { TappedResponse, type CaptureHooks } from './capture-tap.js';

export type { UpstreamAvailability, UpstreamResolver } from './resolver.js';
export { splitHostHeader } from './stages/host.js';

export interface ProxyServerOptions {
  /** 0 = any free port. Always bound on 127.0.0.1. */
  port: number;
  settings: ProxyConfig;
  registry: ModelRegistry;
  tokens: TokenRepository;
  resolver: UpstreamResolver;
  requestLog?: RequestLog | null;
  secrets?: SecretStore | null;
  /** Caps changed at runtime (kept across restarts by the caller). */
  capsOverrides?: Record<string, PoolCaps>;
  clock?: Clock;
  logger?: Logger;
  /** Monotonic milliseconds for latency figures; default performance.now. */
  monotonic?: () => number;
  /** The fleet as it stands, exported on /metrics beside the proxy's own figures (hosts, GPUs, services, tunnels). */
  fleetSnapshot?: () => FleetSnapshot;
  /** The data folder's health, exported on /metrics (whether writes land, what the folder has left). */
  storageHealth?: () => StorageHealth;
  /** Counts (and refuses) upstream calls outside loopback and the tunnels; its counts go on /metrics. */
  offPrem?: OffPremCounter | null;
  /** Byte and entry bounds of the idempotency cache (default DEFAULT_IDEMPOTENCY_LIMITS). */
  idempotencyLimits?: Partial<IdempotencyLimits>;
  /** Per-client limits: allow-list, budget, requests and tokens a minute, expiry (client-limits.ts). */
  limits?: ClientLimits | null;
  /** Captured requests (capture-tap.ts): told of each request at arrival and once its row is made. */
  capture?: CaptureHooks | null;
}

export interface DrainResult {
  /** In-flight requests that finished within the deadline. */
  drained: number;
  /** In-flight requests cut at the deadline (answered 503 or an SSE error frame). */
  aborted: number;
}

export class ProxyServer implements Disposable {
  private readonly server: Server;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly mono: () => number;
  private registry: ModelRegistry;
  private readonly pools = new Map<string, PriorityPool>();
  private readonly stats = new Map<string, UpstreamStats>();
  /** Answers per upstream over the last 5 min, and those that failed on its side (UpstreamFigures.errors). */
  private readonly answers = new Map<string, AnswerWindow>();
  private readonly counters = new AnswerCounters();
  private readonly capsOverrides: Map<string, PoolCaps>;
  private readonly idempotency: IdempotencyCache;
  private readonly open = new LiveList<Exchange>();
  /** What the stages read (settings, the closing flag), kept current here. */
  private readonly env: StageEnv;
  private readonly dispatchStage: DispatchStage;
  private readonly router: ReplicaRouter;
  private readonly chooser: ChooseContext;
  private readonly figureSources: FigureSources;
  private failoversTotal = 0;
  private closed: Promise<void> | null = null;
  private port = 0;

  private constructor(private readonly options: ProxyServerOptions) {
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.mono = options.monotonic ?? (() => performance.now());
    this.registry = options.registry;
    this.capsOverrides = new Map(Object.entries(options.capsOverrides ?? {}));
    this.env = { clock: this.clock, mono: this.mono, settings: options.settings, closing: false };
    this.dispatchStage = new DispatchStage(this.env, options.resolver, options.secrets ?? null, options.offPrem ?? null, this.logger);
    this.router = new ReplicaRouter(this.mono);
    this.chooser = { pools: this.pools, router: this.router, resolver: options.resolver, env: this.env };
    const stage = this.dispatchStage;
    this.figureSources = { pools: this.pools, stats: this.stats, answers: this.answers, resolver: options.resolver, router: this.router, runningOn: (key) => stage.runningOn(key) };
    this.idempotency = new IdempotencyCache(this.clock, options.settings.idempotencyTtlMs, options.idempotencyLimits);
    this.syncPools();
    this.server = createServer({ keepAliveTimeout: 5_000, headersTimeout: 10_000, requestTimeout: 0, ServerResponse: TappedResponse }, (req, res) => this.handle(req, res));
    this.server.on('clientError', answerMalformed);
  }

  static async start(options: ProxyServerOptions): Promise<ProxyServer> {
    const proxy = new ProxyServer(options);
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error) =>
        reject(new AppError(ProxyErrorCode.LISTEN_FAILED, `the proxy cannot listen on 127.0.0.1:${options.port}: ${err.message}`, { cause: err }));
      proxy.server.once('error', onError);
      proxy.server.listen(options.port, '127.0.0.1', () => {
        proxy.server.off('error', onError);
        resolve();
      });
    });
    proxy.port = (proxy.server.address() as AddressInfo).port;
    return proxy;
  }

  /** The base URL clients put in OPENAI_BASE_URL. */
  get url(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get answeredCount(): number {
    return this.counters.total;
  }

  /** What the idempotency cache holds against its bounds. */
  idempotencyUsage(): IdempotencyUsage {
    return this.idempotency.usage();
  }

  /** Config reloaded: new upstreams get pools, changed slot counts apply, removed ones stop admitting. */
  update(registry: ModelRegistry, settings: ProxyConfig): void {
    this.registry = registry;
    this.env.settings = settings;
    this.idempotency.setTtl(settings.idempotencyTtlMs);
    this.syncPools();
  }

  capsOf(key: string): { slots: number; caps: PoolCaps } {
    const pool = this.requirePool(key);
    return { slots: pool.slots, caps: pool.caps };
  }

  /** Runtime cap change (the caller audits it). Throws PROXY_INVALID_CAPS. */
  setCaps(key: string, caps: PoolCaps): PoolCaps {
    const pool = this.requirePool(key);
    const problem = validateCaps(pool.slots, caps);
    if (problem) throw new AppError(ProxyErrorCode.INVALID_CAPS, `caps for ${key}: ${problem}`, { details: { upstream: key, slots: pool.slots } });
    this.capsOverrides.set(key, { ...caps });
    pool.setLimits({ slots: pool.slots, caps });
    return pool.caps;
  }

  /**
   * Stops admitting to one upstream (new requests: 503 upstream_draining with
   * Retry-After), lets in-flight requests finish until the deadline, then cuts
   * the rest. Queued requests wait for resume() within their hold budgets,
   * unless `refuseQueued` (shutdown) answers them 503 at once.
   */
  async drain(
    key: string,
    options: { deadlineMs: number; refuseQueued?: boolean; purpose?: DrainInfo['purpose']; expectedActionMs?: number | null },
  ): Promise<DrainResult> {
    const pool = this.requirePool(key);
    const running = this.dispatchStage.runningOn(key)?.size ?? 0;
    const idle = pool.drain(options.refuseQueued ?? false);
    pool.drainInfo = {
      deadlineAt: this.clock.now() + options.deadlineMs,
      purpose: options.purpose ?? 'maintenance',
      expectedActionMs: options.expectedActionMs ?? null,
    };
    let timer: Disposable | undefined;
    const timedOut = await Promise.race([
      idle.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = this.clock.setTimeout(() => resolve(true), options.deadlineMs);
      }),
    ]);
    void timer?.dispose();
    let aborted = 0;
    if (timedOut) {
      for (const ex of this.dispatchStage.runningOn(key)?.values() ?? []) {
        if (ex.abort) {
          ex.abort('drain');
          aborted++;
        }
      }
      await idle;
    }
    return { drained: running - aborted, aborted };
  }

  resume(key: string): void {
    this.requirePool(key).resume();
  }

  /** One upstream's requests running and queued (what lifecycle policies read per upstream each tick); null when unknown. */
  load(upstream: string): { inFlight: number; queued: number } | null {
    const pool = this.pools.get(upstream);
    return pool === undefined ? null : { inFlight: pool.inFlightTotal, queued: pool.queuedTotal };
  }

  snapshot(): ProxyStats {
    return this.figures(null);
  }

  /** The snapshot; `live`, when given, gets each upstream's in-flight view (what /metrics writes per class). */
  private figures(live: Map<string, InFlightView> | null): ProxyStats {
    const now = this.clock.now();
    const mono = this.mono();
    const upstreams = this.registry.upstreams.map((spec) => upstreamFigures(spec, this.figureSources, this.env.settings.holdBudgetMs, now, mono, live));
    let inFlight = 0;
    let queued = 0;
    for (const u of upstreams) {
      inFlight += u.inFlight;
      queued += u.queued;
    }
    return {
      at: now,
      url: this.closed ? null : this.url,
      answered: this.counters.total,
      inFlight,
      queued,
      upstreams,
      models: this.registry.placementViews(),
      failovers: this.failoversTotal,
      ...(this.options.requestLog ? { requestLog: this.options.requestLog.counts() } : {}),
    };
  }

  /** Graceful: stop accepting, drain every upstream for `graceMs`, cut the rest, close sockets and pools. */
  close(graceMs = this.env.settings.shutdownGraceMs): Promise<void> {
    if (this.closed) return this.closed;
    this.env.closing = true;
    this.closed = (async () => {
      const serverClosed = new Promise<void>((resolve) => this.server.close(() => resolve()));
      this.server.closeIdleConnections();
      await Promise.allSettled([...this.pools.keys()].map((key) => this.drain(key, { deadlineMs: graceMs, refuseQueued: true })));
      // Anything still open (waiting on an idempotent twin, reading a body) is cut now.
      for (const ex of this.open.values()) ex.abort?.('drain');
      this.server.closeAllConnections();
      await serverClosed;
      await this.dispatchStage.close();
      this.options.requestLog?.flush();
    })();
    return this.closed;
  }

  dispose(): Promise<void> {
    return this.close();
  }

  // --- request handling ------------------------------------------------------

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const ex = new Exchange(res, this.mono(), this.clock.now());
    this.options.capture?.begin(ex, req);
    const openNode = this.open.add(ex);
    res.once('close', () => {
      if (!res.writableFinished) {
        ex.clientGone = true;
        ex.abort?.('client');
      }
    });
    void this.serve(ex, req, openNode);
  }

  /** One request to its end: never rejects (a bug in a stage becomes a 500), always leaves one row. */
  private async serve(ex: Exchange, req: IncomingMessage, openNode: LiveNode<Exchange>): Promise<void> {
    try {
      await this.run(ex, req);
    } catch (err) {
      this.logger.error('proxy request failed', { id: ex.id, error: err instanceof Error ? err.message : String(err) });
      writeError(ex, wire(500, 'internal_error', 'internal error in the proxy'));
    } finally {
      this.open.remove(openNode);
      this.finish(ex);
    }
  }

  private finish(ex: Exchange): void {
    if (ex.finished) return;
    ex.finished = true;
    if (ex.status === 0 && !ex.clientGone) {
      // Every path answers; this is the safety net that keeps "never without an answer" true.
      writeError(ex, wire(500, 'internal_error', 'the proxy ended the request without an answer'));
    }
    if (ex.clientGone) {
      ex.status = 499;
      ex.errorCode = 'client_closed';
    }
    const now = this.mono();
    this.counters.count(ex);
    this.options.limits?.settle(ex);
    const at = this.clock.now();
    // Counted with the same upstream and status as the counter above (a planned state's refusals apart: answer-window.ts).
    if (ex.upstream !== null) this.answers.get(ex.upstream)?.record(at, isUpstreamFailure(ex.status, ex.errorCode));
    const st = ex.upstream && ex.cls ? this.stats.get(ex.upstream)?.[ex.cls] : undefined;
    if (st) {
      if (ex.status < 400) {
        st.recordDone(at, ex.tokensOut);
        if (ex.ttftMs !== null) st.recordTtft(at, ex.ttftMs);
      } else if (ex.status === 429 || ex.status === 503) st.recordRejected();
    }
    if (this.counters.countUnstored(ex)) return;
    this.options.capture?.end(ex);
    this.options.requestLog?.add(ex.record(now));
  }

  /** Answers not stored as rows (no valid token, or a health/metrics scrape), by endpoint and reason. */
  unstoredCounts(): ReadonlyMap<string, number> {
    return this.counters.unstored;
  }

  /** The fleet's families for /metrics; a failing snapshot leaves them out and the proxy's own figures still answer. */
  private fleetMetrics(): string {
    if (!this.options.fleetSnapshot) return '';
    try {
      return renderFleetExposition(this.options.fleetSnapshot());
    } catch (err) {
      this.logger.warn('fleet snapshot for /metrics failed', { error: err instanceof Error ? err.message : String(err) });
      return '';
    }
  }

  /** The request path, stage by stage (stages/): each records what it learns on `ex` and goes on or stops. */
  private async run(ex: Exchange, req: IncomingMessage): Promise<void> {
    const matched = matchEndpoint(ex, req);
    if (!matched.ok) return stop(ex, matched.error);
    const { endpoint, path, modelId } = matched.value;
    const host = guardHost(req, this.port);
    if (!host.ok) return stop(ex, host.error);
    const trace = readTrace(ex, req.headers);
    if (!trace.ok) return stop(ex, trace.error);
    if (this.env.closing) return stop(ex, shuttingDownError());
    if (endpoint === 'health') return sendJson(ex, 200, { status: 'ok', upstreams: this.registry.upstreams.length });
    if (endpoint === 'metrics') {
      ex.client = 'metrics';
      const live = new Map<string, InFlightView>();
      const stats = this.figures(live);
      const extra = { holdBudgetMs: this.env.settings.holdBudgetMs, inFlight: live, refusals: this.counters.refusals };
      const storage = this.options.storageHealth ? renderStorageMetrics(this.options.storageHealth()) : '';
      return sendMetrics(ex, renderProxyMetrics(stats, this.counters.answered, this.counters.unstored, this.options.offPrem?.counts(), extra) + storage + this.fleetMetrics());
    }
    const cls = authorize(ex, req.headers, this.env.settings.anonymousLoopback, this.options.tokens, this.options.limits);
    if (!cls.ok) return stop(ex, cls.error);
    if (endpoint === 'models') {
      const view = modelsView(ex, this.registry, modelId, this.clock.now(), this.options.resolver);
      return view.ok ? sendJson(ex, 200, view.value) : stop(ex, view.error);
    }
    if (endpoint === 'queue') return sendJson(ex, 200, queueView(this.registry, this.pools));

    const body = await readJsonBody(ex, req, this.env);
    if (!body.ok) return stop(ex, body.error);
    const model = lookupPlacement(ex, body.value, this.registry, endpoint, this.env.settings);
    if (!model.ok) return stop(ex, model.error);
    const limited = this.options.limits?.admit(ex, model.value, body.value, this.registry);
    if (limited && !limited.ok) return stop(ex, limited.error);
    const chooser = this.chooser;
    // Ready now (the usual case) without a promise; else wait or refuse as chooseUpstream decides.
    const now = chooseNow(model.value, cls.value, chooser, NO_EXCLUSIONS);
    const first = now?.ok ? chosen(ex, now) : await chooseUpstream(ex, model.value, cls.value, req.headers, chooser);
    if (!first.ok) return stop(ex, first.error);
    let target: Target = first.value;

    let complete: CompleteIdempotent | null = null;
    const idempotencyKey = req.headers['idempotency-key'];
    if (idempotencyKey !== undefined) {
      const begun = await beginIdempotent(ex, idempotencyKey, this.idempotency, path, body.value.raw, this.mono);
      if (!begun.ok) return stop(ex, begun.error);
      complete = begun.value;
    }
    // null once served: relayed but too large to copy (the idempotency entry then keeps nothing).
    let captured: StoredAnswer | null | undefined;
    let tried: Set<string> | null = null;
    try {
      for (;;) {
        const { spec } = target;
        const out = upstreamBody(ex, endpoint, body.value, spec, this.env.settings);
        if (!out.ok) return stop(ex, out.error);
        const st = this.stats.get(spec.key)![cls.value];
        const lease = admitNow(ex, target.pool, cls.value, st, this.env) ?? (await admit(ex, target, cls.value, req.headers, st, this.env));
        if (!lease.ok) return stop(ex, lease.error);
        // Counted as routed only now: an idempotent twin or a refusal never reached the replica.
        this.router.count(spec.key);
        // A failure before the first byte may go elsewhere only while another replica (or model) is left.
        const mayFailover = model.value.replicas.length > 1 || model.value.replicas[0]!.some((r) => r.key !== spec.key && !tried?.has(r.key));
        const sent = await this.dispatchStage.dispatch(ex, target, lease.value, out.value, path, complete !== null, mayFailover);
        if (sent.kind === 'served') {
          this.router.markHealthy(spec.key);
          captured = sent.captured;
          return;
        }
        if (sent.kind === 'done') return;
        // Failed before the first byte, nothing relayed: another replica (or the next model of a group) may take it.
        this.router.markFailing(spec.key);
        (tried ??= new Set()).add(spec.key);
        const next = chooseNow(model.value, cls.value, chooser, tried);
        if (!next?.ok || this.env.closing || ex.clientGone) return stop(ex, sent.error);
        this.logger.debug('failover', { id: ex.id, from: spec.key, to: next.spec.key, code: sent.error.code });
        ex.failovers++;
        this.failoversTotal++;
        target = chosen(ex, next).value;
      }
    } finally {
      complete?.(captured === undefined ? failedAnswer(ex) : captured);
    }
  }

  private requirePool(key: string): PriorityPool {
    const pool = this.pools.get(key);
    if (!pool) throw new AppError(ProxyErrorCode.UNKNOWN_UPSTREAM, `no upstream ${key}`, { details: { upstream: key } });
    return pool;
  }

  private policy(): PoolPolicy {
    return { holdBudgetMs: { ...this.env.settings.holdBudgetMs }, queueBound: { ...this.env.settings.queueBound } };
  }

  private syncPools(): void {
    const wanted = new Set(this.registry.upstreams.map((u) => u.key));
    for (const key of [...this.pools.keys()]) {
      if (wanted.has(key)) continue;
      const pool = this.pools.get(key)!;
      this.pools.delete(key);
      void pool.drain(true);
    }
    for (const spec of this.registry.upstreams) {
      const override = this.capsOverrides.get(spec.key);
      const caps = override && validateCaps(spec.slots, override) === null ? override : spec.caps;
      const existing = this.pools.get(spec.key);
      if (existing) {
        existing.setPolicy(this.policy());
        existing.setLimits({ slots: spec.slots, caps });
      } else {
        this.pools.set(spec.key, new PriorityPool(spec.key, { slots: spec.slots, caps }, this.policy(), this.clock, this.mono));
      }
      if (!this.stats.has(spec.key)) {
        const now = this.clock.now();
        this.stats.set(spec.key, perClass(() => new ClassStats(now)));
      }
      if (!this.answers.has(spec.key)) this.answers.set(spec.key, new AnswerWindow());
    }
  }
}

const NO_EXCLUSIONS: ReadonlySet<string> = new Set();
