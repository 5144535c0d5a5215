import type { MetricFamily, MetricSample } from './prometheus.js';

// vLLM figures out of parsed Prometheus families, tolerant of version drift
// (wire-formats §1): old and new names, with or without `_total`, with or
// without the `engine` label. Gauges are averaged across engines, counters summed.

export type SleepState = 'awake' | 'asleep-1' | 'asleep-2' | 'unknown';

export interface HistogramBucket {
  le: number;
  count: number;
}

export interface Histogram {
  buckets: HistogramBucket[];
  sum: number;
  count: number;
}

export interface VllmMetrics {
  running: number | null;
  waiting: number | null;
  /** 0..1, averaged across engines. */
  kvCacheUsage: number | null;
  promptTokensTotal: number | null;
  generationTokensTotal: number | null;
  sleepState: SleepState;
  /** num_gpu_blocks × block_size, summed across engines; null when not exposed. */
  kvCapacityTokens: number | null;
  prefixCacheQueries: number | null;
  prefixCacheHits: number | null;
  /** Finished requests by `finished_reason`, summed across engines. */
  requestSuccess: Record<string, number>;
  ttft: Histogram | null;
  /** Inter-token latency (`inter_token_latency_seconds`, before 0.11 `time_per_output_token_seconds`). */
  itl: Histogram | null;
  e2e: Histogram | null;
  /** Data-parallel engines seen (distinct `engine` labels; 1 when the label is absent). */
  engineCount: number;
  /** `model_name` label of the first series that has one. */
  modelName: string | null;
}

const stripTotal = (name: string): string => (name.endsWith('_total') ? name.slice(0, -6) : name);

function findFamily(families: readonly MetricFamily[], ...names: string[]): MetricFamily | undefined {
  for (const want of names) {
    const f = families.find((x) => stripTotal(x.name) === stripTotal(want));
    if (f && f.samples.length > 0) return f;
  }
  return undefined;
}

/** Samples of the family's own series: no `_created`, no histogram parts. */
function valueSamples(f: MetricFamily): MetricSample[] {
  return f.samples.filter((s) => !s.name.endsWith('_created') && Number.isFinite(s.value));
}

function average(f: MetricFamily | undefined): number | null {
  if (!f) return null;
  const s = valueSamples(f);
  if (s.length === 0) return null;
  return s.reduce((a, x) => a + x.value, 0) / s.length;
}

function sum(f: MetricFamily | undefined): number | null {
  if (!f) return null;
  const s = valueSamples(f);
  if (s.length === 0) return null;
  return s.reduce((a, x) => a + x.value, 0);
}

function readSleepState(f: MetricFamily | undefined): SleepState {
  if (!f) return 'unknown';
  const active = new Set(valueSamples(f).filter((s) => s.value >= 1).map((s) => s.labels['sleep_state']));
  if (active.size !== 1) return 'unknown';
  switch ([...active][0]) {
    case 'awake':
      return 'awake';
    case 'weights_offloaded':
      return 'asleep-1';
    case 'discard_all':
      return 'asleep-2';
    default:
      return 'unknown';
  }
}

function readKvCapacity(f: MetricFamily | undefined): number | null {
  if (!f) return null;
  let total = 0;
  let seen = false;
  for (const s of valueSamples(f)) {
    const blocks = Number(s.labels['num_gpu_blocks']);
    const blockSize = Number(s.labels['block_size']);
    if (!Number.isFinite(blocks) || !Number.isFinite(blockSize) || blocks <= 0 || blockSize <= 0) continue;
    total += blocks * blockSize;
    seen = true;
  }
  return seen ? total : null;
}

function readHistogram(f: MetricFamily | undefined): Histogram | null {
  if (!f) return null;
  const buckets = new Map<number, number>();
  let sumValue = 0;
  let count = 0;
  for (const s of f.samples) {
    if (!Number.isFinite(s.value)) continue;
    if (s.name.endsWith('_bucket')) {
      const le = s.labels['le'] === '+Inf' ? Number.POSITIVE_INFINITY : Number(s.labels['le']);
      if (Number.isNaN(le)) continue;
      buckets.set(le, (buckets.get(le) ?? 0) + s.value);
    } else if (s.name.endsWith('_sum')) sumValue += s.value;
    else if (s.name.endsWith('_count')) count += s.value;
  }
  if (buckets.size === 0 && count === 0) return null;
  return {
    buckets: [...buckets.entries()].sort((a, b) => a[0] - b[0]).map(([le, c]) => ({ le, count: c })),
    sum: sumValue,
    count,
  };
}

function engineFacts(families: readonly MetricFamily[]): { engineCount: number; modelName: string | null } {
  const engines = new Set<string>();
  let modelName: string | null = null;
  for (const f of families) {
    if (!f.name.startsWith('vllm:')) continue;
    for (const s of f.samples) {
      const e = s.labels['engine'];
      if (e !== undefined) engines.add(e);
      if (modelName === null && s.labels['model_name'] !== undefined) modelName = s.labels['model_name'];
    }
  }
  return { engineCount: Math.max(1, engines.size), modelName };
}

export function readVllmMetrics(families: readonly MetricFamily[]): VllmMetrics {
  const requestSuccess: Record<string, number> = {};
  const success = findFamily(families, 'vllm:request_success_total');
  if (success) {
    for (const s of valueSamples(success)) {
      const reason = s.labels['finished_reason'] ?? 'unknown';
      requestSuccess[reason] = (requestSuccess[reason] ?? 0) + s.value;
    }
  }
  return {
    running: sum(findFamily(families, 'vllm:num_requests_running')),
    waiting: sum(findFamily(families, 'vllm:num_requests_waiting')),
    kvCacheUsage: average(findFamily(families, 'vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc')),
    promptTokensTotal: sum(findFamily(families, 'vllm:prompt_tokens_total')),
    generationTokensTotal: sum(findFamily(families, 'vllm:generation_tokens_total')),
    sleepState: readSleepState(findFamily(families, 'vllm:engine_sleep_state')),
    kvCapacityTokens: readKvCapacity(findFamily(families, 'vllm:cache_config_info')),
    prefixCacheQueries: sum(findFamily(families, 'vllm:prefix_cache_queries_total', 'vllm:gpu_prefix_cache_queries_total')),
    prefixCacheHits: sum(findFamily(families, 'vllm:prefix_cache_hits_total', 'vllm:gpu_prefix_cache_hits_total')),
    requestSuccess,
    ttft: readHistogram(findFamily(families, 'vllm:time_to_first_token_seconds')),
    itl: readHistogram(findFamily(families, 'vllm:inter_token_latency_seconds', 'vllm:time_per_output_token_seconds')),
    e2e: readHistogram(findFamily(families, 'vllm:e2e_request_latency_seconds')),
    ...engineFacts(families),
  };
}
