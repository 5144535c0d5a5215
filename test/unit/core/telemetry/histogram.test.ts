import { describe, expect, it } from 'vitest';
import { histogramDelta, histogramQuantile } from '../../../../src-main/core/telemetry/index.js';

const INF = Number.POSITIVE_INFINITY;
const h = (counts: [number, number][], sum = 0) => ({ buckets: counts.map(([le, count]) => ({ le, count })), sum, count: counts[counts.length - 1]![1] });

describe('histogramQuantile (Prometheus histogram_quantile method)', () => {
  // 10 observations: 4 in (0, 0.1], 4 in (0.1, 1], 2 in (1, +Inf)
  const buckets = h([[0.1, 4], [1, 8], [INF, 10]]).buckets;

  it('interpolates linearly inside the bucket that holds the rank', () => {
    // p50: rank 5 → bucket (0.1, 1] holds ranks 5..8: 0.1 + 0.9 × (5 − 4) / 4 = 0.325
    expect(histogramQuantile(0.5, buckets).value).toBeCloseTo(0.325, 10);
    // p25: rank 2.5 → first bucket, lower bound 0: 0.1 × 2.5 / 4 = 0.0625
    expect(histogramQuantile(0.25, buckets).value).toBeCloseTo(0.0625, 10);
  });

  it('names the bucket bound the quantile falls under (all the histogram can say for sure)', () => {
    expect(histogramQuantile(0.5, buckets).bucketLe).toBe(1);
    expect(histogramQuantile(0.25, buckets).bucketLe).toBe(0.1);
    expect(histogramQuantile(0.95, buckets).bucketLe).toBe(1);
    expect(histogramQuantile(0.5, h([[0.1, 0], [INF, 0]]).buckets).bucketLe).toBeNull();
  });

  it('answers the highest finite bound when the rank falls in +Inf', () => {
    // p95: rank 9.5 > 8 → +Inf bucket → 1
    expect(histogramQuantile(0.95, buckets).value).toBe(1);
  });

  it('is unavailable (null) with no observations, no +Inf bucket or q out of range', () => {
    expect(histogramQuantile(0.5, h([[0.1, 0], [INF, 0]]).buckets).value).toBeNull();
    expect(histogramQuantile(0.5, [{ le: 0.1, count: 3 }, { le: 1, count: 5 }]).value).toBeNull();
    expect(histogramQuantile(1.5, buckets).value).toBeNull();
    expect(histogramQuantile(0.5, []).value).toBeNull();
  });

  it('raises decreasing buckets to keep counts monotonic, and says so', () => {
    const r = histogramQuantile(0.5, h([[0.1, 4], [0.5, 2], [1, 8], [INF, 10]]).buckets);
    expect(r.monotonicFixes).toBe(1);
    // after the fix counts are 4,4,8,10: rank 5 lies in (0.5, 1]: 0.5 + 0.5 × 1/4 = 0.625
    expect(r.value).toBeCloseTo(0.625, 10);
  });

  it('ignores NaN buckets', () => {
    expect(histogramQuantile(0.5, [...buckets, { le: Number.NaN, count: 3 }]).value).toBeCloseTo(0.325, 10);
  });
});

describe('histogramDelta', () => {
  it('subtracts the window start from its end', () => {
    const d = histogramDelta(h([[0.1, 4], [1, 8], [INF, 10]], 5), h([[0.1, 5], [1, 12], [INF, 20]], 15))!;
    expect(d.buckets.map((b) => b.count)).toEqual([1, 4, 10]);
    expect(d.count).toBe(10);
    expect(d.sum).toBe(10);
    // p50 of the delta only: rank 5 → (0.1, 1]: 0.1 + 0.9 × 4/4 = 1.0
    expect(histogramQuantile(0.5, d.buckets).value).toBeCloseTo(1, 10);
  });

  it('after a counter reset uses the end values alone (they count from the restart)', () => {
    const end = h([[0.1, 1], [1, 2], [INF, 2]]);
    expect(histogramDelta(h([[0.1, 4], [1, 8], [INF, 10]]), end)).toEqual(end);
  });

  it('uses the end values when the bucket layout changed (a version upgrade)', () => {
    const end = h([[0.5, 1], [INF, 2]]);
    expect(histogramDelta(h([[0.1, 4], [1, 8], [INF, 10]]), end)).toEqual(end);
  });
});
