// Import of GuideLLM's JSON report (`guidellm benchmark … --output-path x.json`).
// What maps: each benchmark of a `concurrent` strategy becomes a level at its
// stream count (others — synchronous = 1, throughput, constant/poisson rates —
// become levels labelled by their rate or 1 with a note); from `metrics`, the
// `successful` distributions' median/p50 and p95 of time_to_first_token_ms,
// request_latency (seconds), inter_token_latency_ms, and the means of
// output_tokens_per_second and requests_per_second; request counts from
// `request_totals`. Not mapped: per-request rows (GuideLLM samples them), GPU
// peaks (it does not measure them), schema checks. A figure outside its range
// is refused with its field named (BENCH_IMPORT_OUT_OF_RANGE): nothing is stored.
import { z } from 'zod';
import type { LevelResult } from '../../../src-preload/contract/index.js';
import { AppError } from '../base/index.js';
import { BenchErrorCode } from './errors.js';

// Every mapped number has a range: a value outside it (1e308, a negative latency) is refused with its
// field named, rather than stored as Infinity, which JSON writes as null and every later read refuses.
/** Far above any measured figure; products of two (tok/s × duration) stay whole numbers the store can hold. */
const MAX = { ms: 1e9, seconds: 1e6, tokPerS: 1e7, reqPerS: 1e6, count: 1e9, durationS: 1e7, streams: 1e6, rate: 1e6 } as const;
const inRange = (max: number) => z.number().min(0).max(max).nullish();
const count = z.number().int().min(0).max(MAX.count).nullish();

const dist = (max: number) =>
  z.looseObject({
    median: inRange(max),
    mean: inRange(max),
    percentiles: z.looseObject({ p50: inRange(max), p95: inRange(max) }).nullish(),
  });
const metric = (max: number) => z.looseObject({ successful: dist(max).nullish() }).nullish();
type Dist = z.infer<ReturnType<typeof dist>>;
const Strategy = z
  .looseObject({ type_: z.string().nullish(), type: z.string().nullish(), streams: z.number().positive().max(MAX.streams).nullish(), rate: z.number().positive().max(MAX.rate).nullish() })
  .nullish();
const Benchmark = z.looseObject({
  args: z.looseObject({ strategy: Strategy }).nullish(),
  config: z.looseObject({ strategy: Strategy }).nullish(),
  scheduler: z.looseObject({ strategy: Strategy }).nullish(),
  duration: inRange(MAX.durationS),
  request_totals: z.looseObject({ successful: count, errored: count, incomplete: count }).nullish(),
  metrics: z.looseObject({
    time_to_first_token_ms: metric(MAX.ms),
    request_latency: metric(MAX.seconds),
    inter_token_latency_ms: metric(MAX.ms),
    output_tokens_per_second: metric(MAX.tokPerS),
    requests_per_second: metric(MAX.reqPerS),
  }),
});
const Report = z.looseObject({ benchmarks: z.array(Benchmark).min(1) });

export interface ImportedLevels {
  levels: LevelResult[];
  notes: string[];
  model: string | null;
}

export function importGuidellm(text: string): ImportedLevels {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new AppError(BenchErrorCode.IMPORT_INVALID, `not JSON: ${(err as Error).message}`);
  }
  const parsed = Report.safeParse(raw);
  if (!parsed.success) throw importError(parsed.error.issues[0], raw);
  const notes = new Set<string>(['per-request rows, GPU peaks and schema checks are not in GuideLLM reports']);
  const p50 = (d: Dist | null | undefined) => d?.percentiles?.p50 ?? d?.median ?? null;
  const p95 = (d: Dist | null | undefined) => d?.percentiles?.p95 ?? null;
  const levels = parsed.data.benchmarks.map((b): LevelResult => {
    const strategy = b.args?.strategy ?? b.config?.strategy ?? b.scheduler?.strategy ?? null;
    const type = strategy?.type_ ?? strategy?.type ?? 'unknown';
    let level = 1;
    if (type === 'concurrent' && strategy?.streams) level = strategy.streams;
    else if (type !== 'synchronous') {
      level = strategy?.rate ?? 1;
      notes.add(`strategy "${type}" imported as a level of ${level} (not a concurrency)`);
    }
    const m = b.metrics;
    const ok = b.request_totals?.successful ?? 0;
    const bad = b.request_totals?.errored ?? 0;
    const lat = m.request_latency?.successful;
    const toMs = (v: number | null) => (v === null ? null : v * 1000);
    const tokS = m.output_tokens_per_second?.successful?.mean ?? null;
    const wallMs = (b.duration ?? 0) * 1000;
    return {
      phase: 'level',
      level,
      requests: ok + bad,
      completed: ok,
      failed: bad,
      cancelled: b.request_totals?.incomplete ?? 0,
      wallMs,
      ttftP50Ms: p50(m.time_to_first_token_ms?.successful),
      ttftP95Ms: p95(m.time_to_first_token_ms?.successful),
      latencyP50Ms: toMs(p50(lat)),
      latencyP95Ms: toMs(p95(lat)),
      itlP50Ms: p50(m.inter_token_latency_ms?.successful),
      itlP95Ms: p95(m.inter_token_latency_ms?.successful),
      queueP95Ms: null,
      outputTokPerS: tokS,
      requestsPerS: m.requests_per_second?.successful?.mean ?? null,
      // GuideLLM reports rates, not the level's token totals: derived where the rate is known, else unknown.
      completionTokens: tokS !== null && wallMs > 0 ? Math.round((tokS * wallMs) / 1000) : null,
      promptTokens: null,
      errorsByCode: bad > 0 ? { GUIDELLM_ERRORED: bad } : {},
      truncated: 0,
      jsonParsed: null,
      schemaValid: null,
      checked: null,
      partial: false,
    };
  });
  const model = findModel(raw);
  return { levels, notes: [...notes], model };
}

/** The field and value a zod issue is about, in the words of the report's own keys. */
function importError(issue: z.core.$ZodIssue | undefined, raw: unknown): AppError {
  if (!issue) return new AppError(BenchErrorCode.IMPORT_INVALID, 'not a GuideLLM report: unexpected shape');
  const field = issue.path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${String(k)}`)).join('').replace(/^\./, '');
  if (issue.code === 'too_big' || issue.code === 'too_small') {
    const value = issue.path.reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined), raw);
    const range = issue.code === 'too_big' ? `at most ${String(issue.maximum)}` : `at least ${String(issue.minimum)}`;
    return new AppError(BenchErrorCode.IMPORT_OUT_OF_RANGE, `${field} is ${String(value)}, out of range (${range}); nothing was imported`, {
      details: { field, value: typeof value === 'number' ? value : null },
    });
  }
  return new AppError(BenchErrorCode.IMPORT_INVALID, `not a GuideLLM report: ${field}: ${issue.message}`, { details: { field } });
}

function findModel(raw: unknown): string | null {
  const b = (raw as { benchmarks?: { args?: { model?: unknown }; config?: { model?: unknown }; worker?: { backend_model?: unknown } }[] }).benchmarks?.[0];
  const m = b?.args?.model ?? b?.config?.model ?? b?.worker?.backend_model;
  return typeof m === 'string' ? m : null;
}
