// Cancellation is silent (STYLE "Errors"): a caller that gave up is not shown
// an error, logged as a failure or counted. One test for it, whoever cancelled.
import type { ErrorCode } from './errors.js';
import { AppError } from './errors.js';

/**
 * Every code that means "the caller cancelled". Listed by value because base
 * imports no capability; `satisfies` keeps each one a declared code, and
 * test/unit/core/base/cancellation.test.ts fails when an errors.ts gains a
 * `*_CANCELLED` code this list lacks.
 */
export const CANCELLATION_CODES = [
  'CANCELLED', // base: throwIfAborted, the PDF printers
  'SSH_CANCELLED', // an exec or a session the caller (or a disconnect) ended
  'PROXY_CANCELLED', // a client left the proxy's queue
  'REPORT_CANCELLED', // an export or build stopped between its steps
  'BRIDGE_CANCELLED', // the renderer or CLI gave up the call
  'BRIDGE_CLIENT_GONE', // the web client closed its connection before the answer
  'UPSTREAM_CANCELLED', // the caller's signal ended a call to a model server
] as const satisfies readonly ErrorCode[];
export type CancellationCode = (typeof CANCELLATION_CODES)[number];

const CODES: ReadonlySet<string> = new Set(CANCELLATION_CODES);

/**
 * Whether `err` says the work was cancelled rather than failed: an AppError
 * with a cancellation code, or an abort from the platform (`AbortError`: an
 * aborted fetch, undici request, timers/promises wait, fs call). A deadline
 * (`TimeoutError`, `*_TIMEOUT`) is a failure, not a cancellation.
 */
export function isCancellation(err: unknown): boolean {
  if (err instanceof AppError) return CODES.has(err.code);
  return err instanceof Error && err.name === 'AbortError';
}
