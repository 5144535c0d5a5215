// A collector answer turned back into what each source asked for: an exec's
// result or an HTTP status and body, or the coded reason that part alone failed.
import { AppError } from '../base/index.js';
import { TelemetryErrorCode, type ExecRunner, type HttpText } from '../telemetry/index.js';
import type { CollectorAnswer, HttpFrame } from './collector-script.js';
import { FleetErrorCode } from './errors.js';

export type ExecAnswer = Awaited<ReturnType<ExecRunner>>;

/** A source's exec waiting for the collector's answer. */
export interface PendingExec {
  command: string;
  timeoutMs: number;
  maxBytes: number;
  resolve(v: ExecAnswer): void;
  reject(e: unknown): void;
}
/** A source's HTTP GET waiting for the collector's answer. */
export interface PendingGet {
  url: string;
  /** The endpoint as the service names it: loopback address and port on the host. */
  host: string;
  port: number;
  path: string;
  maxBytes: number;
  resolve(v: HttpText): void;
  reject(e: unknown): void;
}
/** Everything one poll's sources asked before the event loop turned. */
export interface Batch {
  execs: PendingExec[];
  gets: PendingGet[];
}

/** Settles each part of `batch` from one framed answer. */
export function settleBatch(batch: Batch, answer: CollectorAnswer, useTimeout: boolean, httpTimeoutMs: number, truncated: boolean): void {
  batch.execs.forEach((e, i) => settle(e, execPartResult(answer, `x${i}`, e.command, useTimeout, truncated)));
  const https = httpPartResults(answer, batch.gets, httpTimeoutMs, truncated);
  batch.gets.forEach((g, i) => settle(g, https[i]!));
}

function settle<T>(p: { resolve(v: T): void; reject(e: unknown): void }, r: T | AppError): void {
  if (r instanceof AppError) p.reject(r);
  else p.resolve(r);
}

/** Fails every part of `batch` with one error. */
export function failBatch(batch: Batch, err: AppError): void {
  for (const p of batch.execs) p.reject(err);
  for (const p of batch.gets) p.reject(err);
}

/** `timeout`'s exit status when the command ran past it. */
const TIMEOUT_EXIT = 124;

const cut = (what: string, truncated: boolean): AppError =>
  new AppError(FleetErrorCode.COLLECTOR_CUT, `${what}: the collector's answer ended before this part${truncated ? ' (the answer passed its size cap)' : ''}`, {
    retryable: true,
  });

/** The exec part named `name`, as the source's ExecRunner would have answered it. */
export function execPartResult(answer: CollectorAnswer, name: string, command: string, wrapped: boolean, truncated: boolean): ExecAnswer | AppError {
  const what = command.split(' ')[0] ?? command;
  const frame = answer.execs.get(name);
  if (!frame || frame.exitCode === null) return cut(what, truncated);
  if (wrapped && frame.exitCode === TIMEOUT_EXIT) {
    return new AppError(FleetErrorCode.COLLECTOR_PART_TIMEOUT, `${what}: did not finish within its deadline on the host (timeout)`, { retryable: true });
  }
  return { exitCode: frame.exitCode, signal: null, stdout: frame.stdout, stderr: frame.stderr };
}

/** curl's `curl: (N) message` lines, in the order its transfers failed. */
function curlErrors(answer: CollectorAnswer): { code: number; message: string }[] {
  const out: { code: number; message: string }[] = [];
  for (const line of (answer.curl?.stderr ?? '').split('\n')) {
    const m = /^curl: \((\d+)\) (.*)$/.exec(line.trim());
    if (m) out.push({ code: Number(m[1]), message: m[2]! });
  }
  return out;
}

/** curl's exit status for a transfer that ran out of time. */
const CURL_TIMEOUT = 28;

function failed(frame: HttpFrame, timeoutS: number): boolean {
  return frame.status === 0 || frame.seconds >= timeoutS - 0.01;
}

/**
 * Every URL's answer in order: `HttpText` when curl got a whole HTTP answer,
 * otherwise the part's own coded error (timed out, refused, cut, too large).
 */
export function httpPartResults(
  answer: CollectorAnswer,
  parts: readonly { path: string; maxBytes: number }[],
  timeoutMs: number,
  truncated: boolean,
): (HttpText | AppError)[] {
  const errors = curlErrors(answer);
  const timeoutS = timeoutMs / 1000;
  let failures = 0;
  return parts.map((part, i) => {
    const where = `GET ${part.path} (collector)`;
    const frame = answer.https[i];
    if (!frame) return cut(where, truncated);
    if (failed(frame, timeoutS)) {
      const err = errors[failures++] ?? null;
      if (err?.code === CURL_TIMEOUT || (err === null && frame.seconds >= timeoutS - 0.01)) {
        return new AppError(FleetErrorCode.COLLECTOR_PART_TIMEOUT, `${where}: no whole answer within ${timeoutMs} ms`, { retryable: true, details: { timeoutMs } });
      }
      return new AppError(FleetErrorCode.COLLECTOR_PART_FAILED, `${where}: ${err ? `curl (${err.code}) ${err.message}` : 'curl got no HTTP answer'}`, { retryable: true });
    }
    const bytes = Buffer.byteLength(frame.body);
    if (bytes > part.maxBytes) {
      return new AppError(TelemetryErrorCode.BODY_TOO_LARGE, `${where}: body larger than ${part.maxBytes} bytes`, { details: { maxBytes: part.maxBytes } });
    }
    if (bytes !== frame.sizeBytes) return cut(`${where}: ${bytes} of ${frame.sizeBytes} bytes arrived`, truncated);
    return { status: frame.status, text: frame.body };
  });
}
