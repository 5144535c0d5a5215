import { describe, expect, it } from 'vitest';
import { hostCost, windowUsage, type RequestSpan, type WindowCostSources } from '../../../../src-main/core/cost/index.js';
import { SERIES_RANGES, type SeriesQuery, type SeriesResult } from '../../../../src-preload/contract/index.js';

// The one cost function of the host view and the reports: only the time the
// console holds readings of a host counts (window cut at now, coverage
// stated); unknown tokens stay unknown. Field notes §1: USD 2.641736/h at
// 72.47 tok/s ≈ USD 10.13 per 1M output tokens.

const PRICE = 2.641736;
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 5, 8);

interface Reading {
  t: number;
  gen: number | null;
  busy: number | null;
}

/** A series store stand-in: readings of one tier, averaged into the query's buckets the way SeriesStore does. */
function fakeSeries(readings: readonly Reading[], tier: '1s' | '10s' | '5m' = '10s', queries: SeriesQuery[] = []): WindowCostSources['series'] {
  return (q) => {
    queries.push(q);
    const { spanMs, stepMs } = SERIES_RANGES[q.range];
    const toMs = q.endMs!;
    const fromMs = toMs - spanMs;
    const buckets = new Map<number, { g: number[]; b: number[] }>();
    for (const r of readings) {
      if (r.t < fromMs || r.t >= toMs) continue;
      const k = Math.floor(r.t / stepMs) * stepMs;
      const acc = buckets.get(k) ?? { g: [], b: [] };
      if (r.gen !== null) acc.g.push(r.gen);
      if (r.busy !== null) acc.b.push(r.busy);
      buckets.set(k, acc);
    }
    const t = [...buckets.keys()].sort((a, b) => a - b);
    const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
    const result: SeriesResult = {
      host: q.host,
      range: q.range,
      fromMs,
      toMs,
      stepMs,
      t,
      series: [
        { metric: 'host.gen_tok_s', unit: 'tok/s', avg: t.map((k) => mean(buckets.get(k)!.g)), max: null },
        { metric: 'host.busy_pct', unit: '%', avg: t.map((k) => mean(buckets.get(k)!.b)), max: null },
      ],
      tiers: t.length ? [tier] : [],
    };
    return result;
  };
}

function every(fromMs: number, toMs: number, stepMs: number, gen: number | null, busy: number | null = gen === null ? null : gen > 0 ? 100 : 0): Reading[] {
  const out: Reading[] = [];
  for (let t = fromMs; t < toMs; t += stepMs) out.push({ t, gen, busy });
  return out;
}

const sources = (readings: Reading[], over: Partial<WindowCostSources> = {}): WindowCostSources => ({
  series: fakeSeries(readings),
  requestSpans: () => [],
  now: () => T0 + 24 * HOUR,
  ...over,
});

describe('windowUsage: only the observed time counts', () => {
  it('prices the 55 observed minutes of a 24-hour window, not the 24 hours (issue #27 finding 2)', () => {
    // The console ran for one hour of the day, with a 5-minute gap; busy the whole time at 72.47 tok/s.
    const readings = [...every(T0, T0 + 5 * 60_000, 10_000, 72.47), ...every(T0 + 10 * 60_000, T0 + HOUR, 10_000, 72.47)];
    const u = windowUsage(sources(readings), 'l20', T0, T0 + 24 * HOUR);
    expect(u.windowSeconds).toBe(86_400);
    expect(u.observedSeconds).toBe(3300);
    expect(u.outputTokens).toBeCloseTo(72.47 * 3300, 6);
    const c = hostCost({ host: 'l20', pricePerHourUsd: PRICE, usage: u });
    expect(c.window.coveragePct).toBeCloseTo((3300 / 86_400) * 100, 6);
    expect(c.window.observedUsd.value).toBeCloseTo((PRICE * 3300) / 3600, 9);
    // Per 1M output tokens over observed time is the field-notes figure, not ~26× it.
    expect(c.perMillionOutputReservationBased.value).toBeCloseTo(10.13, 2);
    expect(c.perMillionOutputUsageBased.value).toBeCloseTo(10.13, 2);
    expect(c.window.observedUsd.basis).toContain('0.92 h observed of the window');
  });

  it('a short observation is said in seconds, never "0.00 h"', () => {
    const u = windowUsage(sources(every(T0, T0 + 20_000, 10_000, 30)), 'h', T0, T0 + HOUR);
    const c = hostCost({ host: 'h', pricePerHourUsd: PRICE, usage: u });
    expect(c.window.observedUsd.basis).toBe("price per hour × 20 s observed of the window's 1.00 h (0.6 %)");
  });

  it('cuts the window at now and clips buckets that straddle its edges', () => {
    const readings = every(T0 - HOUR, T0 + 2 * HOUR, 10_000, 10);
    const now = T0 + HOUR + 30 * 60_000;
    const u = windowUsage(sources(readings, { now: () => now }), 'h', T0 + 5_000, T0 + 3 * HOUR);
    expect(u.toMs).toBe(now);
    expect(u.windowSeconds).toBe((now - T0 - 5_000) / 1000);
    expect(u.observedSeconds).toBe(u.windowSeconds);
    expect(u.outputTokens).toBeCloseTo(10 * u.windowSeconds, 6);
  });

  it('a window that has not started has no length and no figures, never a negative one', () => {
    const u = windowUsage(sources([]), 'h', T0 + 48 * HOUR, T0 + 49 * HOUR);
    expect(u).toMatchObject({ windowSeconds: 0, observedSeconds: 0, outputTokens: null });
    const c = hostCost({ host: 'h', pricePerHourUsd: PRICE, usage: u });
    expect(c.window.coveragePct).toBeNull();
    expect(c.window.observedUsd).toMatchObject({ value: null, unavailableReason: 'the window has not started yet' });
  });

  it('a host never observed: 0 % coverage, tokens unknown, no price of observed time', () => {
    const c = hostCost({ host: 'h', pricePerHourUsd: PRICE, usage: windowUsage(sources([]), 'h', T0, T0 + HOUR) });
    expect(c.window).toMatchObject({ observedSeconds: 0, coveragePct: 0, outputTokens: null });
    expect(c.window.observedUsd.unavailableReason).toMatch(/never observed/);
    expect(c.perMillionOutputUsageBased).toMatchObject({ value: null, unavailableReason: 'output tokens unknown' });
    expect(c.perMillionOutputReservationBased).toMatchObject({ value: null, unavailableReason: 'output tokens unknown' });
  });

  it('reads 5-minute rows in 5-minute buckets: a coarse row is not counted as 10 s', () => {
    const queries: SeriesQuery[] = [];
    const readings = every(T0, T0 + HOUR, 300_000, 50);
    const u = windowUsage(sources([], { series: fakeSeries(readings, '5m', queries) }), 'h', T0, T0 + HOUR);
    expect(queries.map((q) => q.range)).toEqual(['1h', '7d']);
    expect(u.observedSeconds).toBe(3600);
    expect(u.outputTokens).toBeCloseTo(50 * 3600, 6);
  });

  it('polled every 30 s: buckets no finer than a minute, so every bucket holds a reading', () => {
    const queries: SeriesQuery[] = [];
    const readings = every(T0, T0 + HOUR, 30_000, 20);
    const u = windowUsage(sources([], { series: fakeSeries(readings, '10s', queries), pollIntervalMs: () => 30_000 }), 'h', T0, T0 + HOUR);
    expect(queries[0]!.range).toBe('24h');
    expect(u.observedSeconds).toBe(3600);
  });

  it('a window longer than 7 days is read in 7-day pieces, each bucket once', () => {
    const readings = every(T0, T0 + 10 * 24 * HOUR, 300_000, 1);
    const u = windowUsage(sources([], { series: fakeSeries(readings, '5m'), now: () => T0 + 30 * 24 * HOUR }), 'h', T0, T0 + 10 * 24 * HOUR);
    expect(u.observedSeconds).toBe(10 * 86_400);
  });
});

describe('windowUsage without telemetry: the proxy rows, with unknown tokens left unknown', () => {
  const span = (startMs: number, tokens: number | null, host = 'h'): RequestSpan => ({ startMs, endMs: startMs + 10_000, model: 'm', client: 'c', completionTokens: tokens, host });

  it('sums the counts that were reported and says how many were not', () => {
    const spans = [span(T0, 700), span(T0 + 60_000, null), span(T0 + 120_000, 300), span(T0, 999, 'other')];
    const u = windowUsage(sources([], { requestSpans: () => spans }), 'h', T0, T0 + HOUR);
    expect(u).toMatchObject({ observedSeconds: 0, outputTokens: 1000, busySeconds: 30, tokensOverSeconds: null });
    expect(u.tokensBasis).toContain('1 of 3 requests reported no token count');
    const c = hostCost({ host: 'h', pricePerHourUsd: PRICE, usage: u });
    expect(c.perMillionOutputUsageBased.value).toBeCloseTo(((PRICE * 30) / 3600 / 1000) * 1e6, 6);
    expect(c.perMillionOutputReservationBased.unavailableReason).toMatch(/time it was observed is unknown/);
  });

  it('no request reported a count: unknown, not 0', () => {
    const u = windowUsage(sources([], { requestSpans: () => [span(T0, null), span(T0 + 1, null)] }), 'h', T0, T0 + HOUR);
    expect(u.outputTokens).toBeNull();
    expect(u.tokensBasis).toMatch(/^unknown: .*none of the proxy's 2 requests reported a token count/);
    const c = hostCost({ host: 'h', pricePerHourUsd: PRICE, usage: u });
    expect(c.perMillionOutputUsageBased).toMatchObject({ value: null, unavailableReason: 'output tokens unknown' });
  });
});
