// Stage: idempotency. One upstream run per (client, Idempotency-Key): the
// first request goes on and completes the entry with its answer; a repeat
// while it runs waits for that answer, a later one gets it replayed, one with
// a different body is refused.
import { wire, type Exchange } from '../exchange.js';
import { errorBody } from '../errors.js';
import { fingerprintOf, type IdempotencyCache, type StoredAnswer } from '../idempotency.js';
import { replay } from './respond.js';
import { DONE, fail, ok, type StageResult } from './stage.js';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** Completes the entry with this request's answer, or null when it was relayed but not captured (called exactly once). */
export type CompleteIdempotent = (answer: StoredAnswer | null) => void;

const GONE = Symbol('client gone');

/**
 * For a request that carries an Idempotency-Key: go on (the first), or DONE once a replay was
 * answered or the waiting client left; 400 invalid_idempotency_key, 409 idempotency_conflict.
 */
export async function beginIdempotent(
  ex: Exchange,
  key: string | string[],
  cache: IdempotencyCache,
  path: string,
  raw: Buffer,
  mono: () => number,
): Promise<StageResult<CompleteIdempotent>> {
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key)) {
    return fail(wire(400, 'invalid_idempotency_key', 'Idempotency-Key must be 1–255 visible ASCII characters'));
  }
  const fingerprint = fingerprintOf(path, raw);
  const waitStart = mono();
  let gone: Promise<typeof GONE> | null = null;
  // Goes round again only when the first's answer was relayed but not kept (too large): this one runs it then.
  for (;;) {
    const begun = cache.begin(ex.clientId, key, fingerprint);
    if (begun.kind === 'conflict') {
      return fail(wire(409, 'idempotency_conflict', 'this Idempotency-Key was used with a different request', { headers: { 'x-should-retry': 'false' } }));
    }
    if (begun.kind === 'replay') {
      replay(ex, begun.answer, 0);
      return DONE;
    }
    if (begun.kind === 'first') return ok(begun.complete);
    ex.abort = () => begun.cancel();
    const answer = await Promise.race([begun.answer, (gone ??= untilGone(ex))]);
    ex.abort = null;
    if (answer === GONE) return DONE;
    if (answer !== null) {
      replay(ex, answer, mono() - waitStart);
      return DONE;
    }
  }
}

/** What waiting repeats get when the first request ended without an answer worth replaying. */
export function failedAnswer(ex: Exchange): StoredAnswer {
  return {
    status: ex.clientGone ? 499 : ex.status || 500,
    headers: {
      'content-type': 'application/json',
      // A twin that waited on a refused request is refused too, and must know when to come back.
      ...(ex.retryAfterS !== null ? { 'retry-after': String(ex.retryAfterS), 'retry-after-ms': String(ex.retryAfterS * 1000) } : {}),
    },
    body: Buffer.from(errorBody(wire(ex.status || 500, (ex.errorCode as never) ?? 'internal_error', 'the first request with this Idempotency-Key did not succeed'))),
    upstream: ex.upstream,
  };
}

function untilGone(ex: Exchange): Promise<typeof GONE> {
  return new Promise((resolve) => {
    if (ex.clientGone) resolve(GONE);
    ex.res.once('close', () => resolve(GONE));
  });
}
