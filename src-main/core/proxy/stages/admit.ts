// Stage: admit. A slot in the upstream's priority pool now, or a place in the
// queue of the request's class — while it waits, a stream gets keep-alive
// comments (and, with X-Queue-Events: on, queue frames with its position and
// ETA) so that neither the client nor anything between gives up on it.
import type { IncomingHttpHeaders } from 'node:http';
import type { AppError, Disposable } from '../../base/index.js';
import type { TrafficClass } from '../classes.js';
import { ProxyErrorCode } from '../errors.js';
import { wire, type Exchange } from '../exchange.js';
import type { Lease, QueueTicket } from '../pool.js';
import type { ClassStats } from '../stats.js';
import { drainingError, retryAfterS } from './refusals.js';
import { commitSse, sendSse } from './respond.js';
import { DONE, fail, ok, type StageEnv, type StageResult } from './stage.js';
import { holdLeftMs } from './hold-limit.js';
import type { Target } from './upstream.js';

/** A free slot now (the usual case), without a promise; null when the request must queue (admit). */
export function admitNow(ex: Exchange, pool: Target['pool'], cls: TrafficClass, st: ClassStats, env: StageEnv): StageResult<Lease> | null {
  const now = env.mono();
  const fast = pool.tryAcquire(cls);
  if (!fast) return null;
  ex.queueMs = env.mono() - now;
  st.recordWait(env.clock.now(), ex.queueMs);
  return ok(fast);
}

/** Records the queue time on `ex` and in `st`; 429 queue_full or hold_timeout, 503 upstream_draining; DONE when the client left. */
export async function admit(
  ex: Exchange,
  { spec, pool }: Target,
  cls: TrafficClass,
  headers: IncomingHttpHeaders,
  st: ClassStats,
  env: StageEnv,
): Promise<StageResult<Lease>> {
  const fast = admitNow(ex, pool, cls, st, env);
  if (fast) return fast;
  const { clock, mono, settings } = env;
  const now = mono();
  let ticket: QueueTicket;
  try {
    // What is left of the hold budget after any time held for a recovery (reconnect, wake, restart).
    ticket = pool.enqueue(cls, holdLeftMs(settings.holdBudgetMs[cls], headers, ex.heldMs));
  } catch (err) {
    if ((err as AppError).code !== ProxyErrorCode.QUEUE_FULL) return fail(drainingError(spec.key, pool, env.closing, env.clock.now()));
    const depth = pool.queuedOf(cls);
    return fail(
      wire(429, 'queue_full', `the ${cls} queue for ${spec.model} is full (${depth} waiting); retry later`, {
        retryAfterS: retryAfterS(pool, depth),
        headers: { 'x-queue-depth': String(depth) },
        extra: { queue_depth: depth },
      }),
    );
  }
  const queueEvents = String(headers['x-queue-events'] ?? '').toLowerCase() === 'on';
  // Each frame names the request's trace, so a client following several streams can tell them apart.
  const trace = ex.traceId ?? ex.id;
  const timers: Disposable[] = [];
  let lastFrame = '';
  const frame = (force: boolean) => {
    const data = JSON.stringify({ position: ticket.position(), eta_ms: ticket.etaMs(), reason: 'busy', upstream: spec.key, request_id: trace });
    if (!force && data === lastFrame) return;
    lastFrame = data;
    sendSse(ex, `event: queue\ndata: ${data}\n\n`);
  };
  if (ex.stream) {
    if (queueEvents) {
      commitSse(ex, now, mono);
      frame(true);
      timers.push(clock.setInterval(() => frame(false), Math.min(500, settings.keepAliveIntervalMs)));
    }
    timers.push(
      clock.setInterval(() => {
        commitSse(ex, now, mono);
        sendSse(ex, ': keep-alive\n\n');
        if (queueEvents) frame(true);
      }, settings.keepAliveIntervalMs),
    );
  }
  ex.abort = () => ticket.cancel();
  let lease: Lease;
  try {
    lease = await ticket.lease;
  } catch (err) {
    const e = err as AppError;
    ex.queueMs = mono() - now;
    if (e.code === ProxyErrorCode.HOLD_TIMEOUT) {
      const depth = pool.queuedOf(cls);
      return fail(
        wire(429, 'hold_timeout', `no ${cls} slot for ${spec.model} within ${String(e.details['holdBudgetMs'])} ms; retry later`, {
          retryAfterS: retryAfterS(pool, depth),
          headers: { 'x-queue-depth': String(depth) },
          extra: { queue_depth: depth },
        }),
      );
    }
    if (e.code === ProxyErrorCode.DRAINING) return fail(drainingError(spec.key, pool, env.closing, env.clock.now()));
    // PROXY_CANCELLED: the client left; the server's finish() records it.
    return DONE;
  } finally {
    ex.abort = null;
    for (const t of timers) void t.dispose();
  }
  ex.queueMs = mono() - now;
  st.recordWait(clock.now(), ex.queueMs);
  if (queueEvents && ex.committed) sendSse(ex, `event: queue\ndata: ${JSON.stringify({ position: 0, eta_ms: 0, queue_ms: Math.round(ex.queueMs), upstream: spec.key, request_id: trace })}\n\n`);
  return ok(lease);
}
