import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src-main/core/base/index.js';
import { Engine, type EngineConfig, type SequenceStats } from '../../../src-main/demo/engine.js';
import type { FinishReason } from '../../../src-main/demo/engine-metrics.js';

const L20: EngineConfig = { slots: 4, decodeTokPerSec: 17.5, prefillTokPerSec: 3000, prefillOverheadMs: 120, numGpuBlocks: 9063, blockSize: 16, minTickMs: 1 };

interface Tracked {
  tokens: number[];
  tokenTimes: number[];
  finished?: { reason: FinishReason; stats: SequenceStats };
}

function submit(engine: Engine, clock: FakeClock, promptTokens: number, outputTokens: number, doneReason: 'stop' | 'length' = 'stop') {
  const t: Tracked = { tokens: [], tokenTimes: [] };
  const handle = engine.submit({
    promptTokens,
    outputTokens,
    doneReason,
    onToken: (i) => {
      t.tokens.push(i);
      t.tokenTimes.push(clock.now());
    },
    onFinish: (reason, stats) => (t.finished = { reason, stats }),
  });
  return { t, handle };
}

describe('Engine', () => {
  it('prefills then decodes at the configured per-sequence rate', () => {
    const clock = new FakeClock();
    const engine = new Engine(L20, clock);
    const start = clock.now();
    const { t } = submit(engine, clock, 60, 75);
    clock.advance(10_000);
    expect(t.tokens).toHaveLength(75);
    expect(t.finished?.reason).toBe('stop');
    const ttft = t.finished!.stats.ttftMs!;
    expect(ttft).toBeCloseTo(120 + (60 / 3000) * 1000, 5); // 140 ms
    expect(t.tokenTimes[0]! - start).toBeGreaterThanOrEqual(140);
    expect(t.tokenTimes[0]! - start).toBeLessThan(142);
    // 74 intervals at 17.5 tok/s after the first token
    expect(t.finished!.stats.e2eMs).toBeCloseTo(140 + (74 * 1000) / 17.5, 1);
    expect(engine.metrics.generationTokens).toBe(75);
    expect(engine.metrics.promptTokens).toBe(60);
    expect(engine.metrics.requestSuccess.stop).toBe(1);
  });

  it('runs at most `slots` sequences; the rest wait FIFO, then TTFT includes the wait', () => {
    const clock = new FakeClock();
    const engine = new Engine(L20, clock);
    const seqs = Array.from({ length: 8 }, () => submit(engine, clock, 40, 75));
    clock.advance(0);
    expect(engine.snapshot()).toMatchObject({ running: 4, waiting: 4 });
    clock.advance(2_000);
    expect(engine.snapshot()).toMatchObject({ running: 4, waiting: 4, decoding: 4 });
    clock.advance(20_000);
    expect(engine.snapshot()).toMatchObject({ running: 0, waiting: 0 });
    const ttfts = seqs.map((s) => s.t.finished!.stats.ttftMs! / 1000);
    for (const v of ttfts.slice(0, 4)) expect(v).toBeLessThan(0.2);
    // field notes: 8 concurrent on 4 slots → TTFT ≈ 4.3 s for the late four
    for (const v of ttfts.slice(4)) expect(v).toBeGreaterThan(4.2);
    for (const v of ttfts.slice(4)) expect(v).toBeLessThan(4.6);
    expect(engine.metrics.queueTime.count).toBe(8);
    // aggregate throughput with 4 slots busy ≈ 70 tok/s
    expect(engine.metrics.generationTokens).toBe(8 * 75);
  });

  it('computes KV-cache usage from tokens held by running sequences, in blocks', () => {
    const clock = new FakeClock();
    const engine = new Engine({ ...L20, numGpuBlocks: 100 }, clock);
    submit(engine, clock, 33, 50); // 3 blocks at admission
    submit(engine, clock, 16, 50); // 1 block
    clock.advance(0);
    expect(engine.snapshot().usedBlocks).toBe(4);
    expect(engine.snapshot().kvCacheUsage).toBeCloseTo(0.04, 10);
    // after prefill (≈131 ms) and 20 more tokens each: 33+20=53 → 4 blocks, 16+20=36 → 3 blocks
    clock.advance(131 + Math.ceil((19 * 1000) / 17.5) + 1);
    expect(engine.snapshot().usedBlocks).toBe(7);
  });

  it('holds a prompt back when its KV blocks are not free', () => {
    const clock = new FakeClock();
    const engine = new Engine({ ...L20, numGpuBlocks: 10 }, clock);
    submit(engine, clock, 100, 10); // 7 blocks
    submit(engine, clock, 100, 10); // needs 7 more: must wait
    clock.advance(0);
    expect(engine.snapshot()).toMatchObject({ running: 1, waiting: 1 });
  });

  it('cuts at outputTokens with the given reason and counts aborts', () => {
    const clock = new FakeClock();
    const engine = new Engine(L20, clock);
    const a = submit(engine, clock, 20, 5, 'length');
    const b = submit(engine, clock, 20, 100);
    clock.advance(1_000);
    b.handle.abort();
    b.handle.abort();
    clock.advance(10_000);
    expect(a.t.finished?.reason).toBe('length');
    expect(b.t.finished?.reason).toBe('abort');
    expect(engine.metrics.requestSuccess).toEqual({ stop: 0, length: 1, abort: 1 });
    expect(engine.metrics.generationTokens).toBe(5 + b.t.tokens.length);
    expect(b.t.tokens.length).toBeGreaterThan(10);
    expect(b.t.tokens.length).toBeLessThan(20);
  });

  it('finishes pooling requests (no output tokens) right after prefill', () => {
    const clock = new FakeClock();
    const engine = new Engine({ ...L20, prefillOverheadMs: 10 }, clock);
    const e = submit(engine, clock, 300, 0);
    clock.advance(200);
    expect(e.t.finished?.reason).toBe('stop');
    expect(e.t.finished?.stats.completionTokens).toBe(0);
    expect(engine.metrics.promptTokens).toBe(300);
  });

  it('leaves no timer behind when idle or disposed', () => {
    const clock = new FakeClock();
    const engine = new Engine(L20, clock);
    submit(engine, clock, 20, 3);
    clock.advance(5_000);
    expect(clock.pending).toBe(0);
    submit(engine, clock, 20, 3);
    engine.dispose();
    expect(clock.pending).toBe(0);
  });
});
