// Per-level figures from recorded requests: nearest-rank p50/p95 of TTFT,
// latency and inter-token gaps, aggregate output tok/s = completion tokens ÷
// wall time, requests/s, errors by code, truncations and the JSON/schema counts.
import type { LevelResult } from '../../../src-preload/contract/index.js';
import type { RequestOutcome } from './http-request.js';
import { nearestRank } from './percentile.js';

/** One request as stored: its outcome (without the answer text and error message) plus where it ran and its checks. */
export interface RecordedRequest extends Omit<RequestOutcome, 'errorMessage' | 'text'> {
  seq: number;
  phase: 'warmup' | 'level' | 'stability';
  level: number;
  jsonOk: boolean | null;
  schemaOk: boolean | null;
  schemaError: string | null;
}

export function isCompleted(r: RecordedRequest): boolean {
  return !r.cancelled && r.errorCode === null;
}

export function levelResult(
  phase: 'level' | 'stability',
  level: number,
  requests: readonly RecordedRequest[],
  wallMs: number,
  partial: boolean,
  checkedStructured: boolean,
): LevelResult {
  const done = requests.filter(isCompleted);
  const failed = requests.filter((r) => !r.cancelled && r.errorCode !== null);
  const errorsByCode: Record<string, number> = {};
  for (const r of failed) errorsByCode[r.errorCode!] = (errorsByCode[r.errorCode!] ?? 0) + 1;
  // Unknown is never 0: a level where no answer said its token counts has none.
  const completionTokens = sumKnown(done.map((r) => r.completionTokens));
  const promptTokens = sumKnown(done.map((r) => r.promptTokens));
  const ttft = done.map((r) => r.ttftMs).filter((v): v is number => v !== null);
  const latency = done.map((r) => r.totalMs).filter((v): v is number => v !== null);
  const itl = done.flatMap((r) => r.itlMs);
  const queue = done.map((r) => r.queueMs).filter((v): v is number => v !== null);
  const answered = requests.filter((r) => r.jsonOk !== null);
  const secs = wallMs / 1000;
  return {
    phase,
    level,
    requests: requests.length,
    completed: done.length,
    failed: failed.length,
    cancelled: requests.filter((r) => r.cancelled).length,
    wallMs,
    ttftP50Ms: nearestRank(ttft, 50),
    ttftP95Ms: nearestRank(ttft, 95),
    latencyP50Ms: nearestRank(latency, 50),
    latencyP95Ms: nearestRank(latency, 95),
    itlP50Ms: nearestRank(itl, 50),
    itlP95Ms: nearestRank(itl, 95),
    queueP95Ms: nearestRank(queue, 95),
    outputTokPerS: done.length > 0 && secs > 0 && completionTokens !== null ? completionTokens / secs : null,
    requestsPerS: done.length > 0 && secs > 0 ? done.length / secs : null,
    completionTokens,
    promptTokens,
    errorsByCode,
    truncated: requests.filter((r) => r.finishReason === 'length').length,
    jsonParsed: checkedStructured ? answered.filter((r) => r.jsonOk).length : null,
    schemaValid: checkedStructured ? answered.filter((r) => r.schemaOk).length : null,
    checked: checkedStructured ? answered.length : null,
    partial,
  };
}

function sumKnown(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length > 0 ? known.reduce((a, b) => a + b, 0) : null;
}
