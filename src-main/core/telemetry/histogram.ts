import type { Histogram, HistogramBucket } from './vllm-metrics.js';

// Percentiles from cumulative Prometheus histograms.
//
// Method (the same as PromQL `histogram_quantile(q, increase(x_bucket[w]))`):
// 1. take the DELTA of every cumulative bucket between the start and the end of
//    the window (a counter that went down means the server restarted: the end
//    values alone are then the delta, as they count from the restart);
// 2. force the cumulative counts to be monotonic (a bucket lower than the one
//    below it is raised to it, as Prometheus does) and count such fixes;
// 3. rank = q × count(+Inf); find the first bucket whose cumulative count
//    reaches the rank and interpolate linearly between its lower bound (the
//    previous bucket's `le`, 0 for the first bucket) and its upper bound;
// 4. a rank that falls in the +Inf bucket answers the highest finite bound.
// With no observations in the window the answer is null (unavailable), never 0.

export interface QuantileResult {
  /** Linear interpolation inside the bucket the rank falls in (PromQL's estimate). */
  value: number | null;
  /**
   * That bucket's upper bound (`le`): all the histogram can say for sure is that the quantile is
   * at most this. The highest finite bound when the rank falls in +Inf (the quantile is then above it).
   */
  bucketLe: number | null;
  /** Observations in the window. */
  count: number;
  /** Buckets that had to be raised to keep the counts monotonic (bad input). */
  monotonicFixes: number;
}

/** `end − start` per bucket; null when the bucket layouts differ; `end` alone after a reset. */
export function histogramDelta(start: Histogram | null, end: Histogram | null): Histogram | null {
  if (end === null) return null;
  if (start === null) return end;
  if (start.buckets.length !== end.buckets.length || start.buckets.some((b, i) => b.le !== end.buckets[i]!.le)) return end;
  const reset = end.count < start.count || end.buckets.some((b, i) => b.count < start.buckets[i]!.count);
  if (reset) return end;
  return {
    buckets: end.buckets.map((b, i) => ({ le: b.le, count: b.count - start.buckets[i]!.count })),
    sum: end.sum - start.sum,
    count: end.count - start.count,
  };
}

export function histogramQuantile(q: number, buckets: readonly HistogramBucket[]): QuantileResult {
  const clean = buckets.filter((b) => !Number.isNaN(b.le) && Number.isFinite(b.count)).sort((a, b) => a.le - b.le);
  const last = clean[clean.length - 1];
  if (!last || last.le !== Number.POSITIVE_INFINITY || clean.length < 2 || !(q >= 0 && q <= 1)) {
    return { value: null, bucketLe: null, count: last?.count ?? 0, monotonicFixes: 0 };
  }
  let fixes = 0;
  let runningMax = 0;
  const counts = clean.map((b) => {
    if (b.count < runningMax) {
      fixes++;
      return runningMax;
    }
    runningMax = b.count;
    return b.count;
  });
  const total = counts[counts.length - 1]!;
  if (total <= 0) return { value: null, bucketLe: null, count: 0, monotonicFixes: fixes };
  const rank = q * total;
  let i = counts.findIndex((c) => c >= rank);
  if (i < 0) i = counts.length - 1;
  if (i === clean.length - 1) return { value: clean[clean.length - 2]!.le, bucketLe: clean[clean.length - 2]!.le, count: total, monotonicFixes: fixes };
  const upper = clean[i]!.le;
  let lower = 0;
  let below = 0;
  if (i > 0) {
    lower = clean[i - 1]!.le;
    below = counts[i - 1]!;
  } else if (upper <= 0) {
    return { value: upper, bucketLe: upper, count: total, monotonicFixes: fixes };
  }
  const inBucket = counts[i]! - below;
  const value = inBucket <= 0 ? upper : lower + ((upper - lower) * (rank - below)) / inBucket;
  return { value, bucketLe: upper, count: total, monotonicFixes: fixes };
}
