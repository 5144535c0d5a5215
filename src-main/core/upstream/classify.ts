// The one classifier of failed upstream calls. Four copies of it lived at the
// call sites (telemetry, probes, lifecycle, report checks), each with its own
// idea of what a timeout is; now each call site maps these codes to its own.
import { AppError, OnPremErrorCode } from '../base/index.js';
import { UpstreamErrorCode } from './errors.js';

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);
const CLOSED_CODES = new Set(['UND_ERR_DESTROYED', 'UND_ERR_CLOSED']);
/** ENOENT: a tunnel's socket file is gone (its tunnel closed while the call was being made). */
const REFUSED_CODES = new Set(['ECONNREFUSED', 'ENOENT']);
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);
const TOO_LARGE_CODES = new Set(['UND_ERR_RES_EXCEEDED_MAX_SIZE']);

const UPSTREAM_CODES = new Set<string>(Object.values(UpstreamErrorCode));

export interface ClassifyContext {
  /** What was called, for the message: `GET /metrics through the tunnel to gpu-a/qwen`. */
  where: string;
  /** The call's deadline, when it had one (its signal says whether it fired). */
  deadline?: { signal: AbortSignal; ms: number };
  /** The caller's own signal: its abort is a cancellation, not a failure. */
  caller?: AbortSignal;
  /** Set for a tunnel's client: a closed client means its tunnel closed. */
  tunnel?: string;
}

function codeOf(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : null;
}

function textOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The UPSTREAM_* code of a failure (an AppError of ours passes through unchanged). */
export function upstreamCodeOf(err: unknown, ctx: Pick<ClassifyContext, 'deadline' | 'caller'> = {}): UpstreamErrorCode {
  const code = codeOf(err);
  if (code !== null && UPSTREAM_CODES.has(code)) return code as UpstreamErrorCode;
  // The caller's abort wins only when the deadline had not fired first: a deadline is a timeout.
  if (ctx.caller?.aborted && !ctx.deadline?.signal.aborted) return UpstreamErrorCode.CANCELLED;
  if (ctx.deadline?.signal.aborted || (code !== null && TIMEOUT_CODES.has(code)) || (err as Error | null)?.name === 'TimeoutError') return UpstreamErrorCode.TIMEOUT;
  if (code === null) return UpstreamErrorCode.FAILED;
  if (CLOSED_CODES.has(code)) return UpstreamErrorCode.CLOSED;
  if (REFUSED_CODES.has(code)) return UpstreamErrorCode.REFUSED;
  if (RESET_CODES.has(code)) return UpstreamErrorCode.RESET;
  if (TOO_LARGE_CODES.has(code)) return UpstreamErrorCode.TOO_LARGE;
  return UpstreamErrorCode.FAILED;
}

/**
 * The coded error of a failed call. Its message is what happened, without the call (callers add
 * their own `GET …:` prefix): `no answer within 3000 ms`, `ECONNREFUSED connect ECONNREFUSED …`.
 * `details`: `undiciCode` (the library's code, when there is one), `timedOut`, `where`.
 * ONPREM_REFUSED and our own UPSTREAM_* errors pass through unchanged.
 */
export function classifyUpstreamError(err: unknown, ctx: ClassifyContext): AppError {
  if (err instanceof AppError && (UPSTREAM_CODES.has(err.code) || err.code === OnPremErrorCode.REFUSED)) return err;
  const code = upstreamCodeOf(err, ctx);
  const undiciCode = codeOf(err);
  let message: string;
  switch (code) {
    case UpstreamErrorCode.TIMEOUT:
      message = ctx.deadline ? `no answer within ${ctx.deadline.ms} ms` : `${undiciCode ?? 'timeout'} ${textOf(err)}`;
      break;
    case UpstreamErrorCode.CANCELLED:
      message = 'cancelled';
      break;
    case UpstreamErrorCode.CLOSED:
      message = ctx.tunnel ? `the tunnel to ${ctx.tunnel} is closed` : 'the client is closed';
      break;
    default:
      message = `${undiciCode ? `${undiciCode} ` : ''}${textOf(err)}`;
  }
  return new AppError(code, message, {
    // Waiting (and the tunnel coming back) may help with everything but an answer too large.
    retryable: code !== UpstreamErrorCode.TOO_LARGE && code !== UpstreamErrorCode.CANCELLED,
    details: { where: ctx.where, timedOut: code === UpstreamErrorCode.TIMEOUT, ...(undiciCode ? { undiciCode } : {}) },
    cause: err,
  });
}
