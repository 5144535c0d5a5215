import { describe, expect, it } from 'vitest';
import {
  budgetComputeHours,
  costPerMillionBoth,
  costPerMillionOutputTokens,
  costShares,
  hostCost,
  hostPricePerHour,
  hoursUntilBudgetGate,
  runRate,
  shareGpuTime,
  spanFromRequestRow,
  type RequestSpan,
} from '../../../../src-main/core/cost/index.js';

// Field notes §1: USD 2.641736 per GPU-hour ≈ USD 63.40/day; at 72.47 output tok/s
// ≈ USD 10.13 per million output tokens; a USD 500 monthly gate ≈ 189 compute hours.
const PRICE = 2.641736;

describe('cost math against the field notes', () => {
  it('run rate per hour, day and month', () => {
    const r = runRate(hostPricePerHour({ pricePerGpuHourUsd: PRICE, gpuCount: 1 }));
    expect(r.perHour.value).toBeCloseTo(2.641736, 6);
    expect(r.perDay.value!.toFixed(2)).toBe('63.40');
    expect(r.perMonth.value).toBeCloseTo(PRICE * 730, 6);
    for (const e of [r.perHour, r.perDay, r.perMonth]) expect(e.estimate).toBe(true);
  });

  it('USD 10.13 per million output tokens at 72.47 tok/s', () => {
    const e = costPerMillionOutputTokens(PRICE, 72.47, 'test');
    // 2.641736 / (3600 × 72.47) × 10⁶ = 10.12574…
    expect(e.value).toBeCloseTo(10.1257, 3);
    expect(e.value!.toFixed(2)).toBe('10.13');
  });

  it('a USD 500 gate is about 189 compute hours; hours left shrink with spend', () => {
    expect(budgetComputeHours(500, PRICE).value).toBeCloseTo(189.27, 2);
    expect(hoursUntilBudgetGate(500, 250, PRICE).value).toBeCloseTo(94.635, 2); // 250 / 2.641736
    expect(hoursUntilBudgetGate(500, 600, PRICE).value).toBe(0);
  });

  it('usage-based vs reservation-based per million output tokens', () => {
    // 1 h reserved, 30 min busy at 72.47 tok/s → 130 446 tokens
    const tokens = 72.47 * 1800;
    const both = costPerMillionBoth(PRICE, { outputTokens: tokens, busySeconds: 1800, reservedSeconds: 3600 });
    expect(both.usageBased.value).toBeCloseTo(10.1257, 3);
    expect(both.reservationBased.value).toBeCloseTo(2 * 10.1257, 2);
  });

  it('unavailable with a reason — never 0 — when there is no data', () => {
    expect(hostPricePerHour({}).value).toBeNull();
    expect(hostPricePerHour({}).unavailableReason).toMatch(/no price/);
    expect(hostPricePerHour({ pricePerGpuHourUsd: 2 }).unavailableReason).toMatch(/GPU count/);
    expect(costPerMillionOutputTokens(PRICE, 0, '').value).toBeNull();
    expect(costPerMillionOutputTokens(PRICE, null, '').unavailableReason).toMatch(/unknown/);
    expect(costPerMillionOutputTokens(null, 70, '').value).toBeNull();
    const idle = costPerMillionBoth(PRICE, { outputTokens: 0, busySeconds: 0, reservedSeconds: 3600 });
    expect(idle.usageBased.value).toBeNull();
    expect(idle.reservationBased.value).toBeNull();
    expect(budgetComputeHours(null, PRICE).value).toBeNull();
    expect(runRate(hostPricePerHour({})).perDay.value).toBeNull();
    const usage = { fromMs: 0, toMs: 3_600_000, windowSeconds: 3600, observedSeconds: 0, outputTokens: null, busySeconds: null, tokensOverSeconds: null, tokensBasis: 'unknown' };
    const c = hostCost({ host: 'h', usage });
    expect(Object.values(c).filter((v) => typeof v === 'object' && v !== null && 'value' in v && v.value === 0)).toEqual([]);
    expect(c.window).toMatchObject({ outputTokens: null, observedUsd: { value: null } });
  });
});

describe('sharing GPU time among requests', () => {
  const span = (startS: number, endS: number, model: string, client: string, tokens: number | null, host = 'h'): RequestSpan => ({
    startMs: startS * 1000,
    endMs: endS * 1000,
    model,
    client,
    completionTokens: tokens,
    host,
  });

  it('concurrent time is split, not double counted; idle time is nobody’s', () => {
    // A: 0–10 s, B: 5–15 s, C: 20–30 s. Overlap 5–10 s is shared.
    const { gpuSeconds, busySecondsByHost } = shareGpuTime([span(0, 10, 'm1', 'x', 100), span(5, 15, 'm2', 'y', 100), span(20, 30, 'm1', 'y', 100)]);
    expect(gpuSeconds).toEqual([7.5, 7.5, 10]);
    expect(busySecondsByHost.get('h')).toBe(25);
    expect(gpuSeconds.reduce((a, b) => a + b, 0)).toBe(25); // = busy time, never more
  });

  it('back-to-back requests do not overlap; different hosts do not share', () => {
    const { gpuSeconds } = shareGpuTime([span(0, 10, 'm', 'x', 1), span(10, 20, 'm', 'x', 1), span(0, 10, 'm', 'x', 1, 'other')]);
    expect(gpuSeconds).toEqual([10, 10, 10]);
  });

  it('clips to a window', () => {
    expect(shareGpuTime([span(0, 100, 'm', 'x', 1)], { fromMs: 50_000, toMs: 60_000 }).gpuSeconds).toEqual([10]);
  });

  it('cost per model and per client, per million output tokens', () => {
    const spans = [span(0, 3600, 'm1', 'alice', 130_000), span(0, 3600, 'm2', 'bob', 130_000), span(3600, 7200, 'm1', 'bob', 260_000)];
    const price = (h: string) => (h === 'h' ? PRICE : null);
    const byModel = costShares(spans, (s) => s.model ?? '?', price);
    const m1 = byModel.find((s) => s.key === 'm1')!;
    expect(m1.gpuSeconds).toBe(1800 + 3600);
    expect(m1.cost.value).toBeCloseTo(PRICE * 1.5, 6);
    expect(m1.perMillionOutput.value).toBeCloseTo(((PRICE * 1.5) / 390_000) * 1e6, 6);
    const byClient = costShares(spans, (s) => s.client, price);
    expect(byClient.map((s) => s.key)).toEqual(['bob', 'alice']);
    expect(byClient.reduce((a, s) => a + (s.cost.value ?? 0), 0)).toBeCloseTo(PRICE * 2, 6); // 2 busy hours in all
    const unpriced = costShares([span(0, 10, 'm', 'x', 5, 'nope')], (s) => s.client, price)[0]!;
    expect(unpriced.cost.value).toBeNull();
    const noTokens = costShares([span(0, 10, 'm', 'x', null)], (s) => s.client, price)[0]!;
    expect(noTokens.perMillionOutput.value).toBeNull();
  });

  it('reads proxy request rows', () => {
    expect(spanFromRequestRow({ ts: 1000, total_ms: 500, model: 'q', client: 'c', tokens_out: 7, upstream: 'gpu-a/qwen' })).toEqual({
      startMs: 1000,
      endMs: 1500,
      model: 'q',
      client: 'c',
      completionTokens: 7,
      host: 'gpu-a',
    });
    expect(spanFromRequestRow({ ts: 1, total_ms: 1, model: null, client: 'c', tokens_out: null, upstream: null })).toBeNull();
  });
});
