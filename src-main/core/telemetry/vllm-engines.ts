// Reading a vLLM family across data-parallel engines: the exposition's engine
// set, each family's series grouped by engine, and a total (sum or mean) or a
// histogram only when every engine's series is there; otherwise null and an
// issue naming the family. vllm-metrics.ts picks the families and figures.
import type { MetricFamily, MetricSample } from './prometheus.js';

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

export const stripTotal = (name: string): string => (name.endsWith('_total') ? name.slice(0, -6) : name);
export const isCreated = (s: MetricSample): boolean => s.name.endsWith('_created');

/** Engine ranks in numeric order ("2" before "10"). */
export const byRank = (a: string, b: string): number => {
  const na = Number(a);
  const nb = Number(b);
  return Number.isFinite(na) && Number.isFinite(nb) ? na - nb : a < b ? -1 : a > b ? 1 : 0;
};

/** Keys of parsed samples, kept while the sample lives (an unchanged line's sample is reused poll after poll: SampleLineMemo). */
const SAMPLE_KEYS = new WeakMap<MetricSample, string>();

function sampleKey(s: MetricSample): string {
  let key = SAMPLE_KEYS.get(s);
  if (key === undefined) {
    key = seriesKey(s);
    SAMPLE_KEYS.set(s, key);
  }
  return key;
}

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
export class FamilyReader {
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
      const key = sampleKey(s);
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
export function engineHistogram(samples: readonly MetricSample[]): Histogram | null {
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
