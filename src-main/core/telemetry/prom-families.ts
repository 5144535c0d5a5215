import type { MetricFamily, MetricSample } from './prometheus.js';
import { engineHistogram, isCreated, stripTotal, type Histogram } from './vllm-engines.js';

// Reading figures out of the families of a server whose series are few and
// whose label sets say nothing the console splits on (SGLang, TEI): a family
// by name (with or without `_total`), its samples summed across label sets,
// its histograms merged bucket by bucket. Unknown stays null.

/** The first of `names` on the wire with at least one sample that is not `_created`. */
export function findFamily(families: readonly MetricFamily[], ...names: string[]): MetricFamily | undefined {
  for (const want of names) {
    const f = families.find((x) => stripTotal(x.name) === stripTotal(want));
    if (f && f.samples.some((s) => !isCreated(s))) return f;
  }
  return undefined;
}

/** The samples of `f` that `keep` accepts (none of the `_created` ones). */
export function samplesOf(f: MetricFamily | undefined, keep: (s: MetricSample) => boolean = () => true): MetricSample[] {
  return (f?.samples ?? []).filter((s) => !isCreated(s) && keep(s));
}

/** Σ of the kept samples; null when there are none or one is not a finite number. */
export function sumOf(f: MetricFamily | undefined, keep?: (s: MetricSample) => boolean): number | null {
  const samples = samplesOf(f, keep);
  if (samples.length === 0 || !samples.every((s) => Number.isFinite(s.value))) return null;
  return samples.reduce((a, s) => a + s.value, 0);
}

/** The series key of a histogram sample: its labels without `le`. */
function seriesOf(s: MetricSample): string {
  return Object.keys(s.labels)
    .filter((k) => k !== 'le')
    .sort()
    .map((k) => `${k}=${s.labels[k]}`)
    .join('\u0000');
}

/**
 * The family's histograms summed across label sets (buckets bound by bound); null without one with a
 * +Inf bucket, or when two label sets have different bounds (a sum of unlike buckets means nothing).
 */
export function histogramOf(f: MetricFamily | undefined): Histogram | null {
  const bySeries = new Map<string, MetricSample[]>();
  for (const s of samplesOf(f)) {
    const key = seriesOf(s);
    bySeries.set(key, [...(bySeries.get(key) ?? []), s]);
  }
  let total: Histogram | null = null;
  for (const samples of bySeries.values()) {
    const h = engineHistogram(samples);
    if (h === null) return null;
    if (total === null) {
      total = h;
      continue;
    }
    const t: Histogram = total;
    if (h.buckets.length !== t.buckets.length || h.buckets.some((b, i) => b.le !== t.buckets[i]!.le)) return null;
    total = { buckets: t.buckets.map((b, i) => ({ le: b.le, count: b.count + h.buckets[i]!.count })), sum: t.sum + h.sum, count: t.count + h.count };
  }
  return total;
}
