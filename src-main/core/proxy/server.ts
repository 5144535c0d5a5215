// The local OpenAI-compatible endpoint on 127.0.0.1: strict routing, client
// tokens and classes, admission through each upstream's priority pool (with
// keep-alives and queue frames while a stream waits), forwarding, and exactly
// one answer and one `requests` row per request.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import type { PoolCaps, ProxyStats, UpstreamState } from '../../../src-preload/contract/index.js';
import { AppError, silentLogger, systemClock, type Clock, type Disposable, type Logger } from '../base/index.js';
import type { ProxyConfig } from '../config/index.js';
import type { SecretStore } from '../ports.js';
import { CLASS_ORDER, allows, parsePriorityHeader, perClass, type TrafficClass } from './classes.js';
import { ProxyErrorCode, errorBody } from './errors.js';
import { ENDPOINT_PATH, Exchange, baseHeaders, wire, writeError, type Endpoint } from './exchange.js';
import { forward } from './forward.js';
import { IdempotencyCache, fingerprintOf, type StoredAnswer } from './idempotency.js';
import { LiveList } from './live-list.js';
import { renderProxyMetrics } from './metrics-text.js';
import { PriorityPool, validateCaps, type Lease, type PoolPolicy } from './pool.js';
import type { ModelRegistry, UpstreamSpec } from './registry.js';
import type { RequestLog } from './request-log.js';
import { withIncludeUsage } from './sse.js';
import { ClassStats, type UpstreamStats } from './stats.js';
import type { TokenRepository } from './tokens.js';

export type UpstreamAvailability =
  | { ok: true; url: string }
  | { ok: false; code: 'tunnel_down' | 'model_sleeping'; message: string; retryAfterS: number; extra?: Record<string, unknown> };

/** Where an upstream is reachable now; cheap, no I/O (the fleet keeps the state). */
export interface UpstreamResolver {
  resolve(spec: UpstreamSpec): UpstreamAvailability;
}

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
}

export interface DrainResult {
  /** In-flight requests that finished within the deadline. */
  drained: number;
  /** In-flight requests cut at the deadline (answered 503 or an SSE error frame). */
  aborted: number;
}

interface Route {
  endpoint: Endpoint;
  method: 'GET' | 'POST';
}

const ROUTES = new Map<string, Route>([
  [ENDPOINT_PATH.chat, { endpoint: 'chat', method: 'POST' }],
  [ENDPOINT_PATH.completions, { endpoint: 'completions', method: 'POST' }],
  [ENDPOINT_PATH.embeddings, { endpoint: 'embeddings', method: 'POST' }],
  [ENDPOINT_PATH.models, { endpoint: 'models', method: 'GET' }],
  [ENDPOINT_PATH.queue, { endpoint: 'queue', method: 'GET' }],
  [ENDPOINT_PATH.health, { endpoint: 'health', method: 'GET' }],
  [ENDPOINT_PATH.metrics, { endpoint: 'metrics', method: 'GET' }],
]);

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);
const MODEL_PREFIX = `${ENDPOINT_PATH.models}/`;

/** A path segment, percent-decoded; null when it is not valid percent-encoding or holds a NUL. */
function safeDecode(segment: string): string | null {
  try {
    const s = decodeURIComponent(segment);
    return s.length > 0 && s.length <= 256 && !s.includes('\0') ? s : null;
  } catch {
    return null;
  }
}
/** Every `%` starts two hex digits and the bytes they spell are UTF-8. */
function isValidPercentEncoding(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

class BodyError extends Error {
  constructor(readonly kind: 'too_large' | 'timeout' | 'client') {
    super(kind);
  }
}

export class ProxyServer implements Disposable {
  private readonly server: Server;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly mono: () => number;
  private settings: ProxyConfig;
  private registry: ModelRegistry;
  private readonly pools = new Map<string, PriorityPool>();
  private readonly stats = new Map<string, UpstreamStats>();
  private readonly inFlight = new Map<string, LiveList<Exchange>>();
  private readonly dispatchers = new Map<string, Pool>();
  private readonly answered = new Map<string, number>();
  /**
   * Answers to clients that showed no valid token (and health/metrics scrapes), by endpoint and reason:
   * counted here, never stored row by row, so no one on the machine can grow the database.
   */
  private readonly unstored = new Map<string, number>();
  private readonly apiKeys = new Map<string, string>();
  private readonly capsOverrides: Map<string, PoolCaps>;
  private readonly idempotency: IdempotencyCache;
  private readonly open = new LiveList<Exchange>();
  private answeredTotal = 0;
  private closing = false;
  private closed: Promise<void> | null = null;
  private port = 0;

  private constructor(private readonly options: ProxyServerOptions) {
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.mono = options.monotonic ?? (() => performance.now());
    this.settings = options.settings;
    this.registry = options.registry;
    this.capsOverrides = new Map(Object.entries(options.capsOverrides ?? {}));
    this.idempotency = new IdempotencyCache(this.clock, this.settings.idempotencyTtlMs);
    this.syncPools();
    this.server = createServer({ keepAliveTimeout: 5_000, headersTimeout: 10_000, requestTimeout: 0 }, (req, res) => this.handle(req, res));
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
      // Malformed request line or headers (e.g. CR/LF injection): Node refuses it before we see it.
      if (socket.writable && !socket.destroyed) {
        const body = errorBody(wire(400, 'invalid_request', `malformed HTTP request (${err.code ?? 'parse error'})`));
        socket.end(`HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      } else socket.destroy();
    });
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
    return this.answeredTotal;
  }

  /** Config reloaded: new upstreams get pools, changed slot counts apply, removed ones stop admitting. */
  update(registry: ModelRegistry, settings: ProxyConfig): void {
    this.registry = registry;
    this.settings = settings;
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
  async drain(key: string, options: { deadlineMs: number; refuseQueued?: boolean }): Promise<DrainResult> {
    const pool = this.requirePool(key);
    const running = this.inFlight.get(key)?.size ?? 0;
    const idle = pool.drain(options.refuseQueued ?? false);
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
      for (const ex of this.inFlight.get(key)?.values() ?? []) {
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

  snapshot(): ProxyStats {
    const now = this.clock.now();
    let inFlight = 0;
    let queued = 0;
    const upstreams = this.registry.upstreams.map((spec) => {
      const pool = this.pools.get(spec.key)!;
      const st = this.stats.get(spec.key)!;
      inFlight += pool.inFlightTotal;
      queued += pool.queuedTotal;
      let state: UpstreamState = 'ready';
      if (pool.isDraining) state = 'draining';
      else {
        const avail = this.options.resolver.resolve(spec);
        if (!avail.ok) state = avail.code === 'model_sleeping' ? 'sleeping' : 'down';
      }
      return {
        upstream: spec.key,
        label: spec.label,
        serviceId: spec.serviceId,
        model: spec.model,
        aliases: [...spec.aliases],
        state,
        slots: pool.slots,
        caps: pool.caps,
        inFlight: pool.inFlightTotal,
        queued: pool.queuedTotal,
        serviceMsEstimate: pool.serviceMsEstimate === null ? null : Math.round(pool.serviceMsEstimate),
        classes: CLASS_ORDER.map((cls) => ({ class: cls, inFlight: pool.inFlightOf(cls), queued: pool.queuedOf(cls), ...st[cls].figures(now) })),
      };
    });
    return { at: now, url: this.closed ? null : this.url, answered: this.answeredTotal, inFlight, queued, upstreams };
  }

  /** Graceful: stop accepting, drain every upstream for `graceMs`, cut the rest, close sockets and pools. */
  close(graceMs = this.settings.shutdownGraceMs): Promise<void> {
    if (this.closed) return this.closed;
    this.closing = true;
    this.closed = (async () => {
      const serverClosed = new Promise<void>((resolve) => this.server.close(() => resolve()));
      this.server.closeIdleConnections();
      await Promise.allSettled([...this.pools.keys()].map((key) => this.drain(key, { deadlineMs: graceMs, refuseQueued: true })));
      // Anything still open (waiting on an idempotent twin, reading a body) is cut now.
      for (const ex of this.open.values()) ex.abort?.('drain');
      this.server.closeAllConnections();
      await serverClosed;
      await Promise.allSettled([...this.dispatchers.values()].map((d) => d.destroy()));
      this.dispatchers.clear();
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
    const openNode = this.open.add(ex);
    res.once('close', () => {
      if (!res.writableFinished) {
        ex.clientGone = true;
        ex.abort?.('client');
      }
    });
    this.run(ex, req)
      .catch((err: unknown) => {
        this.logger.error('proxy request failed', { id: ex.id, error: err instanceof Error ? err.message : String(err) });
        writeError(ex, wire(500, 'internal_error', 'internal error in the proxy'));
      })
      .finally(() => {
        this.open.remove(openNode);
        this.finish(ex);
      });
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
    this.answeredTotal++;
    const counterKey = `${ex.upstream ?? 'none'}|${ex.cls ?? 'none'}|${ex.status}`;
    this.answered.set(counterKey, (this.answered.get(counterKey) ?? 0) + 1);
    const st = ex.upstream && ex.cls ? this.stats.get(ex.upstream)?.[ex.cls] : undefined;
    if (st) {
      const at = this.clock.now();
      if (ex.status < 400) {
        st.recordDone(at, ex.tokensOut);
        if (ex.ttftMs !== null) st.recordTtft(at, ex.ttftMs);
      } else if (ex.status === 429 || ex.status === 503) st.recordRejected();
    }
    if (ex.client === 'unauthenticated' || ex.client === 'metrics') {
      const key = `${ex.endpoint}|${ex.errorCode ?? (ex.status < 400 ? 'ok' : String(ex.status))}`;
      this.unstored.set(key, (this.unstored.get(key) ?? 0) + 1);
      return;
    }
    this.options.requestLog?.add(ex.record(now));
  }

  /** Answers not stored as rows (no valid token, or a health/metrics scrape), by endpoint and reason. */
  unstoredCounts(): ReadonlyMap<string, number> {
    return this.unstored;
  }

  private async run(ex: Exchange, req: IncomingMessage): Promise<void> {
    const rawUrl = req.url ?? '';
    const q = rawUrl.indexOf('?');
    const path = q >= 0 ? rawUrl.slice(0, q) : rawUrl;
    // GET /v1/models/{id} (openai-node's models.retrieve; an id with a slash may come encoded or not).
    if (path.includes('%') && !isValidPercentEncoding(path)) {
      return writeError(ex, wire(400, 'invalid_path', 'the request path holds a malformed percent-escape', { headers: { 'x-should-retry': 'false' } }));
    }
    const modelId = path.startsWith(MODEL_PREFIX) && path.length > MODEL_PREFIX.length ? safeDecode(path.slice(MODEL_PREFIX.length)) : null;
    const route = modelId !== null ? ROUTES.get(ENDPOINT_PATH.models) : ROUTES.get(path);
    if (!route) return writeError(ex, wire(404, 'not_found', `no route ${req.method ?? ''} ${path.slice(0, 200)}`));
    ex.endpoint = route.endpoint;
    if (req.method !== route.method) {
      return writeError(ex, wire(405, 'method_not_allowed', `${path} takes ${route.method}`, { headers: { allow: route.method } }));
    }
    const hostError = this.checkHost(req);
    if (hostError) return writeError(ex, hostError);
    if (this.closing) {
      return writeError(ex, wire(503, 'proxy_shutting_down', 'the console is shutting down', { retryAfterS: 5, headers: { connection: 'close' } }));
    }
    if (route.endpoint === 'health') return this.sendJson(ex, 200, { status: 'ok', upstreams: this.registry.upstreams.length });
    if (route.endpoint === 'metrics') {
      ex.client = 'metrics';
      const text = renderProxyMetrics(this.snapshot(), this.answered, this.unstored);
      ex.status = 200;
      ex.bytesOut = Buffer.byteLength(text);
      ex.res.writeHead(200, baseHeaders(ex, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': ex.bytesOut }));
      ex.res.end(text);
      return;
    }

    // Who is asking, and at which class.
    const auth = this.authenticate(req.headers.authorization);
    if (!auth.ok) return writeError(ex, auth.error);
    ex.client = auth.name;
    const wanted = parsePriorityHeader(req.headers['x-priority']);
    if (wanted === null) return writeError(ex, wire(400, 'invalid_priority', 'X-Priority must be one of: interactive, system, batch'));
    const cls = wanted ?? auth.maxClass;
    ex.cls = cls;
    if (!allows(auth.maxClass, cls)) {
      return writeError(ex, wire(403, 'class_not_allowed', `this token may send up to ${auth.maxClass}, not ${cls}`, { headers: { 'x-should-retry': 'false' } }));
    }

    if (route.endpoint === 'models') {
      const all = this.registry.models(Math.floor(this.clock.now() / 1000));
      if (modelId === null) return this.sendJson(ex, 200, { object: 'list', data: all });
      const one = all.find((m) => m.id.toLowerCase() === modelId.toLowerCase());
      if (!one) {
        return writeError(ex, wire(404, 'model_not_found', `The model \`${modelId.slice(0, 200)}\` does not exist. GET /v1/models lists the models served here.`, { param: 'model' }));
      }
      ex.model = one.root;
      return this.sendJson(ex, 200, one);
    }
    if (route.endpoint === 'queue') return this.sendJson(ex, 200, this.queueView());

    // The body: JSON, bounded in size and time.
    const contentType = (req.headers['content-type'] ?? '').toLowerCase();
    if (!/^application\/json\s*(;|$)/.test(contentType)) {
      req.resume();
      return writeError(ex, wire(415, 'unsupported_media_type', 'send the body as application/json', { headers: { connection: 'close' } }));
    }
    let body: Buffer;
    try {
      body = await this.readBody(ex, req);
    } catch (err) {
      if (!(err instanceof BodyError)) throw err;
      if (err.kind === 'client') return;
      if (err.kind === 'too_large') {
        return writeError(ex, wire(413, 'body_too_large', `the body is over ${this.settings.maxBodyBytes} bytes`, { headers: { connection: 'close', 'x-should-retry': 'false' } }));
      }
      return writeError(ex, wire(408, 'body_timeout', `the body did not arrive within ${this.settings.bodyTimeoutMs} ms`, { headers: { connection: 'close' } }));
    }
    let parsed: Record<string, unknown>;
    try {
      const value = JSON.parse(body.toString('utf8')) as unknown;
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        return writeError(ex, wire(400, 'invalid_request', 'the body must be a JSON object'));
      }
      parsed = value as Record<string, unknown>;
    } catch (err) {
      return writeError(ex, wire(400, 'invalid_json', `the body is not valid JSON: ${(err as Error).message.slice(0, 200)}`));
    }
    if (typeof parsed['model'] !== 'string' || parsed['model'].length === 0) {
      return writeError(ex, wire(400, 'missing_model', 'the body must name a model', { param: 'model' }));
    }
    const asked = parsed['model'];
    const spec = this.registry.lookup(asked);
    if (!spec) {
      return writeError(ex, wire(404, 'model_not_found', `The model \`${asked.slice(0, 200)}\` does not exist. GET /v1/models lists the models served here.`, { param: 'model' }));
    }
    ex.model = spec.model;
    ex.upstream = spec.key;
    ex.stream = parsed['stream'] === true;
    const pool = this.pools.get(spec.key)!;
    if (pool.isDraining) return writeError(ex, this.drainingError(spec.key, pool));
    const avail = this.options.resolver.resolve(spec);
    if (!avail.ok) return writeError(ex, this.unavailableError(avail, pool));

    // The body the upstream gets: the served model name, and usage for every stream.
    let upstreamBody = body;
    let stripUsage = false;
    let rewrite = false;
    if (asked !== spec.model) {
      parsed['model'] = spec.model;
      rewrite = true;
    }
    let injectUsage = false;
    if (ex.stream && route.endpoint !== 'embeddings') {
      const so = parsed['stream_options'];
      const asks = typeof so === 'object' && so !== null && (so as Record<string, unknown>)['include_usage'] === true;
      if (!asks) {
        stripUsage = true;
        if (so === undefined && !rewrite) injectUsage = true;
        else {
          parsed['stream_options'] = { ...(typeof so === 'object' && so !== null ? so : {}), include_usage: true };
          rewrite = true;
        }
      }
    }
    if (rewrite) upstreamBody = Buffer.from(JSON.stringify(parsed));
    else if (injectUsage) upstreamBody = withIncludeUsage(body);

    // Idempotency: one upstream run per (client, key).
    const idemKey = req.headers['idempotency-key'];
    let complete: ((answer: StoredAnswer) => void) | null = null;
    if (idemKey !== undefined) {
      if (typeof idemKey !== 'string' || !IDEMPOTENCY_KEY.test(idemKey)) {
        return writeError(ex, wire(400, 'invalid_idempotency_key', 'Idempotency-Key must be 1–255 visible ASCII characters'));
      }
      const begun = this.idempotency.begin(ex.client, idemKey, fingerprintOf(path, body));
      if (begun.kind === 'conflict') {
        return writeError(ex, wire(409, 'idempotency_conflict', 'this Idempotency-Key was used with a different request', { headers: { 'x-should-retry': 'false' } }));
      }
      if (begun.kind === 'replay') return this.replay(ex, begun.answer, 0);
      if (begun.kind === 'wait') {
        const waitStart = this.mono();
        ex.abort = () => begun.cancel();
        const answer = await Promise.race([begun.answer, this.untilGone(ex)]);
        ex.abort = null;
        if (answer === null) return;
        return this.replay(ex, answer, this.mono() - waitStart);
      }
      complete = begun.complete;
    }

    let captured: StoredAnswer | null = null;
    try {
      const lease = await this.admit(ex, pool, cls, spec, req.headers);
      if (!lease) return;
      captured = await this.dispatch(ex, spec, pool, lease, upstreamBody, path, stripUsage, complete !== null);
    } finally {
      complete?.(
        captured ?? {
          status: ex.clientGone ? 499 : ex.status || 500,
          headers: { 'content-type': 'application/json' },
          body: Buffer.from(errorBody(wire(ex.status || 500, (ex.errorCode as never) ?? 'internal_error', 'the first request with this Idempotency-Key did not succeed'))),
          upstream: ex.upstream,
        },
      );
    }
  }

  /** A slot now, or a place in the queue (keep-alives and queue frames for streams), or a coded refusal (null). */
  private async admit(ex: Exchange, pool: PriorityPool, cls: TrafficClass, spec: UpstreamSpec, headers: IncomingMessage['headers']): Promise<Lease | null> {
    const st = this.stats.get(spec.key)![cls];
    const now = this.mono();
    const fast = pool.tryAcquire(cls);
    if (fast) {
      ex.queueMs = this.mono() - now;
      st.recordWait(this.clock.now(), ex.queueMs);
      return fast;
    }
    let ticket;
    try {
      ticket = pool.enqueue(cls, clientHoldLimitMs(headers['x-stainless-timeout']));
    } catch (err) {
      const e = err as AppError;
      if (e.code === ProxyErrorCode.QUEUE_FULL) {
        const depth = pool.queuedOf(cls);
        writeError(
          ex,
          wire(429, 'queue_full', `the ${cls} queue for ${spec.model} is full (${depth} waiting); retry later`, {
            retryAfterS: this.retryAfterS(pool, depth),
            headers: { 'x-queue-depth': String(depth) },
            extra: { queue_depth: depth },
          }),
        );
      } else writeError(ex, this.drainingError(spec.key, pool));
      return null;
    }
    const queueEvents = String(headers['x-queue-events'] ?? '').toLowerCase() === 'on';
    const timers: Disposable[] = [];
    let lastFrame = '';
    const frame = (force: boolean) => {
      const data = JSON.stringify({ position: ticket.position(), eta_ms: ticket.etaMs() });
      if (!force && data === lastFrame) return;
      lastFrame = data;
      this.sse(ex, `event: queue\ndata: ${data}\n\n`);
    };
    if (ex.stream) {
      if (queueEvents) {
        this.commitSse(ex, now);
        frame(true);
        timers.push(this.clock.setInterval(() => frame(false), Math.min(500, this.settings.keepAliveIntervalMs)));
      }
      timers.push(
        this.clock.setInterval(() => {
          this.commitSse(ex, now);
          this.sse(ex, ': keep-alive\n\n');
          if (queueEvents) frame(true);
        }, this.settings.keepAliveIntervalMs),
      );
    }
    ex.abort = () => ticket.cancel();
    let lease: Lease | null = null;
    try {
      lease = await ticket.lease;
    } catch (err) {
      const e = err as AppError;
      ex.queueMs = this.mono() - now;
      if (e.code === ProxyErrorCode.HOLD_TIMEOUT) {
        const depth = pool.queuedOf(cls);
        writeError(
          ex,
          wire(429, 'hold_timeout', `no ${cls} slot for ${spec.model} within ${String(e.details['holdBudgetMs'])} ms; retry later`, {
            retryAfterS: this.retryAfterS(pool, depth),
            headers: { 'x-queue-depth': String(depth) },
            extra: { queue_depth: depth },
          }),
        );
      } else if (e.code === ProxyErrorCode.DRAINING) writeError(ex, this.drainingError(spec.key, pool));
      // PROXY_CANCELLED: the client left; finish() records it.
      return null;
    } finally {
      ex.abort = null;
      for (const t of timers) void t.dispose();
    }
    ex.queueMs = this.mono() - now;
    st.recordWait(this.clock.now(), ex.queueMs);
    if (queueEvents && ex.committed) this.sse(ex, `event: queue\ndata: ${JSON.stringify({ position: 0, eta_ms: 0, queue_ms: Math.round(ex.queueMs) })}\n\n`);
    return lease;
  }

  private async dispatch(
    ex: Exchange,
    spec: UpstreamSpec,
    pool: PriorityPool,
    lease: Lease,
    body: Buffer,
    path: string,
    stripUsage: boolean,
    capture: boolean,
  ): Promise<StoredAnswer | null> {
    let served = false;
    const running = this.inFlightList(spec.key);
    const node = running.add(ex);
    try {
      if (ex.clientGone) return null;
      // The tunnel may have moved or dropped while the request waited.
      const avail = this.options.resolver.resolve(spec);
      if (!avail.ok) {
        writeError(ex, this.unavailableError(avail, pool));
        return null;
      }
      let apiKey: string | null = null;
      if (spec.apiKeyRef) {
        try {
          apiKey = await this.apiKeyFor(spec);
        } catch (err) {
          writeError(ex, wire(503, 'upstream_key_unavailable', (err as Error).message, { retryAfterS: 30 }));
          return null;
        }
      }
      if (ex.clientGone) return null;
      const result = await forward(ex, {
        dispatcher: this.dispatcherFor(avail.url),
        origin: avail.url,
        path,
        body,
        apiKey,
        headersTimeoutMs: this.settings.upstreamHeadersTimeoutMs,
        idleTimeoutMs: this.settings.upstreamIdleTimeoutMs,
        stripUsage,
        monotonic: this.mono,
        capture,
      });
      served = result.completed;
      if (result.usage) {
        ex.tokensIn = result.usage.promptTokens;
        ex.tokensOut = result.usage.completionTokens;
      }
      if (result.failure === 'drain') {
        writeError(ex, this.closing
          ? wire(503, 'proxy_shutting_down', 'the console is shutting down; the request was cut', { retryAfterS: 5 })
          : wire(503, 'upstream_draining', `${spec.key} is being drained; the request was cut`, { retryAfterS: 5 }));
      }
      return result.captured ? { ...result.captured, upstream: spec.key } : null;
    } finally {
      running.remove(node);
      lease.release(served);
    }
  }

  private replay(ex: Exchange, answer: StoredAnswer, waitedMs: number): void {
    ex.replayed = true;
    ex.queueMs = waitedMs;
    ex.status = answer.status;
    ex.upstream = answer.upstream ?? ex.upstream;
    ex.bytesOut = answer.body.length;
    if (answer.status >= 400) ex.errorCode = 'idempotent_replay';
    ex.res.writeHead(answer.status, baseHeaders(ex, { ...answer.headers, 'content-length': answer.body.length, 'idempotent-replayed': 'true' }));
    ex.res.end(answer.body);
  }

  private commitSse(ex: Exchange, since: number): void {
    if (ex.committed || ex.res.headersSent) return;
    ex.committed = true;
    ex.sse = true;
    ex.status = 200;
    ex.queueMs = this.mono() - since;
    ex.res.writeHead(200, baseHeaders(ex, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', 'x-upstream': ex.upstream ?? '' }));
    ex.res.flushHeaders();
  }

  private sse(ex: Exchange, text: string): void {
    if (!ex.committed || ex.res.destroyed || ex.res.writableEnded) return;
    ex.bytesOut += text.length;
    ex.res.write(text);
  }

  private sendJson(ex: Exchange, status: number, value: unknown): void {
    const text = JSON.stringify(value);
    ex.status = status;
    ex.bytesOut = Buffer.byteLength(text);
    ex.res.writeHead(status, baseHeaders(ex, { 'content-type': 'application/json', 'content-length': ex.bytesOut, 'cache-control': 'no-store' }));
    ex.res.end(text);
  }

  /**
   * DNS-rebinding defence: the Host must name loopback and, when it carries a port, ours (a page served
   * from another local port cannot reuse a rebound name). HTTP/1.1 requires a Host; HTTP/1.0 may omit it.
   */
  private checkHost(req: IncomingMessage): ReturnType<typeof wire> | null {
    const raw = req.headers.host;
    if (raw === undefined || raw === '') {
      if (req.httpVersion === '1.0') return null;
      return wire(400, 'missing_host', 'an HTTP/1.1 request must carry a Host header (127.0.0.1:PORT)', { headers: { connection: 'close' } });
    }
    const host = splitHostHeader(raw);
    if (!host || !LOOPBACK_HOSTS.has(host.name) || (host.port !== null && host.port !== this.port)) {
      return wire(403, 'forbidden_host', `the proxy answers only requests addressed to 127.0.0.1:${this.port} or localhost:${this.port}`);
    }
    return null;
  }

  private authenticate(header: string | undefined):
    | { ok: true; name: string; maxClass: TrafficClass }
    | { ok: false; error: ReturnType<typeof wire> } {
    const anon = this.settings.anonymousLoopback;
    if (header === undefined || header.trim() === '') {
      if (anon.enabled) return { ok: true, name: 'anonymous', maxClass: anon.class };
      return { ok: false, error: wire(401, 'missing_token', 'send a token from `gpu-console tokens create NAME` as "Authorization: Bearer <token>"', { headers: { 'x-should-retry': 'false' } }) };
    }
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) return { ok: false, error: wire(401, 'invalid_token', 'the Authorization header must be "Bearer <token>"', { headers: { 'x-should-retry': 'false' } }) };
    const check = this.options.tokens.check(m[1]!);
    if (check.ok) return { ok: true, name: check.name, maxClass: check.maxClass };
    if (check.reason === 'revoked') return { ok: false, error: wire(401, 'token_revoked', `the token "${check.name ?? ''}" was revoked`, { headers: { 'x-should-retry': 'false' } }) };
    return { ok: false, error: wire(401, 'invalid_token', 'unknown token', { headers: { 'x-should-retry': 'false' } }) };
  }

  private readBody(ex: Exchange, req: IncomingMessage): Promise<Buffer> {
    const limit = this.settings.maxBodyBytes;
    const declared = Number(req.headers['content-length'] ?? '0');
    if (declared > limit) {
      req.resume();
      return Promise.reject(new BodyError('too_large'));
    }
    return new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      const timer = this.clock.setTimeout(() => settle(new BodyError('timeout')), this.settings.bodyTimeoutMs);
      const settle = (err: BodyError | null) => {
        if (done) return;
        done = true;
        void timer.dispose();
        req.off('data', onData);
        req.off('end', onEnd);
        req.off('close', onClose);
        ex.abort = null;
        if (err) {
          if (err.kind !== 'client') req.resume();
          reject(err);
        } else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
      };
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        ex.bytesIn = size;
        if (size > limit) settle(new BodyError('too_large'));
        else chunks.push(chunk);
      };
      const onEnd = () => settle(null);
      const onClose = () => settle(new BodyError('client'));
      ex.abort = () => settle(new BodyError('client'));
      req.on('data', onData);
      req.on('end', onEnd);
      req.on('close', onClose);
    });
  }

  private untilGone(ex: Exchange): Promise<null> {
    return new Promise((resolve) => {
      if (ex.clientGone) resolve(null);
      ex.res.once('close', () => resolve(null));
    });
  }

  private async apiKeyFor(spec: UpstreamSpec): Promise<string | null> {
    if (!spec.apiKeyRef) return null;
    const cached = this.apiKeys.get(spec.apiKeyRef);
    if (cached !== undefined) return cached;
    const secrets = this.options.secrets;
    if (!secrets) throw new Error(`the API key for ${spec.key} (${spec.apiKeyRef}) cannot be read: no secret store in this mode`);
    const value = await secrets.get(spec.apiKeyRef);
    if (value === null) throw new Error(`the secret store holds no API key named ${spec.apiKeyRef} for ${spec.key}`);
    this.apiKeys.set(spec.apiKeyRef, value);
    return value;
  }

  private dispatcherFor(origin: string): Pool {
    let pool = this.dispatchers.get(origin);
    if (!pool) {
      pool = new Pool(origin, { connections: 256, pipelining: 1, keepAliveTimeout: 10_000 });
      this.dispatchers.set(origin, pool);
    }
    return pool;
  }

  private retryAfterS(pool: PriorityPool, depth: number): number {
    const service = pool.serviceMsEstimate ?? 1000;
    const s = (Math.ceil((depth + 1) / Math.max(1, pool.slots)) * service) / 1000;
    return Math.min(60, Math.max(1, Math.ceil(s)));
  }

  private drainingError(key: string, pool: PriorityPool) {
    return this.closing
      ? wire(503, 'proxy_shutting_down', 'the console is shutting down', { retryAfterS: 5 })
      : wire(503, 'upstream_draining', `${key} is being drained (restart or maintenance); retry later`, {
          retryAfterS: 5,
          headers: { 'x-queue-depth': String(pool.queuedTotal) },
        });
  }

  private unavailableError(avail: Extract<UpstreamAvailability, { ok: false }>, pool: PriorityPool) {
    return wire(503, avail.code, avail.message, {
      // model_sleeping: the measured wake time when the lifecycle capability knows one (else its default).
      retryAfterS: avail.retryAfterS,
      headers: { 'x-queue-depth': String(pool.queuedTotal) },
      extra: { queue_depth: pool.queuedTotal, ...(avail.extra ?? {}) },
    });
  }

  private queueView() {
    return {
      object: 'queue',
      upstreams: this.registry.upstreams.map((spec) => {
        const pool = this.pools.get(spec.key)!;
        return {
          upstream: spec.key,
          model: spec.model,
          slots: pool.slots,
          draining: pool.isDraining,
          service_ms_estimate: pool.serviceMsEstimate === null ? null : Math.round(pool.serviceMsEstimate),
          in_flight: perClass((c) => pool.inFlightOf(c)),
          queued: perClass((c) => pool.queuedOf(c)),
        };
      }),
    };
  }

  private inFlightList(key: string): LiveList<Exchange> {
    let list = this.inFlight.get(key);
    if (!list) {
      list = new LiveList();
      this.inFlight.set(key, list);
    }
    return list;
  }

  private requirePool(key: string): PriorityPool {
    const pool = this.pools.get(key);
    if (!pool) throw new AppError(ProxyErrorCode.UNKNOWN_UPSTREAM, `no upstream ${key}`, { details: { upstream: key } });
    return pool;
  }

  private policy(): PoolPolicy {
    return { holdBudgetMs: { ...this.settings.holdBudgetMs }, queueBound: { ...this.settings.queueBound } };
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
    }
  }
}

/** Host header → name and port (port null when absent); null when it is not `name[:port]`. */
export function splitHostHeader(host: string): { name: string; port: number | null } | null {
  const h = host.toLowerCase();
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(h);
  if (!m) return null;
  return { name: m[1]!, port: m[2] === undefined ? null : Number(m[2]) };
}

/** openai-node sends its timeout (seconds) as X-Stainless-Timeout: hold at most until a second before it. */
function clientHoldLimitMs(value: string | string[] | undefined): number | undefined {
  if (typeof value !== 'string') return undefined;
  const s = Number(value);
  if (!Number.isFinite(s) || s <= 0) return undefined;
  return Math.max(0, s * 1000 - 1000);
}
