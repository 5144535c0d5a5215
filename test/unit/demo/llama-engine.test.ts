import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src-main/core/base/index.js';
import { LlamaEngine, type LlamaRequestSpec, type LlamaResult } from '../../../src-main/demo/llama-engine.js';
import { samplingParams } from '../../../src-main/demo/llama-shapes.js';
import { parsePrometheusText, readLlamaServerMetrics } from '../../../src-main/core/telemetry/index.js';
import { tinyLlamaProfile } from '../../fixtures/llama-server/fixtures.js';

// Slots of one llama-server process on a fake clock: 2 slots, 100 tok/s per
// slot, 1000 tok/s prefill + 5 ms.

function setup(over: Parameters<typeof tinyLlamaProfile>[0] = {}) {
  const clock = new FakeClock();
  const engine = new LlamaEngine({ profile: tinyLlamaProfile({ parallel: 2, ctxSize: 2048, decodeTokPerSec: 100, ...over }), clock, speedFactor: 1 });
  const results: LlamaResult[] = [];
  const submit = (key: string, outputTokens: number, extra: Partial<LlamaRequestSpec> = {}) =>
    engine.submit({
      promptKey: key,
      promptTokens: 100,
      outputTokens,
      doneReason: 'length',
      limit: outputTokens,
      params: samplingParams({ maxTokens: outputTokens }),
      onFinish: (r) => results.push(r),
      ...extra,
    });
  const metrics = () => readLlamaServerMetrics(parsePrometheusText(engine.metrics.render({ processing: engine.processing, deferred: engine.snapshot().waiting })).families);
  return { clock, engine, results, submit, metrics };
}

describe('llama-server slots', () => {
  it('runs at most --parallel requests, defers the rest FIFO, and shows progress per slot', () => {
    const { clock, engine, submit, results } = setup();
    submit('a', 50);
    submit('b', 50);
    submit('c', 10);
    clock.advance(1);
    expect(engine.snapshot()).toMatchObject({ running: 2, waiting: 1 });
    expect(engine.nCtx).toBe(1024);
    clock.advance(200);
    const views = engine.slotViews();
    expect(views.map((v) => v?.idTask)).toEqual([0, 1]);
    const first = views[0]!;
    // n_prompt_tokens is the slot's sequence (prompt + generated so far), as b10573 shows it
    expect(first.promptTokens).toBe(100 + first.decoded);
    expect(first.promptTokensProcessed).toBe(100);
    expect(first.decoded).toBeGreaterThan(5);
    expect(first.remaining).toBe(50 - first.decoded);
    expect(engine.tokensInUse()).toBe(200 + first.decoded + views[1]!.decoded);
    clock.advance(200);
    expect(engine.slotViews()[0]!.decoded).toBeGreaterThan(first.decoded);
    // The deferred one starts as soon as a slot frees, in the freed slot.
    clock.advance(1000);
    expect(results.map((r) => r.completionTokens).sort((a, b) => a - b)).toEqual([10, 50, 50]);
    expect(engine.slotViews()).toEqual([null, null]);
  });

  it('moves tokens_predicted_total only when a request finishes and prompt_tokens_total when its prompt is done', () => {
    const { clock, submit, metrics } = setup();
    submit('a', 100);
    clock.advance(2);
    expect(metrics()).toMatchObject({ running: 1, promptTokensTotal: 0, generationTokensTotal: 0 });
    clock.advance(500); // prompt done (~105 ms), half the tokens out
    expect(metrics()).toMatchObject({ running: 1, promptTokensTotal: 100, generationTokensTotal: 0 });
    clock.advance(1000);
    expect(metrics()).toMatchObject({ running: 0, promptTokensTotal: 100, generationTokensTotal: 100 });
  });

  it('averages the throughput gauges over the window since the previous scrape', () => {
    const { clock, engine, submit } = setup();
    const gauge = (name: string) => parsePrometheusText(engine.metrics.render({ processing: 0, deferred: 0 })).families.find((f) => f.name === name)!.samples[0]!.value;
    submit('a', 100);
    clock.advance(2000);
    const text = engine.metrics.render({ processing: 0, deferred: 0 });
    const fam = (n: string) => parsePrometheusText(text).families.find((f) => f.name === n)!.samples[0]!.value;
    expect(fam('llamacpp:predicted_tokens_seconds')).toBeGreaterThan(90);
    expect(fam('llamacpp:predicted_tokens_seconds')).toBeLessThan(110);
    expect(fam('llamacpp:prompt_tokens_seconds')).toBeGreaterThan(800);
    // That scrape closed the window: nothing happened since.
    expect(gauge('llamacpp:predicted_tokens_seconds')).toBe(0);
    expect(gauge('llamacpp:prompt_tokens_seconds')).toBe(0);
    expect(gauge('llamacpp:n_busy_slots_per_decode')).toBe(1);
  });

  it('reuses a repeated prompt from the cache (all but its last token)', () => {
    const { clock, submit, results, metrics } = setup();
    submit('same', 5);
    clock.advance(500);
    submit('same', 5);
    clock.advance(500);
    expect(results.map((r) => r.cachedTokens)).toEqual([0, 99]);
    expect(metrics().promptTokensTotal).toBe(101);
  });

  it('frees the slot of a cancelled request without counting its tokens', () => {
    const { clock, engine, submit, results, metrics } = setup();
    const h = submit('a', 100);
    clock.advance(300);
    h.abort();
    expect(results[0]).toMatchObject({ reason: 'abort' });
    expect(engine.slotViews()).toEqual([null, null]);
    expect(metrics().generationTokensTotal).toBe(0);
  });

  it('slows every slot when more slots decode together (batchSlowdown)', () => {
    const alone = setup({ batchSlowdown: 0.5 });
    alone.submit('a', 1000);
    alone.clock.advance(1105);
    const soloRate = alone.engine.slotViews()[0]!.decoded;
    const pair = setup({ batchSlowdown: 0.5 });
    pair.submit('a', 1000);
    pair.submit('b', 1000);
    pair.clock.advance(1105);
    const each = pair.engine.slotViews().map((v) => v!.decoded);
    expect(soloRate).toBeGreaterThan(95);
    for (const n of each) {
      expect(n).toBeGreaterThan(soloRate / 1.5 - 5);
      expect(n).toBeLessThan(soloRate / 1.5 + 5);
    }
  });
});
