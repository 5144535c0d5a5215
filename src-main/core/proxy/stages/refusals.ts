// The refusals more than one stage gives: an upstream that is draining or
// down, and the proxy shutting down — each with Retry-After (and the queue
// depth where a client can use it).
import { wire } from '../exchange.js';
import type { WireError } from '../errors.js';
import type { PriorityPool } from '../pool.js';
import type { UpstreamAvailability } from '../resolver.js';

/** Seconds until a slot is likely free for one more waiter: whole service rounds, 1–60. */
export function retryAfterS(pool: PriorityPool, depth: number): number {
  const service = pool.serviceMsEstimate ?? 1000;
  const s = (Math.ceil((depth + 1) / Math.max(1, pool.slots)) * service) / 1000;
  return Math.min(60, Math.max(1, Math.ceil(s)));
}

/** A new request while close() runs: refused before anything is read. */
export function shuttingDownError(): WireError {
  return wire(503, 'proxy_shutting_down', 'the console is shutting down', { retryAfterS: 5, headers: { connection: 'close' } });
}

/** 503 upstream_draining (or proxy_shutting_down once close() began). */
export function drainingError(key: string, pool: PriorityPool, closing: boolean): WireError {
  return closing
    ? wire(503, 'proxy_shutting_down', 'the console is shutting down', { retryAfterS: 5 })
    : wire(503, 'upstream_draining', `${key} is being drained (restart or maintenance); retry later`, {
        retryAfterS: 5,
        headers: { 'x-queue-depth': String(pool.queuedTotal) },
      });
}

/** 503 tunnel_down or model_sleeping, as the resolver says. */
export function unavailableError(avail: Extract<UpstreamAvailability, { ok: false }>, pool: PriorityPool): WireError {
  return wire(503, avail.code, avail.message, {
    // model_sleeping: the measured wake time when the lifecycle capability knows one (else its default).
    retryAfterS: avail.retryAfterS,
    headers: { 'x-queue-depth': String(pool.queuedTotal) },
    extra: { queue_depth: pool.queuedTotal, ...(avail.extra ?? {}) },
  });
}
