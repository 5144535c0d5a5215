// Import of GuideLLM's JSON report (`guidellm benchmark … --output-path x.json`).
// What maps: each benchmark of a `concurrent` strategy becomes a level at its
// stream count (others — synchronous = 1, throughput, constant/poisson rates —
// become levels labelled by their rate or 1 with a note); from `metrics`, the
// `successful` distributions' median/p50 and p95 of time_to_first_token_ms,
// request_latency (seconds), inter_token_latency_ms, and the means of
// output_tokens_per_second and requests_per_second; request counts from
// `request_totals`. Not mapped: per-request rows (GuideLLM samples them), GPU
// peaks (it does not measure them), schema checks.
import { z } from 'zod';
import type { LevelResult } from '../../../src-preload/contract/index.js';
import { AppError } from '../base/index.js';
import { BenchErrorCode } from './errors.js';

const Dist = z.looseObject({
  median: z.number().nullish(),
  mean: z.number().nullish(),
  percentiles: z.looseObject({ p50: z.number().nullish(), p95: z.number().nullish() }).nullish(),
});
const Metric = z.looseObject({ successful: Dist.nullish() }).nullish();
const Strategy = z.looseObject({ type_: z.string().nullish(), type: z.string().nullish(), streams: z.number().nullish(), rate: z.number().nullish() }).nullish();
const Benchmark = z.looseObject({
  args: z.looseObject({ strategy: Strategy }).nullish(),
  config: z.looseObject({ strategy: Strategy }).nullish(),
  scheduler: z.looseObject({ strategy: Strategy }).nullish(),
  duration: z.number().nullish(),
  request_totals: z.looseObject({ successful: z.number().nullish(), errored: z.number().nullish(), incomplete: z.number().nullish() }).nullish(),
  metrics: z.looseObject({
    time_to_first_token_ms: Metric,
    request_latency: Metric,
    inter_token_latency_ms: Metric,
    output_tokens_per_second: Metric,
    requests_per_second: Metric,
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
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new AppError(BenchErrorCode.IMPORT_INVALID, `not a GuideLLM report: ${i ? `${i.path.join('.')}: ${i.message}` : 'unexpected shape'}`);
  }
  const notes = new Set<string>(['per-request rows, GPU peaks and schema checks are not in GuideLLM reports']);
  const p50 = (d: z.infer<typeof Dist> | null | undefined) => d?.percentiles?.p50 ?? d?.median ?? null;
  const p95 = (d: z.infer<typeof Dist> | null | undefined) => d?.percentiles?.p95 ?? null;
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
      completionTokens: tokS !== null && wallMs > 0 ? Math.round((tokS * wallMs) / 1000) : 0,
      promptTokens: 0,
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

function findModel(raw: unknown): string | null {
  const b = (raw as { benchmarks?: { args?: { model?: unknown }; config?: { model?: unknown }; worker?: { backend_model?: unknown } }[] }).benchmarks?.[0];
  const m = b?.args?.model ?? b?.config?.model ?? b?.worker?.backend_model;
  return typeof m === 'string' ? m : null;
}
