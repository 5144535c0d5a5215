import type { SleepState } from '../../../src-preload/contract/index.js';
import { parsePrometheusText, DEFAULT_MAX_METRICS_BYTES, type MetricFamily, type MetricSample } from './prometheus.js';

// vLLM figures out of parsed Prometheus families, tolerant of version drift
// (wire-formats §1): old and new names, with or without `_total`, with or
// without the `engine` label. Across data-parallel engines KV usage is
// averaged and everything else summed — but only when every engine's series is
// there: a family that lacks an engine, or mixes series with and without the
// label, gives null (and an issue naming it), never a total of some engines.

/** The sleep level vLLM reports (the contract's, shown as it is). */
export type { SleepState };

export interface HistogramBucket {
  le: number;
  count: number;
}

export interface Histogram {
  buckets: HistogramBucket[];
  sum: number;
  count: number;
}

/** Why a figure read null although its family was on the wire. Stable codes. */
export const VllmIssueCode = {
  /** Some series of the family carry the `engine` label and some do not. */
  ENGINE_LABEL_MISSING: 'TELEMETRY_VLLM_ENGINE_LABEL_MISSING',
  /** The family has no series for an engine that other families have. */
  ENGINE_SERIES_MISSING: 'TELEMETRY_VLLM_ENGINE_SERIES_MISSING',
  /** The same series (name and labels) twice. */
  DUPLICATE_SERIES: 'TELEMETRY_VLLM_DUPLICATE_SERIES',
  /** A histogram without its +Inf bucket, or engines with different bucket bounds. */
  HISTOGRAM_INCOMPLETE: 'TELEMETRY_VLLM_HISTOGRAM_INCOMPLETE',
  /** The body ended mid-line or at the size cap: the family it ended in is not read. */
  BODY_CUT: 'TELEMETRY_VLLM_BODY_CUT',
} as const;
export type VllmIssueCode = (typeof VllmIssueCode)[keyof typeof VllmIssueCode];

export interface VllmIssue {
  code: VllmIssueCode;
  /** The family whose figure is null because of it. */
  family: string;
  message: string;
}

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

const stripTotal = (name: string): string => (name.endsWith('_total') ? name.slice(0, -6) : name);
const isCreated = (s: MetricSample): boolean => s.name.endsWith('_created');

/** Engine ranks in numeric order ("2" before "10"). */
const byRank = (a: string, b: string): number => {
  const na = Number(a);
  const nb = Number(b);
  return Number.isFinite(na) && Number.isFinite(nb) ? na - nb : a < b ? -1 : a > b ? 1 : 0;
};

function seriesKey(s: MetricSample): string {
  return (
    s.name +
    Object.keys(s.labels)
      .sort()
      .map((k) => `\u0000${k}=${s.labels[k]}`)
      .join('')
  );
}

interface EngineSplit {
  /** Sum (or mean) over engines; null when unknown or when the family cannot be split honestly. */
  total: number | null;
  byEngine: Map<string, number | null>;
}

/**
 * Reads families against the exposition's engine set: the distinct `engine`
 * labels of the `vllm:` families (info gauges aside: `cache_config_info` had
 * no engine label in 0.8, `lora_requests_info` never has one).
 */
class FamilyReader {
  readonly engines: string[];
  readonly issues: VllmIssue[] = [];

  constructor(private readonly families: readonly MetricFamily[]) {
    const engines = new Set<string>();
    for (const f of families) {
      if (!f.name.startsWith('vllm:') || f.name.endsWith('_info')) continue;
      for (const s of f.samples) if (s.labels['engine'] !== undefined) engines.add(s.labels['engine']);
    }
    this.engines = [...engines].sort(byRank);
  }

  /** The first of `names` on the wire with samples (bare or `_total`). */
  find(...names: string[]): MetricFamily | undefined {
    for (const want of names) {
      const f = this.families.find((x) => stripTotal(x.name) === stripTotal(want));
      if (f && f.samples.some((s) => !isCreated(s))) return f;
    }
    return undefined;
  }

  issue(code: VllmIssueCode, family: string, message: string): void {
    if (!this.issues.some((i) => i.code === code && i.family === family)) this.issues.push({ code, family, message });
  }

  /**
   * The family's samples (those `where` keeps) by engine. `complete` is false,
   * with an issue, when some engine's series are missing or unlabelled. With no
   * engine label anywhere everything is under ''.
   */
  groups(f: MetricFamily, where: (s: MetricSample) => boolean = () => true): { byEngine: Map<string, MetricSample[]>; complete: boolean } {
    const byEngine = new Map<string, MetricSample[]>();
    const unlabelled: MetricSample[] = [];
    const seen = new Set<string>();
    let complete = true;
    for (const s of f.samples) {
      if (isCreated(s) || !where(s)) continue;
      const key = seriesKey(s);
      if (seen.has(key)) {
        this.issue(VllmIssueCode.DUPLICATE_SERIES, f.name, `${f.name}: the same series twice (${s.name}${JSON.stringify(s.labels)})`);
        complete = false;
        continue;
      }
      seen.add(key);
      const e = s.labels['engine'];
      if (e === undefined) unlabelled.push(s);
      else {
        const list = byEngine.get(e);
        if (list) list.push(s);
        else byEngine.set(e, [s]);
      }
    }
    if (this.engines.length === 0) {
      if (unlabelled.length > 0) byEngine.set('', unlabelled);
      return { byEngine, complete };
    }
    if (unlabelled.length > 0) {
      // One engine and no series of this family labelled: they can only be that engine's.
      if (byEngine.size === 0 && this.engines.length === 1) {
        byEngine.set(this.engines[0]!, unlabelled);
        return { byEngine, complete };
      }
      this.issue(
        VllmIssueCode.ENGINE_LABEL_MISSING,
        f.name,
        `${f.name}: ${unlabelled.length} series without the engine label beside engine${this.engines.length > 1 ? 's' : ''} ${this.engines.join(', ')}`,
      );
      return { byEngine, complete: false };
    }
    const missing = this.engines.filter((e) => !byEngine.has(e));
    if (missing.length > 0 && byEngine.size > 0) {
      this.issue(VllmIssueCode.ENGINE_SERIES_MISSING, f.name, `${f.name}: no series for engine ${missing.join(', ')}`);
      complete = false;
    }
    return { byEngine, complete };
  }

  /** Per engine the sum of its samples; across engines the sum or the mean. */
  split(f: MetricFamily | undefined, combine: 'sum' | 'mean', where?: (s: MetricSample) => boolean): EngineSplit {
    const byEngine = new Map<string, number | null>();
    if (!f) return { total: null, byEngine };
    const { byEngine: groups, complete } = this.groups(f, where);
    if (groups.size === 0) return { total: null, byEngine };
    for (const [e, samples] of groups) byEngine.set(e, engineValue(f, samples));
    const values = [...byEngine.values()];
    let total: number | null = null;
    if (complete && values.every((v) => v !== null)) {
      const sum = (values as number[]).reduce((a, v) => a + v, 0);
      total = combine === 'sum' ? sum : sum / values.length;
    }
    return { total, byEngine };
  }

  /** Buckets, sum and count summed across engines; null unless every engine has the same buckets up to +Inf. */
  histogram(f: MetricFamily | undefined): Histogram | null {
    if (!f) return null;
    const { byEngine: groups, complete } = this.groups(f);
    if (groups.size === 0 || !complete) return null;
    let total: Histogram | null = null;
    for (const [engine, samples] of groups) {
      const h = engineHistogram(samples);
      const sameBounds = total === null || (h !== null && h.buckets.length === total.buckets.length && h.buckets.every((b, i) => b.le === total!.buckets[i]!.le));
      if (h === null || !sameBounds) {
        const what = h === null ? `engine ${engine || '(none)'} has no +Inf bucket or a bad one` : `engine ${engine} has other bucket bounds`;
        this.issue(VllmIssueCode.HISTOGRAM_INCOMPLETE, f.name, `${f.name}: ${what}`);
        return null;
      }
      total =
        total === null
          ? h
          : { buckets: total.buckets.map((b, i) => ({ le: b.le, count: b.count + h.buckets[i]!.count })), sum: total.sum + h.sum, count: total.count + h.count };
    }
    return total;
  }
}

/**
 * One engine's value: the sum of its series (reasons, positions). In
 * prometheus_client's multiprocess mode a gauge without a multiprocess_mode
 * (0.10's kv_cache_usage_perc) gets one series per process, told apart by
 * `pid`: those say the same thing and are averaged, not added.
 */
function engineValue(f: MetricFamily, samples: readonly MetricSample[]): number | null {
  if (!samples.every((s) => Number.isFinite(s.value))) return null;
  if (f.type !== 'gauge' || !samples.some((s) => s.labels['pid'] !== undefined)) return samples.reduce((a, s) => a + s.value, 0);
  const perSeries = new Map<string, number[]>();
  for (const s of samples) {
    const { pid: _pid, ...rest } = s.labels;
    const key = seriesKey({ ...s, labels: rest });
    perSeries.set(key, [...(perSeries.get(key) ?? []), s.value]);
  }
  let total = 0;
  for (const values of perSeries.values()) total += values.reduce((a, v) => a + v, 0) / values.length;
  return total;
}

/** One engine's histogram from its `_bucket`, `_sum`, `_count` samples; null without a readable +Inf bucket. */
function engineHistogram(samples: readonly MetricSample[]): Histogram | null {
  const buckets = new Map<number, number>();
  let sum: number | null = null;
  let count: number | null = null;
  for (const s of samples) {
    if (s.name.endsWith('_bucket')) {
      const le = s.labels['le'] === '+Inf' ? Number.POSITIVE_INFINITY : Number(s.labels['le']);
      // A bucket count that is not finite is not a count: skip the bucket.
      if (Number.isNaN(le) || !Number.isFinite(s.value)) continue;
      buckets.set(le, s.value);
    } else if (s.name.endsWith('_sum')) sum = s.value;
    else if (s.name.endsWith('_count')) count = s.value;
  }
  const inf = buckets.get(Number.POSITIVE_INFINITY);
  if (inf === undefined) return null;
  return {
    buckets: [...buckets.entries()].sort((a, b) => a[0] - b[0]).map(([le, c]) => ({ le, count: c })),
    sum: sum !== null && Number.isFinite(sum) ? sum : 0,
    count: count !== null && Number.isFinite(count) ? count : inf,
  };
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
export function readVllmExposition(text: string, options: { maxBytes?: number } = {}): VllmExposition {
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
  const parsed = parsePrometheusText(body, { maxBytes: Number.POSITIVE_INFINITY });
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
