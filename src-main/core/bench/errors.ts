/** Stable codes of the bench capability; callers match the code, not the message. */
export const BenchErrorCode = {
  INVALID_SCENARIO: 'BENCH_INVALID_SCENARIO',
  PROMPT_FILE_MISSING: 'BENCH_PROMPT_FILE_MISSING',
  PROMPT_FILE_INVALID: 'BENCH_PROMPT_FILE_INVALID',
  /** A prompt file named by path over a bridge (the console reads no path it is handed). */
  PROMPT_FILE_NOT_ALLOWED: 'BENCH_PROMPT_FILE_NOT_ALLOWED',
  INVALID_JSON_SCHEMA: 'BENCH_INVALID_JSON_SCHEMA',
  TARGET_UNKNOWN: 'BENCH_TARGET_UNKNOWN',
  TARGET_ASLEEP: 'BENCH_TARGET_ASLEEP',
  TARGET_UNREACHABLE: 'BENCH_TARGET_UNREACHABLE',
  RUN_NOT_FOUND: 'BENCH_RUN_NOT_FOUND',
  RUN_NOT_RUNNING: 'BENCH_RUN_NOT_RUNNING',
  SCENARIO_NOT_FOUND: 'BENCH_SCENARIO_NOT_FOUND',
  ALREADY_RUNNING: 'BENCH_ALREADY_RUNNING',
  NO_BASELINE_FIGURE: 'BENCH_NO_BASELINE_FIGURE',
  IMPORT_INVALID: 'BENCH_IMPORT_INVALID',
  /** A figure of an imported report outside what any server measures (1e308, a negative latency). */
  IMPORT_OUT_OF_RANGE: 'BENCH_IMPORT_OUT_OF_RANGE',
  /** A run about to be stored would not read back (a non-finite or fractional count): refused, nothing written. */
  RUN_INVALID: 'BENCH_RUN_INVALID',
  /** A stored run that no longer reads as a run; shown as damaged, and it can be deleted. */
  RUN_DAMAGED: 'BENCH_RUN_DAMAGED',
  /** A run the console stopped in the middle of (found running at the next start): its error, stored. */
  INTERRUPTED: 'BENCH_INTERRUPTED',
} as const;
export type BenchErrorCode = (typeof BenchErrorCode)[keyof typeof BenchErrorCode];

/** Per-request error codes recorded in a run (not thrown). */
export const RequestErrorCode = {
  TIMEOUT: 'BENCH_REQUEST_TIMEOUT',
  CONNECTION: 'BENCH_CONNECTION_FAILED',
  BAD_STREAM: 'BENCH_BAD_STREAM',
} as const;
export type RequestErrorCode = (typeof RequestErrorCode)[keyof typeof RequestErrorCode];

declare module '../base/index.js' {
  interface ErrorCodeRegistry {
    bench: BenchErrorCode;
    benchRequest: RequestErrorCode;
  }
}
