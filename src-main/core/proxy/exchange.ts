// One request through the proxy, from arrival to its single answer: the
// figures for its `requests` row, and the helpers that answer it — a JSON
// error before headers are out, or an SSE error frame once a stream has begun.
import { randomFillSync } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { TrafficClass } from './classes.js';
import { errorBody, type WireCode, type WireError } from './errors.js';
import type { RequestRecord } from './request-log.js';

export type Endpoint = 'chat' | 'completions' | 'embeddings' | 'models' | 'queue' | 'health' | 'metrics' | 'other';

export const ENDPOINT_PATH: Record<Endpoint, string> = {
  chat: '/v1/chat/completions',
  completions: '/v1/completions',
  embeddings: '/v1/embeddings',
  models: '/v1/models',
  queue: '/v1/queue',
  health: '/health',
  metrics: '/metrics',
  other: '(other)',
};

// Request ids: 'req_' + 24 hex digits — the arrival time (ms, 12 digits), a
// per-process counter (4) and random bits (8). Time first, so that rows reach
// the UNIQUE index on requests.id in order: random ids made every insert touch
// a random page of that index, which grew slower with the table (8 → 20 µs a
// row at 100k rows, against a flat 5 µs). Random bytes come from one pooled
// buffer instead of a crypto call per request.
const RANDOM_BYTES = 4;
const idPool = Buffer.alloc(RANDOM_BYTES * 1024);
let idOffset = idPool.length;
let idCounter = 0;

export function newRequestId(atMs: number): string {
  if (idOffset + RANDOM_BYTES > idPool.length) {
    randomFillSync(idPool);
    idOffset = 0;
  }
  const random = idPool.readUInt32BE(idOffset);
  idOffset += RANDOM_BYTES;
  idCounter = (idCounter + 1) & 0xffff;
  const time = Math.max(0, Math.floor(atMs)).toString(16).padStart(12, '0').slice(-12);
  return 'req_' + time + idCounter.toString(16).padStart(4, '0') + random.toString(16).padStart(8, '0');
}

export class Exchange {
  readonly id: string;
  client = 'unauthenticated';
  /** Who the client is for per-client state (the token's id: a name can be re-issued after a revocation). */
  clientId = 'unauthenticated';
  cls: TrafficClass | null = null;
  endpoint: Endpoint = 'other';
  model: string | null = null;
  upstream: string | null = null;
  stream = false;
  status = 0;
  errorCode: string | null = null;
  queueMs = 0;
  ttftMs: number | null = null;
  tokensIn: number | null = null;
  tokensOut: number | null = null;
  bytesIn = 0;
  bytesOut = 0;
  replayed = false;
  /** Where the chosen replica is reachable (set with `upstream`). */
  url: string | null = null;
  /** Time held while its upstream recovered (reconnect, wake, restart), ms; and why. */
  heldMs = 0;
  holdReason: string | null = null;
  /** Replicas tried before the one that answered (failures before the first byte). */
  failovers = 0;
  /** The Retry-After (s) its answer carried, kept for an idempotent twin's replay of a failed answer. */
  retryAfterS: number | null = null;
  /** Monotonic ms when the request was sent to its upstream (its latest attempt); -1 before. */
  sentAt = -1;
  /** Monotonic ms of the last byte from the upstream (one clock read per chunk); -1 before the first. */
  lastByteAt = -1;
  /** SSE headers went out before the upstream answered (keep-alives while queued). */
  committed = false;
  /** The answer on the wire is an SSE stream (so late errors go out as frames). */
  sse = false;
  finished = false;
  /** Set when the client went away before its answer was complete. */
  clientGone = false;
  /** The client's trace: its X-Request-Id, else its traceparent's trace-id; null: ours (`id`) is the trace. */
  traceId: string | null = null;
  /** The client's W3C traceparent (and tracestate), forwarded upstream and returned as sent. */
  traceparent: string | null = null;
  tracestate: string | null = null;
  /** What proxy.models did to max_tokens (`default 512`, `clamped 39868->4096`: ASCII, as header values must be), for x-gpu-console-max-tokens. */
  maxTokensNote: string | null = null;
  /** Cancels whatever the request waits on (queue, idempotent twin, upstream). */
  abort: ((why: 'client' | 'drain') => void) | null = null;
  /** Sees the request body go by when captured requests are on (capture-tap.ts); null otherwise. */
  capture: { request(chunk: Buffer): void } | null = null;

  constructor(
    readonly res: ServerResponse,
    /** Monotonic ms at arrival. */
    readonly t0: number,
    /** Epoch ms at arrival (for the row). */
    readonly ts: number,
  ) {
    this.id = newRequestId(ts);
  }

  record(now: number): RequestRecord {
    return {
      id: this.id,
      ts: this.ts,
      client: this.client,
      class: this.cls,
      endpoint: ENDPOINT_PATH[this.endpoint],
      model: this.model,
      upstream: this.upstream,
      stream: this.stream,
      status: this.status,
      errorCode: this.errorCode,
      queueMs: round1(this.queueMs),
      ttftMs: this.ttftMs === null ? null : round1(this.ttftMs),
      totalMs: round1(now - this.t0),
      tokensIn: this.tokensIn,
      tokensOut: this.tokensOut,
      bytesIn: this.bytesIn,
      bytesOut: this.bytesOut,
      replayed: this.replayed,
      traceId: this.traceId,
    };
  }
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

/** Headers every answer carries. */
export function baseHeaders(ex: Exchange, extra: Record<string, string | number> = {}): Record<string, string | number> {
  // x-request-id is the trace the client follows (its own when it sent one); ours names the row.
  const h: Record<string, string | number> = { 'x-request-id': ex.traceId ?? ex.id, 'x-gpu-console-request-id': ex.id, 'x-queue-ms': Math.round(ex.queueMs), ...extra };
  if (ex.traceparent !== null) h['traceparent'] = ex.traceparent;
  if (ex.maxTokensNote !== null) h['x-gpu-console-max-tokens'] = ex.maxTokensNote;
  if (ex.upstream !== null && h['x-upstream'] === undefined) h['x-upstream'] = ex.upstream;
  if (ex.holdReason !== null) {
    h['x-hold-ms'] = Math.round(ex.heldMs);
    h['x-hold-reason'] = ex.holdReason;
  }
  return h;
}

/**
 * Answers `ex` with an OpenAI-style error. Before headers: the status, a JSON
 * body, Retry-After and retry-after-ms when given. After an SSE stream began:
 * a `data: {"error":…}` frame (openai-node raises it as an APIError), then the end.
 */
export function writeError(ex: Exchange, e: WireError): void {
  const { res } = ex;
  ex.status = e.status;
  ex.errorCode = e.code;
  if (res.destroyed || res.writableEnded) return;
  const body = errorBody(e);
  if (!res.headersSent) {
    const headers: Record<string, string | number> = baseHeaders(ex, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
      ...(e.headers ?? {}),
    });
    if (e.retryAfterS !== undefined) {
      // At least a second: "0" reads as "hammer me" to clients that back off by it.
      const s = Math.max(1, Math.ceil(e.retryAfterS));
      headers['retry-after'] = String(s);
      headers['retry-after-ms'] = String(Math.max(1000, Math.round(e.retryAfterS * 1000)));
      ex.retryAfterS = s;
    }
    res.writeHead(e.status, headers);
    res.end(body);
    ex.bytesOut += Buffer.byteLength(body);
    return;
  }
  if (!ex.sse) {
    // A JSON body is half out: cutting the connection is the only honest signal left.
    res.destroy();
    return;
  }
  // The status line went out as 200 with the stream: Retry-After travels in the frame (a held stream refused).
  const frameBody = e.retryAfterS === undefined ? body : errorBody({ ...e, extra: { ...(e.extra ?? {}), retry_after_s: Math.max(1, Math.ceil(e.retryAfterS)) } });
  const frame = `data: ${frameBody}\n\n`;
  ex.bytesOut += Buffer.byteLength(frame);
  res.end(frame);
}

export function wire(status: number, code: WireCode, message: string, more: Partial<WireError> = {}): WireError {
  return { status, code, message, ...more };
}
