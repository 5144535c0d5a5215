// shareGpuTime against a reference written the plain way (a sweep that gives
// each piece of time to the requests in flight, 1/k each): random spans on a
// few hosts, with shared instants, back-to-back requests, zero-length and
// out-of-window ones, and a window that cuts some.
import { describe, expect, it } from 'vitest';
import { createPrng } from '../../../../src-main/demo/text-gen.js';
import { shareGpuTime, type RequestSpan } from '../../../../src-main/core/cost/index.js';

function reference(spans: readonly RequestSpan[], window?: { fromMs: number; toMs: number }) {
  const gpu = spans.map(() => 0);
  const busy = new Map<string, number>();
  for (const host of new Set(spans.map((s) => s.host))) {
    const cuts = new Set<number>();
    const clipped = spans.map((s) => (s.host !== host ? null : [Math.max(s.startMs, window?.fromMs ?? -Infinity), Math.min(s.endMs, window?.toMs ?? Infinity)] as const));
    for (const c of clipped) if (c && c[1] > c[0]) cuts.add(c[0]).add(c[1]);
    const times = [...cuts].sort((a, b) => a - b);
    let b = 0;
    for (let i = 0; i + 1 < times.length; i++) {
      const [t0, t1] = [times[i]!, times[i + 1]!];
      const on = clipped.flatMap((c, j) => (c && c[1] > c[0] && c[0] <= t0 && c[1] >= t1 ? [j] : []));
      if (on.length === 0) continue;
      b += (t1 - t0) / 1000;
      for (const j of on) gpu[j]! += (t1 - t0) / 1000 / on.length;
    }
    busy.set(host, b);
  }
  return { gpu, busy };
}

describe('shareGpuTime', () => {
  it('equals the plain sweep on 40 random fleets (shared instants, back-to-back, zero-length, windowed)', () => {
    const r = createPrng(11);
    for (let round = 0; round < 40; round++) {
      const spans: RequestSpan[] = Array.from({ length: 1 + Math.floor(r() * 60) }, () => {
        const start = Math.floor(r() * 50) * 100;
        const len = r() < 0.1 ? 0 : Math.floor(r() * 20) * 100;
        return { startMs: start, endMs: start + len, model: null, client: 'c', completionTokens: null, host: `h${Math.floor(r() * 3)}` };
      });
      const window = round % 2 ? { fromMs: 1_000, toMs: 4_000 } : undefined;
      const got = shareGpuTime(spans, window);
      const want = reference(spans, window);
      got.gpuSeconds.forEach((g, i) => expect(g).toBeCloseTo(want.gpu[i]!, 9));
      for (const [host, b] of want.busy) expect(got.busySecondsByHost.get(host) ?? 0).toBeCloseTo(b, 9);
      const total = got.gpuSeconds.reduce((a, b) => a + b, 0);
      const busy = [...got.busySecondsByHost.values()].reduce((a, b) => a + b, 0);
      // Every busy second is given out once, never twice.
      expect(total).toBeCloseTo(busy, 9);
    }
  });

  it('gives two requests sharing a second half of it each, and back-to-back ones all of their own', () => {
    const span = (startMs: number, endMs: number, host = 'a'): RequestSpan => ({ startMs, endMs, model: null, client: 'c', completionTokens: null, host });
    expect(shareGpuTime([span(0, 1_000), span(0, 1_000)]).gpuSeconds).toEqual([0.5, 0.5]);
    expect(shareGpuTime([span(0, 1_000), span(1_000, 2_000)]).gpuSeconds).toEqual([1, 1]);
    expect(shareGpuTime([span(0, 2_000), span(1_000, 2_000), span(0, 1_000, 'b')]).gpuSeconds).toEqual([1.5, 0.5, 1]);
  });
});
