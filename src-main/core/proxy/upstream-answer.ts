// What the client is told about an upstream's answer, apart from relaying it:
// the head its answer carries (passed headers, a calibrated Retry-After), and
// the upstream's failures translated into the proxy's coded errors (a tunnel's
// own refusal, an error after our SSE head went out, a timeout or a cut).
import type { IncomingHttpHeaders } from 'node:http';
import { baseHeaders, wire, type Exchange } from './exchange.js';
import type { WireError } from './errors.js';

const PASS_HEADERS = ['content-type', 'content-length', 'cache-control'];
const RETRYABLE = new Set([429, 502, 503, 504]);

export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export interface AnswerHead {
  /** What the client's answer carries. */
  headers: Record<string, string | number>;
  /** The headers an idempotent replay of it carries. */
  captureHeaders: Record<string, string>;
  retryAfterS: number | null;
}

/**
 * The head of an answer the client has not had yet: status-independent base headers, the passed
 * ones, and Retry-After in whole seconds (a date becomes seconds, a bogus value is dropped) with
 * retry-after-ms; an upstream refusal without one gets one: its 429 from our queue, a 503 5 s, a 502/504 1 s.
 */
export function answerHead(ex: Exchange, statusCode: number, h: IncomingHttpHeaders, contentType: string, isSse: boolean, rateLimitRetryAfterS?: () => number): AnswerHead {
  const outHeaders = baseHeaders(ex);
  for (const name of PASS_HEADERS) {
    const v = header(h, name);
    if (v !== undefined && !(isSse && name === 'content-length')) outHeaders[name] = v;
  }
  let retryS = parseRetryAfterS(header(h, 'retry-after'));
  if (retryS === null && RETRYABLE.has(statusCode)) retryS = statusCode === 429 ? (rateLimitRetryAfterS?.() ?? 1) : statusCode === 503 ? 5 : 1;
  const captureHeaders: Record<string, string> = { 'content-type': contentType || 'application/json' };
  if (retryS !== null) {
    outHeaders['retry-after'] = captureHeaders['retry-after'] = String(retryS);
    outHeaders['retry-after-ms'] = captureHeaders['retry-after-ms'] = String(retryS * 1000);
  }
  if (isSse) {
    outHeaders['cache-control'] = 'no-cache';
    outHeaders['x-accel-buffering'] = 'no';
  }
  return { headers: outHeaders, captureHeaders, retryAfterS: retryS };
}

/** Retry-After as whole seconds ≥ 1: delta-seconds, or an HTTP-date from now; null when absent or bogus. */
export function parseRetryAfterS(value: string | undefined, nowMs = Date.now()): number | null {
  if (value === undefined) return null;
  const v = value.trim();
  if (/^\d{1,7}$/.test(v)) return Math.max(1, Number(v));
  if (!/[a-z]/i.test(v)) return null;
  const at = Date.parse(v);
  if (!Number.isFinite(at)) return null;
  return Math.min(86_400, Math.max(1, Math.ceil((at - nowMs) / 1000)));
}

/** The tunnel's own refusal (its JSON names an SSH_* code) as the proxy's 503 tunnel_down. */
export function tunnelError(t: { status: number; retryAfterS: number; code: string }, body: string): WireError {
  let message = `the tunnel answered ${t.status} (${t.code})`;
  try {
    const m = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
    if (typeof m === 'string') message = `${t.code}: ${m}`;
  } catch {
    // keep the generic message
  }
  return wire(503, 'tunnel_down', message, { retryAfterS: t.retryAfterS, extra: { tunnel_error: t.code } });
}

/** An upstream's non-200 answer after our SSE head went out: its own message, as an error frame. */
export function errorFrame(status: number, body: string): WireError {
  let message = `the upstream answered ${status}`;
  try {
    const parsed = JSON.parse(body) as { error?: { message?: string } | string; message?: string };
    const m = typeof parsed.error === 'object' ? parsed.error?.message : (parsed.message ?? parsed.error);
    if (typeof m === 'string') message = m;
  } catch {
    // not JSON: keep the generic message
  }
  return wire(status >= 400 ? status : 502, status === 429 ? 'queue_full' : 'upstream_unreachable', message);
}

/** Which of the request's upstream timeouts fired. */
export type TimeoutKind = 'headers' | 'idle' | 'total';

/** The config field each timeout came from (`proxy.models.qwen.timeouts.idleMs`, `proxy.upstreamIdleTimeoutMs`). */
export interface TimeoutFrom {
  headers: string;
  idle: string;
  total: string;
}

/** undici's timeout codes as the request's timeouts; null for any other failure. */
export function timeoutKind(err: Error): TimeoutKind | null {
  const code = (err as { code?: string }).code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return 'headers';
  if (code === 'UND_ERR_BODY_TIMEOUT') return 'idle';
  return null;
}

const TIMEOUT_WORDS: Record<TimeoutKind, string> = {
  headers: 'sent no response head within',
  idle: 'sent nothing for',
  total: 'did not finish within',
};

/** 504 upstream_timeout naming the timeout that fired, its value and where it is set. */
export function timeoutError(kind: TimeoutKind, t: { headersTimeoutMs: number; idleTimeoutMs: number; totalTimeoutMs?: number | null; timeoutFrom?: TimeoutFrom }): WireError {
  const ms = kind === 'headers' ? t.headersTimeoutMs : kind === 'idle' ? t.idleTimeoutMs : (t.totalTimeoutMs ?? 0);
  const from = t.timeoutFrom?.[kind] ?? `${kind} timeout`;
  return wire(504, 'upstream_timeout', `the upstream ${TIMEOUT_WORDS[kind]} ${ms} ms (${kind} timeout, ${from})`, {
    retryAfterS: 1,
    extra: { timeout: kind, timeout_ms: ms },
  });
}

/** The request's trace, as the upstream gets it: X-Request-Id always (the client's or ours), traceparent and tracestate as the client sent them. */
export function traceHeaders(ex: Exchange, headers: Record<string, string>): void {
  headers['x-request-id'] = ex.traceId ?? ex.id;
  if (ex.traceparent !== null) headers['traceparent'] = ex.traceparent;
  if (ex.tracestate !== null) headers['tracestate'] = ex.tracestate;
}
