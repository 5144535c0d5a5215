import { TelemetryErrorCode } from './errors.js';
import { findFamily, histogramOf, samplesOf, sumOf } from './prom-families.js';
import type { MetricFamily, MetricSample } from './prometheus.js';
import { emptyServiceReading, type ServiceReading } from './readings.js';
import { byRank, type Histogram } from './vllm-engines.js';

// SGLang's /metrics (test/fixtures/sglang, names from its metrics/collector.py)
// mapped onto the readings the vLLM source produces, so the cards, overview and
// alerts read an SGLang server as they read vLLM. Scheduler gauges carry
// tp_rank / pp_rank (every rank of one scheduler says the same) and dp_rank
// (data-parallel schedulers, which add up); tokenizer counters and histograms
// carry the model only.

export interface SglangIssue {
  code: string;
  family: string;
  message: string;
}

export interface SglangMetrics {
  running: number | null;
  waiting: number | null;
  /** 0..1: KV pool tokens in use ÷ pool size, averaged across data-parallel schedulers. */
  tokenUsage: number | null;
  usedTokens: number | null;
  maxTotalTokens: number | null;
  promptTokensTotal: number | null;
  generationTokensTotal: number | null;
  /** Prompt tokens served from the radix (prefix) cache. */
  cachedTokensTotal: number | null;
  /** Finished requests (counted when a request finishes). */
  requestsTotal: number | null;
  ttft: Histogram | null;
  itl: Histogram | null;
  e2e: Histogram | null;
  /** Data-parallel schedulers seen (distinct dp_rank; 1 without the label). */
  schedulers: number;
  modelName: string | null;
  /** `sglang:` families on the page: 0 means this is not an SGLang server's /metrics (or --enable-metrics is off). */
  sglangFamilies: number;
  /** Figures read null because their family is not on the page. */
  issues: SglangIssue[];
}

/** The families the console reads; a missing one is an issue (its figure is unknown), not a failed reading. */
const NAMES = {
  running: 'sglang:num_running_reqs',
  waiting: 'sglang:num_queue_reqs',
  tokenUsage: 'sglang:token_usage',
  usedTokens: 'sglang:num_used_tokens',
  maxTotalTokens: 'sglang:max_total_num_tokens',
  prompt: 'sglang:prompt_tokens_total',
  generation: 'sglang:generation_tokens_total',
  cached: 'sglang:cached_tokens_total',
  requests: 'sglang:num_requests_total',
  ttft: 'sglang:time_to_first_token_seconds',
  itl: 'sglang:inter_token_latency_seconds',
  e2e: 'sglang:e2e_request_latency_seconds',
} as const;

/** The lowest value of `label` among the samples ('' when none carries it). */
function lowest(samples: readonly MetricSample[], label: string): string {
  const values = [...new Set(samples.map((s) => s.labels[label] ?? ''))].sort(byRank);
  return values[0] ?? '';
}

/**
 * A scheduler gauge: one value per data-parallel scheduler, read from its first tensor / pipeline rank
 * (the others repeat it), then added up (`sum`) or averaged (`mean`) across schedulers.
 */
function schedulerGauge(f: MetricFamily | undefined, combine: 'sum' | 'mean'): number | null {
  const samples = samplesOf(f);
  if (samples.length === 0) return null;
  const tp = lowest(samples, 'tp_rank');
  const pp = lowest(samples, 'pp_rank');
  const first = samples.filter((s) => (s.labels['tp_rank'] ?? '') === tp && (s.labels['pp_rank'] ?? '') === pp);
  const byDp = new Map<string, number>();
  for (const s of first) {
    if (!Number.isFinite(s.value)) return null;
    const dp = s.labels['dp_rank'] ?? '';
    byDp.set(dp, (byDp.get(dp) ?? 0) + s.value);
  }
  const values = [...byDp.values()];
  const sum = values.reduce((a, v) => a + v, 0);
  return combine === 'sum' ? sum : sum / values.length;
}

export function readSglangMetrics(families: readonly MetricFamily[]): SglangMetrics {
  const issues: SglangIssue[] = [];
  const family = (name: string): MetricFamily | undefined => {
    const f = findFamily(families, name);
    if (!f) issues.push({ code: TelemetryErrorCode.FAMILY_MISSING, family: name, message: `GET /metrics: no ${name} series` });
    return f;
  };
  const running = family(NAMES.running);
  const dpRanks = new Set(samplesOf(running).map((s) => s.labels['dp_rank'] ?? ''));
  const modelName = families.filter((f) => f.name.startsWith('sglang:')).flatMap((f) => samplesOf(f)).find((s) => s.labels['model_name'] !== undefined)?.labels['model_name'];
  return {
    running: schedulerGauge(running, 'sum'),
    waiting: schedulerGauge(family(NAMES.waiting), 'sum'),
    tokenUsage: schedulerGauge(family(NAMES.tokenUsage), 'mean'),
    usedTokens: schedulerGauge(family(NAMES.usedTokens), 'sum'),
    maxTotalTokens: schedulerGauge(family(NAMES.maxTotalTokens), 'sum'),
    promptTokensTotal: sumOf(family(NAMES.prompt)),
    generationTokensTotal: sumOf(family(NAMES.generation)),
    cachedTokensTotal: sumOf(family(NAMES.cached)),
    requestsTotal: sumOf(family(NAMES.requests)),
    ttft: histogramOf(family(NAMES.ttft)),
    itl: histogramOf(family(NAMES.itl)),
    e2e: histogramOf(family(NAMES.e2e)),
    schedulers: Math.max(1, dpRanks.size),
    modelName: modelName ?? null,
    sglangFamilies: families.filter((f) => f.name.startsWith('sglang:')).length,
    issues,
  };
}

/**
 * The reading an SGLang scrape gives. The prefix-cache hit rate comes from the cached ÷ prompt token
 * counters over the console's window, not from sglang:cache_hit_rate: that gauge holds the last
 * prefill batch's rate only and every decode log sets it to 0.
 */
export function serviceReadingFromSglang(m: SglangMetrics): ServiceReading {
  return {
    ...emptyServiceReading('sglang'),
    modelName: m.modelName,
    running: m.running,
    waiting: m.waiting,
    kvCacheUsage: m.tokenUsage,
    kvCapacityTokens: m.maxTotalTokens,
    kvTokensInUse: m.usedTokens,
    promptTokensTotal: m.promptTokensTotal,
    generationTokensTotal: m.generationTokensTotal,
    prefixCacheQueries: m.cachedTokensTotal === null ? null : m.promptTokensTotal,
    prefixCacheHits: m.promptTokensTotal === null ? null : m.cachedTokensTotal,
    promptTokensCachedTotal: m.cachedTokensTotal,
    requestsFinishedTotal: m.requestsTotal,
    ttft: m.ttft,
    itl: m.itl,
    e2e: m.e2e,
    engineCount: m.schedulers,
  };
}
