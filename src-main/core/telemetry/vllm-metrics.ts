import type { SleepState } from '../../../src-preload/contract/index.js';
import { parsePrometheusText, DEFAULT_MAX_METRICS_BYTES, type MetricFamily, type SampleLineMemo } from './prometheus.js';
import { FamilyReader, VllmIssueCode, isCreated, type Histogram, type VllmIssue } from './vllm-engines.js';

export { VllmIssueCode, type Histogram, type HistogramBucket, type VllmIssue } from './vllm-engines.js';

// vLLM figures out of parsed Prometheus families, tolerant of version drift
// (wire-formats §1): old and new names, with or without `_total`, with or
// without the `engine` label. Across data-parallel engines KV usage is
// averaged and everything else summed — but only when every engine's series is
// there: a family that lacks an engine, or mixes series with and without the
// label, gives null (and an issue naming it), never a total of some engines.

/** The sleep level vLLM reports (the contract's, shown as it is). */
export type { SleepState };

export interface VllmEngineMetrics {
  /** The `engine` label: the data-parallel rank as a string. */
  engine: string;
  running: number | null;
  waiting: number | null;
  /** 0..1 */
  kvCacheUsage: number | null;
  promptTokensTotal: number | null;
  generationTokensTotal: number | null;
  prefixCacheQueries: number | null;
  prefixCacheHits: number | null;
}

export interface VllmMetrics {
  running: number | null;
  /** `num_requests_waiting`, else the sum of `num_requests_waiting_by_reason`. */
  waiting: number | null;
  /** Waiting requests by `reason` (`capacity`, `deferred`), summed across engines; null before the metric existed. */
  waitingByReason: Record<string, number> | null;
  /** 0..1, averaged across engines. */
  kvCacheUsage: number | null;
  promptTokensTotal: number | null;
  generationTokensTotal: number | null;
  /** Prompt tokens served from cache, local + external (`prompt_tokens_cached`, newest vLLM only). */
  promptTokensCachedTotal: number | null;
  sleepState: SleepState;
  /** num_gpu_blocks × block_size, summed across engines; null when not exposed. */
  kvCapacityTokens: number | null;
  prefixCacheQueries: number | null;
  prefixCacheHits: number | null;
  /** `prefix_cache_*` count tokens; 0.8's `gpu_prefix_cache_*` counted blocks (its HELP says which). */
  prefixCacheUnit: 'tokens' | 'blocks' | null;
  /** Finished requests by `finished_reason`, summed across engines (only reasons every engine reports). */
  requestSuccess: Record<string, number>;
  /** All finished requests; null when any engine's series is missing. */
  requestsFinishedTotal: number | null;
  /** Speculative decoding (only when configured): drafts, drafted tokens, accepted tokens. */
  specDraftsTotal: number | null;
  specDraftTokensTotal: number | null;
  specAcceptedTokensTotal: number | null;
  /** Accepted tokens by draft position (0, 1, …); null without per-position counters. */
  specAcceptedByPosition: number[] | null;
  ttft: Histogram | null;
  /** Inter-token latency (`inter_token_latency_seconds`, before 0.11 `time_per_output_token_seconds`). */
  itl: Histogram | null;
  e2e: Histogram | null;
  /** Data-parallel engines seen (distinct `engine` labels; 1 when the label is absent). */
  engineCount: number;
  /** One entry per `engine` label, in rank order; null when no series carries the label (V0). */
  perEngine: VllmEngineMetrics[] | null;
  /** `model_name` label of the first series that has one. */
  modelName: string | null;
  /** The wire names the figures came from: they tell the vLLM generation. */
  names: { kvCacheUsage: string | null; itl: string | null; prefixCache: string | null };
  /** Figures that read null although their family was there, and why. */
  issues: VllmIssue[];
}

function readSleepState(r: FamilyReader): SleepState {
  const f = r.find('vllm:engine_sleep_state');
  if (!f) return 'unknown';
  const { byEngine, complete } = r.groups(f);
  if (!complete) return 'unknown';
  const states = new Set<string | undefined>();
  for (const samples of byEngine.values()) {
    const active = samples.filter((s) => s.value >= 1).map((s) => s.labels['sleep_state']);
    states.add(active.length === 1 ? active[0] : undefined);
  }
  if (states.size !== 1) return 'unknown';
  switch ([...states][0]) {
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

function readKvCapacity(r: FamilyReader): number | null {
  const f = r.find('vllm:cache_config_info');
  if (!f) return null;
  const { byEngine, complete } = r.groups(f);
  if (!complete || byEngine.size === 0) return null;
  let total = 0;
  for (const samples of byEngine.values()) {
    const s = samples[0];
    const blocks = Number(s?.labels['num_gpu_blocks']);
    const blockSize = Number(s?.labels['block_size']);
    // "None" before the profiler ran; one series per engine.
    if (samples.length !== 1 || !Number.isFinite(blocks) || !Number.isFinite(blockSize) || blocks <= 0 || blockSize <= 0) return null;
    total += blocks * blockSize;
  }
  return total;
}

/** Values of `label` in the family, in order of appearance. */
function labelValues(f: MetricFamily | undefined, label: string): string[] {
  const out: string[] = [];
  for (const s of f?.samples ?? []) {
    const v = s.labels[label];
    if (v !== undefined && !isCreated(s) && !out.includes(v)) out.push(v);
  }
  return out;
}

/** Sum per value of `label`, each complete across engines; reasons some engine lacks are left out. */
function byLabel(r: FamilyReader, f: MetricFamily | undefined, label: string): Record<string, number> | null {
  if (!f) return null;
  const out: Record<string, number> = {};
  for (const v of labelValues(f, label)) {
    const t = r.split(f, 'sum', (s) => s.labels[label] === v).total;
    if (t !== null) out[v] = t;
  }
  return out;
}

function readSpecByPosition(r: FamilyReader): number[] | null {
  const f = r.find('vllm:spec_decode_num_accepted_tokens_per_pos');
  if (!f) return null;
  const positions = labelValues(f, 'position')
    .map(Number)
    .filter((p) => Number.isInteger(p) && p >= 0)
    .sort((a, b) => a - b);
  if (positions.length === 0 || positions[positions.length - 1] !== positions.length - 1) return null;
  const out: number[] = [];
  for (const p of positions) {
    const t = r.split(f, 'sum', (s) => s.labels['position'] === String(p)).total;
    if (t === null) return null;
    out.push(t);
  }
  return out;
}

function prefixUnit(f: MetricFamily | undefined): VllmMetrics['prefixCacheUnit'] {
  if (!f) return null;
  if (!f.name.startsWith('vllm:gpu_')) return 'tokens';
  // 0.10's HELP reads "number of queriedtokens" (no space): no word boundaries.
  return /blocks/.test(f.help) ? 'blocks' : /tokens/.test(f.help) ? 'tokens' : null;
}

function firstModelName(families: readonly MetricFamily[]): string | null {
  for (const f of families) {
    if (!f.name.startsWith('vllm:')) continue;
    for (const s of f.samples) if (s.labels['model_name'] !== undefined) return s.labels['model_name'];
  }
  return null;
}

export function readVllmMetrics(families: readonly MetricFamily[]): VllmMetrics {
  const r = new FamilyReader(families);
  const kvFamily = r.find('vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc');
  const itlFamily = r.find('vllm:inter_token_latency_seconds', 'vllm:time_per_output_token_seconds');
  // Hits and queries come from one generation of names: never tokens over blocks.
  const newPrefix = r.find('vllm:prefix_cache_queries', 'vllm:prefix_cache_hits') !== undefined;
  const prefixBase = newPrefix ? 'vllm:prefix_cache' : 'vllm:gpu_prefix_cache';
  const queriesFamily = r.find(`${prefixBase}_queries`);
  const hitsFamily = r.find(`${prefixBase}_hits`);

  const running = r.split(r.find('vllm:num_requests_running'), 'sum');
  const waitingFamily = r.find('vllm:num_requests_waiting');
  const waiting = r.split(waitingFamily, 'sum');
  const byReasonFamily = r.find('vllm:num_requests_waiting_by_reason');
  const waitingByReason = byLabel(r, byReasonFamily, 'reason');
  const kv = r.split(kvFamily, 'mean');
  const prompt = r.split(r.find('vllm:prompt_tokens'), 'sum');
  const gen = r.split(r.find('vllm:generation_tokens'), 'sum');
  const queries = r.split(queriesFamily, 'sum');
  const hits = r.split(hitsFamily, 'sum');
  const success = r.find('vllm:request_success');

  const perEngine: VllmEngineMetrics[] | null =
    r.engines.length === 0
      ? null
      : r.engines.map((engine) => ({
          engine,
          running: running.byEngine.get(engine) ?? null,
          waiting: waiting.byEngine.get(engine) ?? null,
          kvCacheUsage: kv.byEngine.get(engine) ?? null,
          promptTokensTotal: prompt.byEngine.get(engine) ?? null,
          generationTokensTotal: gen.byEngine.get(engine) ?? null,
          prefixCacheQueries: queries.byEngine.get(engine) ?? null,
          prefixCacheHits: hits.byEngine.get(engine) ?? null,
        }));

  const metrics: VllmMetrics = {
    running: running.total,
    waiting: waiting.total ?? (waitingFamily === undefined && byReasonFamily !== undefined ? r.split(byReasonFamily, 'sum').total : null),
    waitingByReason,
    kvCacheUsage: kv.total,
    promptTokensTotal: prompt.total,
    generationTokensTotal: gen.total,
    promptTokensCachedTotal: r.split(r.find('vllm:prompt_tokens_cached'), 'sum').total,
    sleepState: readSleepState(r),
    kvCapacityTokens: readKvCapacity(r),
    prefixCacheQueries: queries.total,
    prefixCacheHits: hits.total,
    prefixCacheUnit: prefixUnit(queriesFamily ?? hitsFamily),
    requestSuccess: byLabel(r, success, 'finished_reason') ?? {},
    requestsFinishedTotal: r.split(success, 'sum').total,
    specDraftsTotal: r.split(r.find('vllm:spec_decode_num_drafts'), 'sum').total,
    specDraftTokensTotal: r.split(r.find('vllm:spec_decode_num_draft_tokens'), 'sum').total,
    specAcceptedTokensTotal: r.split(r.find('vllm:spec_decode_num_accepted_tokens'), 'sum').total,
    specAcceptedByPosition: readSpecByPosition(r),
    ttft: r.histogram(r.find('vllm:time_to_first_token_seconds')),
    itl: r.histogram(itlFamily),
    e2e: r.histogram(r.find('vllm:e2e_request_latency_seconds')),
    engineCount: Math.max(1, r.engines.length),
    perEngine,
    modelName: firstModelName(families),
    names: {
      kvCacheUsage: kvFamily?.name ?? null,
      itl: itlFamily?.name ?? null,
      prefixCache: queriesFamily || hitsFamily ? prefixBase : null,
    },
    issues: r.issues,
  };
  return metrics;
}

const NAME_THEN = /^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ \t]/;

/**
 * The `vllm:` family a cut body may have ended inside: the one the cut line
 * names, when its name came through whole; nothing when the cut line was a
 * comment (a HELP or TYPE starts the next family, so the last one ended);
 * otherwise the family of the last line read.
 */
function familyAtCut(families: readonly MetricFamily[], body: string, partial: string): MetricFamily | undefined {
  if (partial.startsWith('#')) return undefined;
  const named = NAME_THEN.exec(partial)?.[1];
  let name = named;
  if (name === undefined) {
    const last = body.trimEnd().split('\n').pop()?.trim() ?? '';
    if (last === '' || last.startsWith('#')) return undefined;
    name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(last)?.[0];
  }
  if (name === undefined) return undefined;
  const f = families.find((x) => x.samples.some((s) => s.name === name));
  return f?.name.startsWith('vllm:') ? f : undefined;
}

export interface VllmExposition {
  metrics: VllmMetrics;
  /** Lines that could not be read; the line the body was cut in counts. */
  parseErrors: number;
  /** The body ended mid-line or was cut at the size cap. */
  cut: boolean;
  /** Families with at least one `vllm:` sample. */
  vllmFamilies: number;
  /** Families of any name that had samples. */
  families: number;
}

/**
 * A vLLM `/metrics` body → figures. prometheus_client ends every line with
 * "\n", so a body that does not was cut: its last line is dropped (a value cut
 * from `300.0` to `30` would read as 30), and so is the family it ended in,
 * whose remaining series may lack an engine or a reason (issue BODY_CUT).
 */
export function readVllmExposition(text: string, options: { maxBytes?: number; memo?: SampleLineMemo } = {}): VllmExposition {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_METRICS_BYTES;
  let body = text;
  let cut = false;
  if (Buffer.byteLength(body, 'utf8') > maxBytes) {
    body = Buffer.from(body, 'utf8').subarray(0, maxBytes).toString('utf8');
    cut = true;
  }
  let partial = '';
  if (body !== '' && !body.endsWith('\n')) {
    partial = body.slice(body.lastIndexOf('\n') + 1);
    body = body.slice(0, body.length - partial.length);
    cut = true;
  }
  const parsed = parsePrometheusText(body, { maxBytes: Number.POSITIVE_INFINITY, memo: options.memo });
  let families = parsed.families;
  const cutFamily = cut ? familyAtCut(families, body, partial.trim()) : undefined;
  if (cutFamily !== undefined) families = families.map((x) => (x === cutFamily ? { ...x, samples: [] } : x));
  const metrics = readVllmMetrics(families);
  if (cutFamily !== undefined) {
    metrics.issues.unshift({ code: VllmIssueCode.BODY_CUT, family: cutFamily.name, message: `the body ends inside ${cutFamily.name}: it is not read` });
  }
  return {
    metrics,
    parseErrors: parsed.errors + (cut ? 1 : 0),
    cut,
    vllmFamilies: families.filter((f) => f.name.startsWith('vllm:') && f.samples.length > 0).length,
    families: families.filter((f) => f.samples.length > 0).length,
  };
}
