import { AppError, BaseErrorCode, type ErrorCode } from './errors.js';
import type { Logger } from './log.js';

/** Deliberate fire-and-forget: the promise runs on, and a rejection is logged, never lost. */
export function fireAndForget(promise: Promise<unknown>, logger: Logger, what: string): void {
  promise.catch((err: unknown) => {
    logger.error(`${what} failed`, { error: err instanceof Error ? err.message : String(err) });
  });
}

/** Resolves with `promise` or rejects with a coded timeout error after `timeoutMs`. */
export async function withDeadline<T>(
  promise: Promise<T>,
  timeoutMs: number,
  code: ErrorCode,
  message: string,
  onTimeout?: () => void,
): Promise<T> {
  let handle: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    handle = setTimeout(() => {
      onTimeout?.();
      reject(new AppError(code, message, { retryable: true, details: { timeoutMs } }));
    }, timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(handle);
  }
}

/** Rejects with an abort error if `signal` is already aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AppError(BaseErrorCode.CANCELLED, 'the operation was cancelled');
}
