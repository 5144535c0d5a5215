// The shape of one stage of the request path (endpoint → host guard → auth and
// class → body → resolve upstream → idempotency → admit → dispatch): it records
// what it learns on the Exchange and returns either the value the next stage
// needs or why the request stops — a coded WireError for the server to answer
// with, or null when nothing is left to answer (the client left, or the stage
// answered itself, as an idempotent replay does). Stages never throw for an
// expected refusal; a throw is a bug and becomes a 500 internal_error.
import type { Clock } from '../../base/index.js';
import type { ProxyConfig } from '../../config/index.js';
import type { WireError } from '../errors.js';
import { writeError, type Exchange } from '../exchange.js';

export type StageResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: WireError | null };

export function ok<T>(value: T): StageResult<T> {
  return { ok: true, value };
}

export function fail(error: WireError): StageResult<never> {
  return { ok: false, error };
}

/** Go on with nothing to carry (one shared object: no allocation on the hot path). */
export const PASS: StageResult<void> = { ok: true, value: undefined };

/** Stop with nothing to answer: the client left, or the stage answered already. */
export const DONE: StageResult<never> = { ok: false, error: null };

/** Answers a stopped stage's error, when it has one. */
export function stop(ex: Exchange, error: WireError | null): void {
  if (error) writeError(ex, error);
}

/** What the stages read from the server that runs them: one object per server, kept current by it. */
export interface StageEnv {
  readonly clock: Clock;
  /** Monotonic milliseconds. */
  readonly mono: () => number;
  /** Replaced on a config reload. */
  settings: ProxyConfig;
  /** Set once, when close() begins. */
  closing: boolean;
}
