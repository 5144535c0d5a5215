import { describe, expect, it } from 'vitest';
import type { TrafficClass } from '../../../src-preload/contract/index.js';
import { FakeClock } from '../../../src-main/core/base/index.js';
import { openStore, type Store } from '../../../src-main/core/store/index.js';
import { PoolTrace, UPSTREAM, type TraceSpec } from './pool-trace.js';

// Issue #30 item 6, replayed: generated pool traces (fixed seeds) through the real
// AdvisorService on a FakeClock. The right advice on the saturated-batch trace,
// none where the answer is "no change", and rejections that hold until the figures move.

const MIN = 60_000;
const newStore = (): Store => openStore({ file: ':memory:', clock: new FakeClock() });
const caps = (reservedInteractive: number, interactive: number, system: number, batch: number) => ({ reservedInteractive, interactive, system, batch });

/** Batch arrives faster than its 8 slots serve; the GPU runs at about 5 % per sequence (headroom). */
const SATURATED_BATCH: TraceSpec = {
  slots: 16,
  caps: caps(4, 16, 8, 8),
  load: { interactive: { ratePerS: 0.3, serviceS: 3 }, batch: { ratePerS: 1.5, serviceS: 6 } },
  utilPerSeqPct: 5,
  kvPerSeqPct: 5,
};

function replay(spec: TraceSpec, minutes = 15, store = newStore()): PoolTrace {
  const t = new PoolTrace(spec, store);
  t.run(minutes * MIN);
  return t;
}

describe('advisor replay: advice where it helps', () => {
  it('saturated batch with GPU headroom → raise batch slots 8 → 12, with the figures behind it', () => {
    const t = replay(SATURATED_BATCH);
    const { recommendations, upstreams, windowMs } = t.advisor.list();
    expect(windowMs).toBe(15 * MIN);
    expect(recommendations).toHaveLength(1);
    const [rec] = recommendations;
    expect(rec).toMatchObject({ upstream: UPSTREAM, kind: 'raise_batch', title: 'raise batch slots 8 → 12', current: caps(4, 16, 8, 8), proposed: caps(4, 16, 8, 12), slots: 16 });
    expect(rec!.figures.waitP95Ms.batch).toBeGreaterThanOrEqual(5_000);
    expect(rec!.figures.gpuUtilP95Pct).toBeLessThan(95);
    expect(rec!.figures.kvCacheP95Pct).toBeLessThan(90);
    expect(rec!.because.join('\n')).toMatch(/batch queue wait p95 \d+\.\d s over the last 15 min/);
    expect(rec!.because.join('\n')).toMatch(/GPU utilisation p95 \d+ %, KV cache p95 \d+ %/);
    expect(upstreams).toEqual([expect.objectContaining({ upstream: UPSTREAM, verdict: 'recommendation' })]);
    // Stable for the same advice on the same figures a moment later.
    t.run(MIN / 2);
    expect(t.advisor.list().recommendations.map((r) => r.id)).toEqual([rec!.id]);
  });

  it('nothing is applied by itself: 45 minutes of saturated batch leave the caps alone', () => {
    const t = replay(SATURATED_BATCH, 45);
    expect(t.advisor.list().recommendations).toHaveLength(1);
    expect(t.setCapsCalls).toEqual([]);
    expect(t.caps).toEqual(SATURATED_BATCH.caps);
  });

  it('applying it changes the caps through setCaps with the caller, audits advisor.applied, and batch waits less', () => {
    const store = newStore();
    const t = replay(SATURATED_BATCH, 15, store);
    const [rec] = t.advisor.list().recommendations;
    const before = t.waitP95('batch', t.clock.now() - 15 * MIN)!;
    expect(t.advisor.apply(rec!.id, 'test')).toEqual({ upstream: UPSTREAM, caps: caps(4, 16, 8, 12) });
    expect(t.setCapsCalls).toEqual([{ upstream: UPSTREAM, caps: caps(4, 16, 8, 12), caller: 'test' }]);
    const [row] = store.audit.list({ type: 'advisor.applied', limit: 1 });
    expect(row).toMatchObject({ target: UPSTREAM, actor: expect.stringMatching(/^operator:.+@test$/), payload: { id: rec!.id, kind: 'raise_batch', before: caps(4, 16, 8, 8), after: caps(4, 16, 8, 12) } });
    expect(() => t.advisor.apply(rec!.id, 'test')).toThrow(expect.objectContaining({ code: 'ADVISOR_UNKNOWN_RECOMMENDATION' }));
    const appliedAt = t.clock.now();
    t.run(15 * MIN);
    const after = t.waitP95('batch', appliedAt + 5 * MIN)!;
    // Measured on the trace: the new caps serve the same load with shorter batch waits.
    expect(after).toBeLessThan(before / 2);
    console.log(`saturated batch trace: batch queue wait p95 ${(before / 1000).toFixed(1)} s with batch 8 → ${(after / 1000).toFixed(1)} s with batch 12`);
  });

  it('interactive never waits while batch queues behind 3 idle reserved slots → lower the reserve 4 → 2', () => {
    const t = replay({ slots: 8, caps: caps(4, 8, 4, 4), load: { interactive: { ratePerS: 0.4, serviceS: 2 }, batch: { ratePerS: 2.2, serviceS: 2 } }, utilPerSeqPct: 6, kvPerSeqPct: 5 });
    const { recommendations } = t.advisor.list();
    expect(recommendations).toHaveLength(1);
    expect(recommendations[0]).toMatchObject({ kind: 'lower_reserve', title: 'lower the interactive reserve 4 → 2', proposed: caps(2, 8, 4, 6) });
    expect(recommendations[0]!.figures.idleReserveP50).toBe(3);
  });

  it('interactive waits with batch filling every slot → raise the reserve 0 → 2', () => {
    const t = replay({ slots: 8, caps: caps(0, 8, 4, 8), load: { interactive: { ratePerS: 0.5, serviceS: 2 }, batch: { clients: 12, serviceS: 8 } }, utilPerSeqPct: 6, kvPerSeqPct: 5 });
    const { recommendations } = t.advisor.list();
    expect(recommendations).toHaveLength(1);
    expect(recommendations[0]).toMatchObject({ kind: 'raise_reserve', title: 'raise the interactive reserve 0 → 2', proposed: caps(2, 8, 4, 8) });
    expect(recommendations[0]!.figures.waitP95Ms.interactive).toBeGreaterThanOrEqual(1_000);
  });
});

describe('advisor replay: "no change" is the right answer', () => {
  for (let c = 1; c <= 8; c++) {
    it(`balanced closed-loop traffic at c=${c} → no recommendation`, () => {
      const load: Partial<Record<TrafficClass, { clients: number; serviceS: number; thinkS: number }>> = {
        interactive: { clients: Math.ceil(c / 2), serviceS: 3, thinkS: 1 },
        batch: { clients: Math.floor(c / 2), serviceS: 5, thinkS: 0.5 },
      };
      const t = replay({ slots: 8, caps: caps(2, 8, 4, 6), load, utilPerSeqPct: 6, kvPerSeqPct: 5, seed: c });
      const { recommendations, upstreams } = t.advisor.list();
      expect(recommendations).toEqual([]);
      expect(upstreams[0]).toMatchObject({ verdict: 'balanced', because: [expect.stringMatching(/^balanced over the last 15 min/), expect.any(String)] });
    });
  }

  it('GPU saturated (utilisation p95 ≥ 95 %) with batch queuing → no slot raise; the GPU is the limit', () => {
    const t = replay({ ...SATURATED_BATCH, utilPerSeqPct: 13 });
    const { recommendations, upstreams } = t.advisor.list();
    expect(recommendations).toEqual([]);
    expect(upstreams[0]!.verdict).toBe('gpu_limit');
    expect(upstreams[0]!.because.join('\n')).toMatch(/the GPU is the limit, more slots would not help — another replica would/);
  });

  it('KV cache saturated (p95 ≥ 90 %) with batch queuing → no slot raise', () => {
    const t = replay({ ...SATURATED_BATCH, kvPerSeqPct: 12 });
    expect(t.advisor.list().recommendations).toEqual([]);
    expect(t.advisor.list().upstreams[0]!.verdict).toBe('gpu_limit');
  });

  it('too little traffic in the window → no verdict, and says so', () => {
    const t = replay({ slots: 8, caps: caps(2, 8, 4, 6), load: { interactive: { ratePerS: 0.01, serviceS: 2 } }, utilPerSeqPct: 6, kvPerSeqPct: 5 });
    const { recommendations, upstreams } = t.advisor.list();
    expect(recommendations).toEqual([]);
    expect(upstreams[0]).toMatchObject({ verdict: 'insufficient_traffic', because: [expect.stringMatching(/^not enough traffic in the last 15 min: \d+ requests/)] });
  });
});

describe('advisor replay: rejections', () => {
  it('rejected, then the same figures (and a restart) → not repeated; audited with the reason', () => {
    const store = newStore();
    const t = replay(SATURATED_BATCH, 15, store);
    const [rec] = t.advisor.list().recommendations;
    expect(t.advisor.reject(rec!.id, 'nightly batch may wait', 'test')).toEqual({ id: rec!.id });
    expect(store.audit.list({ type: 'advisor.rejected', limit: 1 })[0]).toMatchObject({ target: UPSTREAM, payload: { id: rec!.id, reason: 'nightly batch may wait', proposed: caps(4, 16, 8, 12) } });
    t.run(10 * MIN);
    const after = t.advisor.list();
    expect(after.recommendations).toEqual([]);
    expect(after.upstreams[0]).toMatchObject({ verdict: 'rejected', because: [expect.stringContaining('nightly batch may wait'), ...Array(4).fill(expect.any(String))] });
    // A restart reads the rejection back from the store: the same trace brings nothing back.
    void t.advisor.dispose();
    const again = replay(SATURATED_BATCH, 15, store);
    expect(again.advisor.list().recommendations).toEqual([]);
    expect(again.advisor.list().upstreams[0]!.verdict).toBe('rejected');
  });

  it('rejected, then the figures change materially → shown again', () => {
    const t = replay(SATURATED_BATCH);
    const [rec] = t.advisor.list().recommendations;
    t.advisor.reject(rec!.id, undefined, 'test');
    // Less batch traffic: it still queues, but its p95 wait falls well over 20 %.
    t.setLoad({ ...SATURATED_BATCH.load, batch: { ratePerS: 1.0, serviceS: 6 } });
    // The backlog drains first; the window then holds only the new traffic.
    t.run(30 * MIN);
    const { recommendations } = t.advisor.list();
    expect(recommendations).toHaveLength(1);
    expect(recommendations[0]!.kind).toBe('raise_batch');
    expect(recommendations[0]!.id).not.toBe(rec!.id);
    expect(Math.abs(recommendations[0]!.figures.waitP95Ms.batch! - rec!.figures.waitP95Ms.batch!) / rec!.figures.waitP95Ms.batch!).toBeGreaterThanOrEqual(0.2);
  });

  it('caps changed by hand meanwhile → ADVISOR_STALE, nothing applied', () => {
    const t = replay(SATURATED_BATCH);
    const [rec] = t.advisor.list().recommendations;
    t.caps = caps(4, 16, 8, 10);
    expect(() => t.advisor.apply(rec!.id, 'test')).toThrow(expect.objectContaining({ code: 'ADVISOR_STALE' }));
    expect(t.setCapsCalls).toEqual([]);
    expect(t.caps).toEqual(caps(4, 16, 8, 10));
  });
});
