import { describe, expect, it } from 'vitest';
import { DEFAULT_ADVISOR_SETTINGS, judge, type WindowFigures } from '../../../../src-main/core/advisor/index.js';

const s = DEFAULT_ADVISOR_SETTINGS;

/** Batch queuing 20 s in every round of a 15-minute window, interactive calm, GPU at 50 %. */
function figures(extra: Partial<WindowFigures> = {}): WindowFigures {
  return {
    samples: 900,
    requests: { interactive: 100, system: 0, batch: 500 },
    waitP95Ms: { interactive: 0, system: null, batch: 20_000 },
    batchQueuedPct: 90,
    interactiveQueuedPct: 0,
    idleReserveP50: 1,
    gpuUtilP95Pct: 50,
    gpuMemoryP95Pct: 88,
    kvCacheP95Pct: 40,
    slotLimit: 16,
    interactiveInFlightP95: 1,
    interactiveQueuedP95: 0,
    batchCrowdsPct: null,
    caps: { reservedInteractive: 4, interactive: 16, system: 8, batch: 8 },
    slots: 16,
    spanMs: 900_000,
    capsChanged: false,
    ...extra,
  };
}

describe('advisor rules', () => {
  it('raises batch by at most half per step, aiming the busier of GPU and KV at 90 %', () => {
    expect(judge(figures(), s, true).proposal).toMatchObject({ kind: 'raise_batch', title: 'raise batch slots 8 → 12', proposed: { batch: 12 } });
    // KV at 75 % is the busier: 8 × 90/75 = 9.6 → 10.
    expect(judge(figures({ kvCacheP95Pct: 75 }), s, true).proposal?.proposed.batch).toBe(10);
    // Between the target and saturation: one more slot, never none.
    expect(judge(figures({ gpuUtilP95Pct: 93 }), s, true).proposal?.proposed.batch).toBe(9);
  });

  it('never proposes more than the slots the server reports (less the interactive reserve)', () => {
    // 5 × 1.5 would be 8; the server runs 10 sequences, 4 of them held for interactive.
    const j = judge(figures({ slotLimit: 10, caps: { reservedInteractive: 4, interactive: 16, system: 8, batch: 5 } }), s, true);
    expect(j.proposal).toMatchObject({ kind: 'raise_batch', proposed: { batch: 6 } });
    expect(j.because.join('\n')).toContain('the server reports 10');
  });

  it('a saturated GPU or KV cache gets no raise; unknown GPU figures get none either, and say so', () => {
    expect(judge(figures({ gpuUtilP95Pct: 95 }), s, true)).toMatchObject({ verdict: 'gpu_limit', proposal: null });
    expect(judge(figures({ kvCacheP95Pct: 90 }), s, true)).toMatchObject({ verdict: 'gpu_limit', proposal: null });
    const unknown = judge(figures({ gpuUtilP95Pct: null, kvCacheP95Pct: null }), s, true);
    expect(unknown).toMatchObject({ verdict: 'no_gpu_figures', proposal: null });
    expect(unknown.because.join('\n')).not.toMatch(/ 0 %/);
  });

  it('lowers an idle reserve, never below 1 while interactive has traffic', () => {
    const atEdge = { caps: { reservedInteractive: 4, interactive: 8, system: 4, batch: 4 }, slots: 8, slotLimit: 8 };
    expect(judge(figures({ ...atEdge, idleReserveP50: 4, interactiveInFlightP95: 0 }), s, true).proposal).toMatchObject({
      kind: 'lower_reserve',
      proposed: { reservedInteractive: 1, batch: 7 },
    });
    expect(judge(figures({ ...atEdge, idleReserveP50: 4, interactiveInFlightP95: 0, requests: { interactive: 0, system: 0, batch: 500 } }), s, true).proposal?.proposed.reservedInteractive).toBe(0);
    // Interactive that waits sometimes is not "never waits": the slots are the limit.
    expect(judge(figures({ ...atEdge, idleReserveP50: 4, interactiveQueuedPct: 10 }), s, true)).toMatchObject({ verdict: 'slot_limit', proposal: null });
  });

  it('raises the reserve when batch crowds interactive out, keeping a slot for batch traffic', () => {
    const crowded = { waitP95Ms: { interactive: 4_000, system: null, batch: 1_000 }, interactiveQueuedPct: 40, batchCrowdsPct: 100, interactiveQueuedP95: 2 };
    expect(judge(figures({ ...crowded, caps: { reservedInteractive: 0, interactive: 8, system: 4, batch: 8 }, slots: 8, slotLimit: 8 }), s, true).proposal).toMatchObject({
      kind: 'raise_reserve',
      proposed: { reservedInteractive: 2 },
    });
    // 4 slots, 3 reserved, batch has traffic: a 4th reserved slot would starve it.
    expect(judge(figures({ ...crowded, caps: { reservedInteractive: 3, interactive: 4, system: 1, batch: 1 }, slots: 4, slotLimit: 4 }), s, true)).toMatchObject({ verdict: 'slot_limit', proposal: null });
  });

  it('no verdict on too little traffic, too few rounds, or an upstream that is not ready', () => {
    expect(judge(figures({ requests: { interactive: 5, system: 0, batch: 10 } }), s, true).verdict).toBe('insufficient_traffic');
    expect(judge(figures({ samples: 59 }), s, true).verdict).toBe('insufficient_traffic');
    expect(judge(figures({ samples: 59, capsChanged: true, spanMs: 59_000 }), s, true).because[0]).toMatch(/in the 59 s since the caps last changed/);
    expect(judge(figures(), s, false).verdict).toBe('not_ready');
  });

  it('balanced when nothing queues', () => {
    expect(judge(figures({ waitP95Ms: { interactive: 0, system: null, batch: 200 }, batchQueuedPct: 2 }), s, true)).toMatchObject({ verdict: 'balanced', proposal: null });
  });
});
