import { describe, expect, it } from 'vitest';
import { evaluate, type EvalSample } from '../../../../src-main/core/eval/index.js';

const s = (startMs: number, totalMs: number, over: Partial<EvalSample> = {}): EvalSample => ({
  startMs, totalMs, queueMs: 0, ttftMs: 100, failed: false, completionTokens: 100, jsonOk: null, schemaOk: null, host: 'h', ...over,
});

describe('evaluation figures (field-notes §5)', () => {
  it('computes each figure with its formula; P95 unstable below 20 samples', () => {
    const samples = [s(0, 1000, { queueMs: 200 }), s(0, 1000), s(1000, 1000), s(2000, 0, { failed: true, completionTokens: null })];
    const ev = evaluate({ source: 't', fromMs: 0, toMs: 2000, samples, priceOf: () => 3.6 });
    const f = Object.fromEntries(ev.figures.map((x) => [x.key, x]));
    expect(f.failureRate!.value).toBe(25);
    expect(f.p95E2e!.value).toBe(1000); // (completed − queued): 800, 1000, 1000
    expect(f.p95E2e!.unstable).toBe(true);
    expect(f.p95E2e!.formula).toMatch(/nearest rank/);
    expect(f.outputTokPerS!.value).toBe(150); // 300 tokens ÷ 2 s
    // GPU time shared: 0–1 s two requests (0.5 s each), 1–2 s one (1 s) → 2 GPU-s × 3.6 $/h ÷ 3600 = 0.002 $ over 3 requests.
    expect(f.costPerRequest!.value).toBeCloseTo(0.002 / 3, 10);
    expect(f.costPerMillionBusy!.value).toBeCloseTo((3.6 / (3600 * 150)) * 1e6, 6);
  });
  it('is unavailable, never 0, when it cannot be computed', () => {
    const ev = evaluate({ source: 't', fromMs: 0, toMs: 1000, samples: [], priceOf: () => null });
    for (const f of ev.figures) {
      expect(f.value).toBeNull();
      expect(f.unavailableReason).toBeTruthy();
    }
    const noPrice = evaluate({ source: 't', fromMs: 0, toMs: 1000, samples: [s(0, 500)], priceOf: () => null });
    expect(noPrice.figures.find((x) => x.key === 'costPerRequest')).toMatchObject({ value: null, unavailableReason: expect.stringMatching(/price/) });
    expect(noPrice.figures.find((x) => x.key === 'jsonRate')).toMatchObject({ value: null });
  });
  it('JSON and schema rates count attempts that got a response', () => {
    const ev = evaluate({ source: 't', fromMs: 0, toMs: 1000, priceOf: () => 1, samples: [s(0, 1, { jsonOk: true, schemaOk: true }), s(0, 1, { jsonOk: true, schemaOk: false }), s(0, 1, { jsonOk: false, schemaOk: false }), s(0, 1, { failed: true })] });
    const f = Object.fromEntries(ev.figures.map((x) => [x.key, x.value]));
    expect(f.jsonRate).toBeCloseTo(66.67, 1);
    expect(f.schemaRate).toBeCloseTo(33.33, 1);
  });

  it('divides rates by the span that had traffic, not the requested window, and says so (issue #27 finding 3)', () => {
    // "Last 1 h" with 6 minutes of traffic: 36 requests of 10 s each, back to back, 600 tokens each.
    const MIN = 60_000;
    const samples = Array.from({ length: 36 }, (_, i) => s(30 * MIN + i * 10_000, 10_000, { completionTokens: 600 }));
    const ev = evaluate({ source: 'proxy traffic', fromMs: 0, toMs: 60 * MIN, samples, priceOf: () => 3.6 });
    const f = Object.fromEntries(ev.figures.map((x) => [x.key, x]));
    expect(f.outputTokPerS!.value).toBeCloseTo((36 * 600) / 360, 9); // 60 tok/s, not 6 tok/s over the hour
    expect(f.outputTokPerS!.formula).toContain('the span that had traffic (6.0 min from the first request sent to the last one finished)');
    // Busy the whole span: per 1M tokens over the span equals the busy-time figure.
    expect(f.costPerMillionReserved!.value).toBeCloseTo(f.costPerMillionBusy!.value!, 9);
    expect(f.costPerMillionReserved!.label).toBe('Cost per 1M output tokens (span with traffic)');
  });
  it('leaves requests without a token count out of the rate and names how many', () => {
    const samples = [s(0, 1000, { completionTokens: 100 }), s(1000, 1000, { completionTokens: null }), s(2000, 1000, { completionTokens: 200 })];
    const f = evaluate({ source: 't', fromMs: 0, toMs: 60_000, samples, priceOf: () => 1 }).figures.find((x) => x.key === 'outputTokPerS')!;
    expect(f.value).toBeCloseTo(100, 9); // 300 counted tokens over the 3 s with traffic
    expect(f.samples).toBe(2);
    expect(f.formula).toContain('1 of 3 completed requests reported no token count and are not in it');
    const none = evaluate({ source: 't', fromMs: 0, toMs: 60_000, samples: [s(0, 1000, { completionTokens: null })], priceOf: () => 1 }).figures.find((x) => x.key === 'outputTokPerS')!;
    expect(none).toMatchObject({ value: null, unavailableReason: 'no completion tokens recorded' });
  });
});
