// Prometheus text exposition of one simulated vLLM engine, with the newest
// vLLM names (wire-formats §1): `vllm:` prefix, labels engine + model_name in
// alphabetical order, counters as `_total` with `_created` gauges, histograms
// with `_bucket`/`_count`/`_sum`/`_created`, values printed like Python floats.

import type { EngineMetrics, Histogram } from './engine-metrics.js';

export type SleepState = 'awake' | 'weights_offloaded' | 'discard_all';

export interface MetricsView {
  modelName: string;
  metrics: EngineMetrics;
  running: number;
  waiting: number;
  kvCacheUsage: number;
  sleepState: SleepState;
  cacheConfig: { blockSize: number; numGpuBlocks: number; gpuMemoryUtilization: number };
}

/** Formats a number the way prometheus_client does (Python repr of a float). */
export function pyFloat(value: number): string {
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  if (Number.isNaN(value)) return 'NaN';
  if (Number.isInteger(value) && Math.abs(value) < 1e16) return value.toFixed(1);
  return String(value);
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function labels(pairs: Record<string, string>): string {
  const keys = Object.keys(pairs).sort();
  return `{${keys.map((k) => `${k}="${escapeLabel(pairs[k]!)}"`).join(',')}}`;
}

const NO_LABELS: Record<string, string> = {};

class Writer {
  readonly lines: string[] = [];
  private readonly baseKeys: string[];
  private readonly baseParts: string[];
  private readonly baseLabels: string;

  constructor(private readonly base: Record<string, string>) {
    // A scrape renders a few hundred samples that share these labels: sorted and escaped once.
    this.baseKeys = Object.keys(base).sort();
    this.baseParts = this.baseKeys.map((k) => `${k}="${escapeLabel(base[k]!)}"`);
    this.baseLabels = `{${this.baseParts.join(',')}}`;
  }

  /** `labels({ ...base, ...extra })`, merging the few extra labels into the presorted base ones. */
  private withBase(extra: Record<string, string>): string {
    const keys = Object.keys(extra);
    if (keys.length === 0) return this.baseLabels;
    if (keys.some((k) => k in this.base)) return labels({ ...this.base, ...extra });
    keys.sort();
    const parts: string[] = [];
    let i = 0;
    for (const k of keys) {
      while (i < this.baseKeys.length && this.baseKeys[i]! < k) parts.push(this.baseParts[i++]!);
      parts.push(`${k}="${escapeLabel(extra[k]!)}"`);
    }
    while (i < this.baseParts.length) parts.push(this.baseParts[i++]!);
    return `{${parts.join(',')}}`;
  }

  family(name: string, type: 'gauge' | 'counter' | 'histogram', help: string): void {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  }

  sample(name: string, value: number, extra: Record<string, string> = NO_LABELS, base = true): void {
    this.lines.push(`${name}${base ? this.withBase(extra) : labels(extra)} ${pyFloat(value)}`);
  }

  gauge(name: string, help: string, value: number): void {
    this.family(name, 'gauge', help);
    this.sample(name, value);
  }

  counter(name: string, help: string, series: { value: number; extra?: Record<string, string> }[], createdSec: number): void {
    this.family(`${name}_total`, 'counter', help);
    for (const s of series) this.sample(`${name}_total`, s.value, s.extra);
    this.family(`${name}_created`, 'gauge', help);
    for (const s of series) this.sample(`${name}_created`, createdSec, s.extra);
  }

  histogram(name: string, help: string, h: Histogram, createdSec: number): void {
    this.family(name, 'histogram', help);
    h.buckets.forEach((le, i) => this.sample(`${name}_bucket`, h.counts[i]!, { le: pyFloat(le) }));
    this.sample(`${name}_bucket`, h.count, { le: '+Inf' });
    this.sample(`${name}_count`, h.count);
    this.sample(`${name}_sum`, h.sum);
    this.family(`${name}_created`, 'gauge', help);
    this.sample(`${name}_created`, createdSec);
  }
}

export function renderMetrics(view: MetricsView): string {
  const m = view.metrics;
  const created = m.createdAtSec;
  const w = new Writer({ engine: '0', model_name: view.modelName });
  w.gauge('vllm:num_requests_running', 'Number of requests in model execution batches.', view.running);
  w.gauge('vllm:num_requests_waiting', 'Number of requests waiting to be processed.', view.waiting);
  w.gauge('vllm:kv_cache_usage_perc', 'KV-cache usage. 1 means 100 percent usage.', view.kvCacheUsage);
  w.family('vllm:engine_sleep_state', 'gauge', 'Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake; weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.');
  for (const state of ['awake', 'weights_offloaded', 'discard_all'] as const) {
    w.sample('vllm:engine_sleep_state', state === view.sleepState ? 1 : 0, { sleep_state: state });
  }
  w.counter('vllm:prefix_cache_queries', 'Prefix cache queries, in terms of number of queried tokens.', [{ value: m.prefixCacheQueries }], created);
  w.counter('vllm:prefix_cache_hits', 'Prefix cache hits, in terms of number of cached tokens.', [{ value: m.prefixCacheHits }], created);
  w.counter('vllm:num_preemptions', 'Cumulative number of preemption from the engine.', [{ value: m.preemptions }], created);
  w.counter('vllm:prompt_tokens', 'Number of prefill tokens processed.', [{ value: m.promptTokens }], created);
  w.counter('vllm:generation_tokens', 'Number of generation tokens processed.', [{ value: m.generationTokens }], created);
  w.counter(
    'vllm:request_success',
    'Count of successfully processed requests.',
    (['stop', 'length', 'abort'] as const).map((r) => ({ value: m.requestSuccess[r], extra: { finished_reason: r } })),
    created,
  );
  w.histogram('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', m.ttft, created);
  w.histogram('vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', m.interTokenLatency, created);
  w.histogram('vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.', m.e2eLatency, created);
  w.histogram('vllm:request_queue_time_seconds', 'Histogram of time spent in WAITING phase for request.', m.queueTime, created);
  const c = view.cacheConfig;
  w.family('vllm:cache_config_info', 'gauge', 'Information of the LLMEngine CacheConfig');
  w.sample(
    'vllm:cache_config_info',
    1,
    {
      block_size: String(c.blockSize),
      cache_dtype: 'auto',
      calculate_kv_scales: 'False',
      cpu_offload_gb: '0',
      enable_prefix_caching: 'True',
      engine: '0',
      gpu_memory_utilization: String(c.gpuMemoryUtilization),
      is_attention_free: 'False',
      num_cpu_blocks: 'None',
      num_gpu_blocks: String(c.numGpuBlocks),
      num_gpu_blocks_override: 'None',
      prefix_caching_hash_algo: 'sha256',
      sliding_window: 'None',
      swap_space: '4',
      swap_space_bytes: '4294967296',
    },
    false,
  );
  return w.lines.join('\n') + '\n';
}
