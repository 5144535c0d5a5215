// One error type for the whole core: a stable code callers match on, a message
// an operator can act on, whether retrying may help, and details that are safe
// to show (never secrets). The original library error is kept as `cause` for logs.

/** Codes of base itself: bugs, anything unexpected, and a cancelled wait. */
export const BaseErrorCode = {
  /** Something thrown that was not an AppError (a bug, or a library error nobody wrapped). */
  INTERNAL_ERROR: 'INTERNAL_ERROR',
  /** An invariant broke (assert). */
  INTERNAL_ASSERTION: 'INTERNAL_ASSERTION',
  /** The caller's signal aborted the wait (throwIfAborted, the PDF printers). */
  CANCELLED: 'CANCELLED',
} as const;
export type BaseErrorCode = (typeof BaseErrorCode)[keyof typeof BaseErrorCode];

/** The on-prem rule (on-prem.ts): a call to an upstream off this machine and outside the console's tunnels. */
export const OnPremErrorCode = {
  REFUSED: 'ONPREM_REFUSED',
} as const;
export type OnPremErrorCode = (typeof OnPremErrorCode)[keyof typeof OnPremErrorCode];

/**
 * Every error code of the console, one entry per capability. Base imports no
 * capability, so each capability's errors.ts adds its own union here by
 * declaration merging:
 *
 *   declare module '../base/index.js' { interface ErrorCodeRegistry { fleet: FleetErrorCode } }
 *
 * A code that no errors.ts declares then fails to compile at `new AppError(…)`.
 */
export interface ErrorCodeRegistry {
  base: BaseErrorCode;
  onPrem: OnPremErrorCode;
}
export type ErrorCode = ErrorCodeRegistry[keyof ErrorCodeRegistry];

export interface AppErrorOptions {
  retryable?: boolean;
  details?: Record<string, unknown>;
  cause?: unknown;
}

/** An error as it crosses a bridge (the contract's ContractError), for rebuilding one another process sent. */
export interface WireError {
  code: string;
  message: string;
  retryable?: boolean;
  details?: Record<string, unknown>;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.details = options.details ?? {};
  }

  /**
   * An error another process answered (the running console, over its bridge).
   * Its code is kept as it came: that console may be newer and know codes this
   * one does not, and the CLI prints and exits by the code it was given.
   */
  static fromWire(e: WireError, options: Pick<AppErrorOptions, 'cause'> = {}): AppError {
    return new AppError(e.code as ErrorCode, e.message, { retryable: e.retryable ?? false, details: e.details ?? {}, ...options });
  }

  toJSON(): { code: string; message: string; retryable: boolean; details: Record<string, unknown> } {
    return { code: this.code, message: this.message, retryable: this.retryable, details: this.details };
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

/** Wraps anything thrown into an AppError, keeping an existing code. */
export function toAppError(value: unknown, fallbackCode: ErrorCode = BaseErrorCode.INTERNAL_ERROR): AppError {
  if (value instanceof AppError) return value;
  const message = value instanceof Error ? value.message : String(value);
  return new AppError(fallbackCode, message, { cause: value });
}

/** For bugs: fails loudly with the invariant that broke. */
export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AppError(BaseErrorCode.INTERNAL_ASSERTION, `assertion failed: ${message}`);
}
