import { describe, expect, it } from 'vitest';
import { ServiceDeriver, emptyServiceReading, type ServiceReading } from '../../../../src-main/core/telemetry/index.js';

const INF = Number.POSITIVE_INFINITY;
const hist = (c: [number, number, number]) => ({
  buckets: [
    { le: 0.1, count: c[0] },
    { le: 1, count: c[1] },
    { le: INF, count: c[2] },
  ],
  sum: 0,
  count: c[2],
});

function reading(p: Partial<ServiceReading>): ServiceReading {
  return { ...emptyServiceReading('vllm'), ...p };
}

describe('ServiceDeriver', () => {
  it('turns counters into per-second rates and skips the interval of a reset', () => {
    const d = new ServiceDeriver();
    expect(d.push(reading({ generationTokensTotal: 1000, promptTokensTotal: 0 }), 0).genTokPerS).toBeNull();
    const b = d.push(reading({ generationTokensTotal: 1072.47 * 1 + 0, promptTokensTotal: 500 }), 1000);
    expect(b.genTokPerS).toBeCloseTo(72.47, 6);
    expect(b.promptTokPerS).toBe(500);
    // server restarted: counter went back to 20 → that interval is skipped
    expect(d.push(reading({ generationTokensTotal: 20, promptTokensTotal: 10 }), 2000).genTokPerS).toBeNull();
    expect(d.push(reading({ generationTokensTotal: 120, promptTokensTotal: 10 }), 4000).genTokPerS).toBe(50);
  });

  it('computes prefix-cache hit rate and percentiles from deltas over the window', () => {
    const d = new ServiceDeriver({ windowMs: 60_000 });
    // before the window: 10 requests all fast
    d.push(reading({ prefixCacheQueries: 1000, prefixCacheHits: 900, ttft: hist([10, 10, 10]) }), 0);
    // 60 s later: 10 more requests, 4 in (0.1, 1], 6 in (1, +Inf); hits 100 of 400 queries
    const f = d.push(reading({ prefixCacheQueries: 1400, prefixCacheHits: 1000, ttft: hist([10, 14, 20]) }), 60_000);
    expect(f.prefixHitPct).toBeCloseTo(25, 10);
    expect(f.latencySamples).toBe(10);
    // delta buckets 0, 4, 10: p50 rank 5 → +Inf bucket → 1; with cumulative totals it would read 0.1-ish
    expect(f.ttftP50S).toBe(1);
    // p95 also lands in +Inf → highest finite bound
    expect(f.ttftP95S).toBe(1);
    // The window starts at the newest snapshot at or before now − 60 s.
    // At 90 s that is still t=0: delta 2, 12, 12 → p50 rank 6 → 0.1 + 0.9 × 4/10 = 0.46
    const g = d.push(reading({ prefixCacheQueries: 1400, prefixCacheHits: 1000, ttft: hist([12, 22, 22]) }), 90_000);
    expect(g.ttftP50S).toBeCloseTo(0.46, 10);
    // At 125 s it is the 60 s snapshot: delta 2, 8, 2 (bad input: +Inf below le=1) → raised to 2, 8, 8:
    // p50 rank 4 → 0.1 + 0.9 × 2/6 = 0.4
    const k = d.push(reading({ prefixCacheQueries: 1400, prefixCacheHits: 1000, ttft: hist([12, 22, 22]) }), 125_000);
    expect(k.ttftP50S).toBeCloseTo(0.4, 10);
    // no queries in the window: the ratio since the server started (1000 / 1400), said so — not 0
    expect(k.prefixHitPct).toBeCloseTo((1000 / 1400) * 100, 10);
    expect(k.prefixHitScope).toBe('cumulative');
  });

  it('derives KV tokens in use from usage × capacity, and percent 0–100', () => {
    const d = new ServiceDeriver();
    const f = d.push(reading({ kvCacheUsage: 0.25, kvCapacityTokens: 137_000 }), 0);
    expect(f.kvCachePct).toBe(25);
    expect(f.kvTokensInUse).toBe(34_250);
    expect(d.push(reading({ kvCacheUsage: null, kvCapacityTokens: 137_000 }), 1000).kvTokensInUse).toBeNull();
  });

  it('keeps a bounded history whatever the poll rate', () => {
    const d = new ServiceDeriver({ windowMs: 60_000 });
    for (let t = 0; t < 600_000; t += 100) d.push(reading({ ttft: hist([t, t, t]) }), t);
    expect((d as unknown as { history: unknown[] }).history.length).toBeLessThanOrEqual(40);
  });
});
