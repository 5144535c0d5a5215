import { describe, expect, it } from 'vitest';
import { ServiceDeriver, emptyServiceReading, serviceReadingFromVllm, type ServiceReading } from '../../../../src-main/core/telemetry/index.js';
import { readVllmExposition } from '../../../../src-main/core/telemetry/vllm-metrics.js';
import { vllmDump, type VllmDumpName } from '../../../fixtures/vllm/dumps.js';

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

const dumpReading = (name: VllmDumpName): ServiceReading => serviceReadingFromVllm(readVllmExposition(vllmDump(name)).metrics);

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
    expect(f.ttftP95LeS).toBe(1);
    // The window starts at the newest snapshot at or before now − 60 s.
    // At 90 s that is still t=0: delta 2, 12, 12 → p50 rank 6 → 0.1 + 0.9 × 4/10 = 0.46
    const g = d.push(reading({ prefixCacheQueries: 1400, prefixCacheHits: 1000, ttft: hist([12, 22, 22]) }), 90_000);
    expect(g.ttftP50S).toBeCloseTo(0.46, 10);
    // p95 rank 11.4 → bucket (0.1, 1]: interpolated 0.1 + 0.9 × 9.4/10 = 0.946, under the bound 1
    expect(g.ttftP95S).toBeCloseTo(0.946, 10);
    expect(g.ttftP95LeS).toBe(1);
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

  it('vLLM 0.12 with two engines, one reading: prefix hit 36.8 % since start (cumulative), KV averaged, 2 engines', () => {
    const r = dumpReading('vllm-0.12.x-dp2.txt');
    expect(r.engineCount).toBe(2);
    const f = new ServiceDeriver().push(r, 0);
    expect(f.prefixHitPct).toBeCloseTo(36.8, 10);
    expect(f.prefixHitScope).toBe('cumulative');
    expect(f.kvCachePct).toBeCloseTo(50, 10);
    expect(f.kvTokensInUse).toBe(320_000);
    expect(f.running).toBe(11);
    expect(f.perEngine?.map((e) => [e.engine, e.running, e.waiting, e.kvCachePct, e.genTokPerS])).toEqual([
      ['0', 6, 2, 40, null],
      ['1', 5, 0, 60, null],
    ]);
    // no window yet: no percentiles, no rates
    expect([f.ttftP50S, f.genTokPerS]).toEqual([null, null]);
  });

  it('vLLM 0.12 with two engines read 30 s apart: figures over the window, per-engine rates; cumulative again when the window sees no queries', () => {
    const d = new ServiceDeriver({ windowMs: 60_000 });
    const t0 = d.push(dumpReading('vllm-0.12.x-dp2-t0.txt'), 0);
    expect(t0.prefixHitPct).toBeCloseTo((26_800 / 60_000) * 100, 10);
    expect(t0.prefixHitScope).toBe('cumulative');
    const t1 = d.push(dumpReading('vllm-0.12.x-dp2.txt'), 30_000);
    // between the two: 10 000 hits of 40 000 queries, not the 36.8 % since start
    expect(t1.prefixHitPct).toBeCloseTo(25, 10);
    expect(t1.prefixHitScope).toBe('window');
    expect(t1.genTokPerS).toBeCloseTo(5_700 / 30, 10);
    expect(t1.promptTokPerS).toBeCloseTo(11_400 / 30, 10);
    expect(t1.requestsPerS).toBeCloseTo(23 / 30, 10);
    expect(t1.perEngine?.map((e) => e.genTokPerS)).toEqual([100, 90]);
    // percentiles of the 23 requests in the window (slower: ttft median 0.6 s), not of all 210
    expect(t1.latencySamples).toBe(23);
    expect(t1.ttftP50S).toBeCloseTo(0.625, 10);
    expect(new ServiceDeriver().push(dumpReading('vllm-0.12.x-dp2.txt'), 0).ttftP50S).toBeNull();
    // 70 s later, same counters: the window (t1 → now) saw no queries
    const idle = d.push(dumpReading('vllm-0.12.x-dp2.txt'), 100_000);
    expect(idle.prefixHitPct).toBeCloseTo(36.8, 10);
    expect(idle.prefixHitScope).toBe('cumulative');
    expect(idle.genTokPerS).toBe(0);
  });

  it('speculative decoding: accepted ÷ drafted over the window, since start when the window drafted nothing', () => {
    const spec = dumpReading('vllm-0.12.x-spec-decode.txt');
    const d = new ServiceDeriver();
    expect(d.push(spec, 0).specAcceptancePct).toBeCloseTo(67.5, 10);
    const w = d.push({ ...spec, specDraftTokensTotal: 13_000, specAcceptedTokensTotal: 8_500 }, 10_000);
    expect(w.specAcceptancePct).toBeCloseTo(40, 10);
    const idle = d.push({ ...spec, specDraftTokensTotal: 13_000, specAcceptedTokensTotal: 8_500 }, 80_000);
    expect(idle.specAcceptancePct).toBeCloseTo((8_500 / 13_000) * 100, 10);
    expect(new ServiceDeriver().push(dumpReading('vllm-0.12.x.txt'), 0).specAcceptancePct).toBeNull();
  });

  it('cached prompt tokens: share over the window, since start when the window had no prompt tokens', () => {
    const newest = dumpReading('vllm-newest.txt');
    const d = new ServiceDeriver();
    expect(d.push(newest, 0).promptCacheReusePct).toBeCloseTo(37.5, 10);
    const w = d.push({ ...newest, promptTokensTotal: 410_000, promptTokensCachedTotal: 159_000 }, 5_000);
    expect(w.promptCacheReusePct).toBeCloseTo(90, 10);
    // llama-server's own share of the running requests wins
    expect(d.push({ ...newest, promptCacheReuse: 0.5 }, 6_000).promptCacheReusePct).toBe(50);
  });

  it('a counter that restarted inside the window counts from the restart', () => {
    const d = new ServiceDeriver();
    d.push(reading({ prefixCacheQueries: 100_000, prefixCacheHits: 36_800 }), 0);
    const f = d.push(reading({ prefixCacheQueries: 1_000, prefixCacheHits: 900 }), 10_000);
    expect(f.prefixHitPct).toBeCloseTo(90, 10);
    expect(f.prefixHitScope).toBe('window');
  });

  it('per-engine rates follow the engine set: an engine that went away starts afresh when it returns', () => {
    const d = new ServiceDeriver();
    const engines = (gen: number[]) => reading({ perEngine: gen.map((g, i) => ({ engine: String(i), running: 1, waiting: 0, kvCacheUsage: 0.5, generationTokensTotal: g })) });
    d.push(engines([0, 0]), 0);
    expect(d.push(engines([100, 50]), 1_000).perEngine?.map((e) => e.genTokPerS)).toEqual([100, 50]);
    expect(d.push(engines([200]), 2_000).perEngine?.map((e) => e.genTokPerS)).toEqual([100]);
    expect(d.push(engines([300, 150]), 3_000).perEngine?.map((e) => e.genTokPerS)).toEqual([100, null]);
    expect(d.push(reading({}), 4_000).perEngine).toBeNull();
  });
});
