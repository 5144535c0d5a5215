// One error type for the whole core: a stable code callers match on, a message
// an operator can act on, whether retrying may help, and details that are safe
// to show (never secrets). The original library error is kept as `cause` for logs.

export interface AppErrorOptions {
  retryable?: boolean;
  details?: Record<string, unknown>;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly details: Record<string, unknown>;

  constructor(code: string, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.details = options.details ?? {};
  }

  toJSON(): { code: string; message: string; retryable: boolean; details: Record<string, unknown> } {
    return { code: this.code, message: this.message, retryable: this.retryable, details: this.details };
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

/** Wraps anything thrown into an AppError, keeping an existing code. */
export function toAppError(value: unknown, fallbackCode = 'INTERNAL_ERROR'): AppError {
  if (value instanceof AppError) return value;
  const message = value instanceof Error ? value.message : String(value);
  return new AppError(fallbackCode, message, { cause: value });
}

/** For bugs: fails loudly with the invariant that broke. */
export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AppError('INTERNAL_ASSERTION', `assertion failed: ${message}`);
}
