import { describe, expect, it } from 'vitest';
import { CounterRate, LiveTokenCounter, type LlamaSlot } from '../../../../src-main/core/telemetry/index.js';

// llama-server b10573 moves tokens_predicted_total only when a request
// finishes; /slots shows n_decoded of the running ones. A run like the one
// the issue measured (four streams on four slots, requests of different
// lengths) must give a generation rate above zero in every 1 s sample, and
// the credited tokens must add up to what was generated.

interface Req {
  task: number;
  slot: number;
  prompt: number;
  length: number;
  decoded: number;
}

function slot(id: number, r: Req | null): LlamaSlot {
  return {
    id,
    nCtx: 1024,
    isProcessing: r !== null,
    taskId: r?.task ?? null,
    promptTokens: r?.prompt ?? null,
    promptTokensProcessed: r?.prompt ?? null,
    promptTokensCached: r ? 0 : null,
    decodedTokens: r?.decoded ?? null,
    speculative: false,
  };
}

/** Four slots decoding `tokPerS` each; a finished request is replaced at once by a new one. */
function simulate(seconds: number, tokPerS: number, withMetrics: boolean) {
  const lengths = [37, 256, 90, 143, 12, 200, 61, 256, 5, 180];
  let nextTask = 100;
  let li = 0;
  const newReq = (slotId: number): Req => ({ task: nextTask++, slot: slotId, prompt: 40 + (li % 7), length: lengths[li++ % lengths.length]!, decoded: 0 });
  const running: Req[] = [0, 1, 2, 3].map(newReq);
  let finishedGen = 0;
  let trueGen = 0;
  const counter = new LiveTokenCounter();
  const rate = new CounterRate();
  const samples: (number | null)[] = [];
  let credited0 = 0;
  const stepsPerS = 20;
  for (let t = 0; t <= seconds * stepsPerS; t++) {
    if (t % stepsPerS === 0) {
      const slots = running.map((r) => slot(r.slot, r));
      const totals = withMetrics ? counter.push(slots, finishedGen, null) : counter.pushSlotsOnly(slots);
      if (t === 0) credited0 = totals.generated;
      samples.push(rate.push(totals.generated, t * 50));
    }
    for (const r of running) {
      r.decoded += tokPerS / stepsPerS;
      trueGen += tokPerS / stepsPerS;
      if (r.decoded >= r.length) {
        trueGen -= r.decoded - r.length;
        r.decoded = r.length;
        finishedGen += r.length;
        Object.assign(r, newReq(r.slot));
      }
    }
  }
  const lastSlots = running.map((r) => slot(r.slot, r));
  const last = withMetrics ? counter.push(lastSlots, finishedGen, null) : counter.pushSlotsOnly(lastSlots);
  return { samples: samples.slice(1), credited: last.generated - credited0, trueGen };
}

describe('LiveTokenCounter', () => {
  it('with /metrics: every 1 s sample is above zero while four requests generate, and the tokens add up', () => {
    const { samples, credited, trueGen } = simulate(53, 20, true);
    expect(samples).toHaveLength(53);
    for (const s of samples) expect(s).toBeGreaterThan(0);
    // 4 slots × 20 tok/s
    const mean = samples.reduce<number>((a, s) => a + (s ?? 0), 0) / samples.length;
    expect(mean).toBeGreaterThan(70);
    expect(mean).toBeLessThan(90);
    expect(Math.abs(credited - trueGen) / trueGen).toBeLessThan(0.02);
  });

  it('without /metrics (slots only) the rate still moves; finished tails are lost, said in the header', () => {
    const { samples, credited, trueGen } = simulate(30, 20, false);
    for (const s of samples) expect(s).toBeGreaterThan(0);
    expect(credited).toBeLessThanOrEqual(trueGen);
    expect(credited / trueGen).toBeGreaterThan(0.8);
  });

  it('the finished counters alone (a rate of them) read 0 for most of the same run — the bug it fixes', () => {
    // four long requests: nothing finishes for 10 s
    const c = new LiveTokenCounter();
    const finishedOnly = new CounterRate();
    const live = new CounterRate();
    const zeros: number[] = [];
    for (let s = 0; s <= 10; s++) {
      const slots = [0, 1, 2, 3].map((id) => slot(id, { task: id, slot: id, prompt: 50, length: 1000, decoded: s * 20 }));
      const r = finishedOnly.push(0, s * 1000);
      if (r === 0) zeros.push(s);
      const l = live.push(c.push(slots, 0, 0).generated, s * 1000);
      if (s > 0) expect(l).toBeCloseTo(80, 6);
    }
    expect(zeros).toHaveLength(10);
  });

  it('a counter that goes back (server restarted): the total goes back with it, so a rate skips that interval, never negative', () => {
    const c = new LiveTokenCounter();
    const rate = new CounterRate();
    const a = c.push([slot(0, { task: 1, slot: 0, prompt: 10, length: 100, decoded: 50 })], 5000, 900);
    rate.push(a.generated, 0);
    const b = c.push([slot(0, { task: 1, slot: 0, prompt: 10, length: 100, decoded: 5 })], 0, 0);
    expect(b.generated).toBe(5);
    expect(rate.push(b.generated, 1000)).toBeNull();
    const d = c.push([slot(0, { task: 1, slot: 0, prompt: 10, length: 100, decoded: 25 })], 0, 0);
    expect(rate.push(d.generated, 2000)).toBe(20);
  });

  it('a request that ends between the /slots and /metrics answers (in both, then in neither) never makes the total go back, and leaves no excess', () => {
    const c = new LiveTokenCounter();
    // slot 0 runs task 1, then task 3; slot 1 runs task 2
    const run = (id: number, task: number, decoded: number) => slot(id, { task, slot: id, prompt: 10, length: 100, decoded });
    expect(c.push([run(0, 1, 40), run(1, 2, 10)], 1000, 0).generated).toBe(1050);
    // task 1 ended with 60 tokens; /slots was answered before it ended, /metrics after: counted twice
    expect(c.push([run(0, 1, 60), run(1, 2, 20)], 1060, 0).generated).toBe(1140);
    // held, not gone back: 1060 + 30 (task 2) is below what was shown
    expect(c.push([run(0, 3, 0), run(1, 2, 30)], 1060, 0).generated).toBe(1140);
    // caught up: the double count is gone, nothing was credited twice for good
    expect(c.push([run(0, 3, 40), run(1, 2, 100)], 1060, 0).generated).toBe(1200);
  });
});
