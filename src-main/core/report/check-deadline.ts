// How a live check is bounded and how its failure is told: a deadline on the
// injected clock (the work gets an AbortSignal), timeouts told apart from other
// failures whatever layer raised them, and evidence as one short line.
import { AppError, toAppError, type Clock, type Disposable } from '../base/index.js';
import { SshErrorCode, type ExecResult } from '../ssh/index.js';
import { UpstreamErrorCode } from '../upstream/index.js';

const MAX_EVIDENCE_CHARS = 400;

// ── deadlines ─────────────────────────────────────────────────────────────

class DeadlineExceeded extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${formatSeconds(timeoutMs)}`);
  }
}

export function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** Runs `work` with an abort signal; rejects with DeadlineExceeded when the injected clock passes the deadline. */
export function withinDeadline<T>(clock: Clock, timeoutMs: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: Disposable | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = clock.setTimeout(() => {
      // Settle first, so the work's own abort error never wins the race.
      reject(new DeadlineExceeded(timeoutMs));
      controller.abort();
    }, timeoutMs);
  });
  const run = Promise.resolve().then(() => work(controller.signal));
  return Promise.race([run, expired]).finally(() => {
    void timer?.dispose();
    // The loser of the race must not surface as an unhandled rejection.
    run.catch(() => undefined);
    expired.catch(() => undefined);
  });
}

const TIMEOUT_CODES = new Set<string>([SshErrorCode.EXEC_TIMEOUT, UpstreamErrorCode.TIMEOUT, 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

function errorCode(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : null;
}

export const isTimeout = (err: unknown): boolean => err instanceof DeadlineExceeded || TIMEOUT_CODES.has(errorCode(err) ?? '');

export function describeError(err: unknown, timeoutMs: number): string {
  if (isTimeout(err)) return `no answer within ${formatSeconds(timeoutMs)}`;
  // The upstream classifier keeps what the library said: the evidence names that (UND_ERR_SOCKET: other side closed).
  const undiciCode = err instanceof AppError ? err.details['undiciCode'] : undefined;
  if (typeof undiciCode === 'string' && err instanceof AppError && err.cause instanceof Error) return oneLine(`${undiciCode}: ${err.cause.message}`);
  const code = errorCode(err);
  return oneLine(`${code ? `${code}: ` : ''}${toAppError(err).message}`);
}

// ── text helpers ──────────────────────────────────────────────────────────

export function oneLine(text: string, max = MAX_EVIDENCE_CHARS): string {
  const flat = text.replace(/\s*\r?\n\s*/g, ' | ').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** First lines of a command's stderr (else stdout), for evidence. */
export function outputExcerpt(r: ExecResult): string {
  const text = (r.stderr.trim() || r.stdout.trim()).split(/\r?\n/).slice(0, 3).join('\n');
  return oneLine(text || '(no output)', 200);
}

export function exitText(r: ExecResult): string {
  return r.exitCode !== null ? `exit ${r.exitCode}` : `killed by ${r.signal ?? 'a signal'}`;
}
