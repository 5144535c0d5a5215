// The answers the proxy writes itself, besides errors (exchange.ts writes
// those): JSON and metrics text, an idempotent replay, and the SSE stream a
// waiting request commits to before its upstream answers.
import { baseHeaders, type Exchange } from '../exchange.js';
import type { StoredAnswer } from '../idempotency.js';

export function sendJson(ex: Exchange, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  ex.status = status;
  ex.bytesOut = Buffer.byteLength(text);
  ex.res.writeHead(status, baseHeaders(ex, { 'content-type': 'application/json', 'content-length': ex.bytesOut, 'cache-control': 'no-store' }));
  ex.res.end(text);
}

/** Prometheus text exposition. */
export function sendMetrics(ex: Exchange, text: string): void {
  ex.status = 200;
  ex.bytesOut = Buffer.byteLength(text);
  ex.res.writeHead(200, baseHeaders(ex, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': ex.bytesOut }));
  ex.res.end(text);
}

/** The stored answer of the first request with this Idempotency-Key, marked as a replay. */
export function replay(ex: Exchange, answer: StoredAnswer, waitedMs: number): void {
  ex.replayed = true;
  ex.queueMs = waitedMs;
  ex.status = answer.status;
  ex.upstream = answer.upstream ?? ex.upstream;
  ex.bytesOut = answer.body.length;
  if (answer.status >= 400) ex.errorCode = 'idempotent_replay';
  ex.res.writeHead(answer.status, baseHeaders(ex, { ...answer.headers, 'content-length': answer.body.length, 'idempotent-replayed': 'true' }));
  ex.res.end(answer.body);
}

/** Sends the SSE headers now (once), so keep-alives and queue frames can flow while the request waits. */
export function commitSse(ex: Exchange, since: number, mono: () => number): void {
  if (ex.committed || ex.res.headersSent) return;
  ex.committed = true;
  ex.sse = true;
  ex.status = 200;
  ex.queueMs = mono() - since;
  // X-Upstream only once a replica is chosen (baseHeaders adds it); a stream held for a recovery names it in its queue frames.
  ex.res.writeHead(200, baseHeaders(ex, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' }));
  ex.res.flushHeaders();
}

/** One SSE frame or comment on a committed stream (dropped when the stream is not committed or is gone). */
export function sendSse(ex: Exchange, text: string): void {
  if (!ex.committed || ex.res.destroyed || ex.res.writableEnded) return;
  ex.bytesOut += text.length;
  ex.res.write(text);
}
