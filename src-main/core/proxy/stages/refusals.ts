// The refusals more than one stage gives: an upstream that is draining,
// restarting or down, and the proxy shutting down — each with Retry-After
// calibrated to its cause (and the queue depth where a client can use it).
import { wire } from '../exchange.js';
import type { WireError } from '../errors.js';
import type { PriorityPool } from '../pool.js';
import type { Unavailable } from '../resolver.js';

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

/**
 * 503 while an upstream drains: model_restarting (Retry-After: the drain deadline plus the restart's
 * expected time), else upstream_draining (Retry-After: the drain deadline); proxy_shutting_down once close() began.
 */
export function drainingError(key: string, pool: PriorityPool, closing: boolean, now: number): WireError {
  if (closing) return wire(503, 'proxy_shutting_down', 'the console is shutting down', { retryAfterS: 5 });
  const depth = { 'x-queue-depth': String(pool.queuedTotal) };
  const d = pool.drainInfo;
  const untilDeadlineS = d ? Math.max(0, d.deadlineAt - now) / 1000 : 5;
  if (d?.purpose === 'restart') {
    const s = untilDeadlineS + (d.expectedActionMs ?? 0) / 1000;
    return wire(503, 'model_restarting', `${key} is restarting (expected back in about ${Math.ceil(s)} s); retry later`, {
      retryAfterS: Math.max(1, Math.ceil(s)),
      headers: depth,
      extra: { queue_depth: pool.queuedTotal, expected_back_ms: Math.round(s * 1000) },
    });
  }
  const why = d?.purpose === 'sleep' || d?.purpose === 'offload' ? `before it is put to sleep (${d.purpose})` : '(restart or maintenance)';
  return wire(503, 'upstream_draining', `${key} is being drained ${why}; retry later`, {
    // Before the deadline: the deadline; past it the drain waits for what follows it, of unknown length.
    retryAfterS: untilDeadlineS > 0 ? Math.max(1, Math.ceil(untilDeadlineS)) : 5,
    headers: depth,
    extra: { queue_depth: pool.queuedTotal, drain_deadline_ms: Math.round(untilDeadlineS * 1000) },
  });
}

/**
 * 503 as the resolver says why (tunnel down, asleep, a person must act). `held`: the request
 * waited its hold budget for a wake that did not finish — model_waking.
 */
export function unavailableError(avail: Unavailable, pool: PriorityPool, held = false): WireError {
  const waking = avail.code === 'model_sleeping' && avail.recovery !== null;
  const code = held && waking ? 'model_waking' : avail.code;
  const message = held && waking ? `${avail.message}; it is being woken and was not awake within this request's hold budget` : avail.message;
  return wire(503, code, message, {
    retryAfterS: avail.retryAfterS,
    headers: { 'x-queue-depth': String(pool.queuedTotal), ...(avail.actionRequired ? { 'x-action-required': 'true' } : {}) },
    extra: {
      queue_depth: pool.queuedTotal,
      ...(avail.recovery ? { reason: avail.recovery.reason, expected_back_ms: Math.round(avail.recovery.expectedMs) } : {}),
      ...(avail.actionRequired ? { action_required: true } : {}),
      ...(avail.extra ?? {}),
    },
  });
}
