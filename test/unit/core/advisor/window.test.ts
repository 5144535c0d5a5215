import { describe, expect, it } from 'vitest';
import { AdvisorWindow, MAX_ROUNDS, type RoundSample } from '../../../../src-main/core/advisor/index.js';

const caps = { reservedInteractive: 2, interactive: 8, system: 4, batch: 6 };
const round = (at: number, extra: Partial<RoundSample> = {}): RoundSample => ({
  at,
  slots: 8,
  caps,
  inFlight: { interactive: 0, system: 0, batch: 6 },
  queued: { interactive: 0, system: 0, batch: 2 },
  gpuUtilPct: 50,
  gpuMemoryPct: 80,
  kvCachePct: 30,
  serverSlots: null,
  ...extra,
});

describe('advisor window', () => {
  it('keeps at most MAX_ROUNDS rounds and only the window', () => {
    const w = new AdvisorWindow(() => 10 * MAX_ROUNDS);
    for (let i = 0; i < MAX_ROUNDS + 500; i++) w.recordRound('h/s', round(i));
    expect(w.figuresOf('h/s', MAX_ROUNDS + 500)!.samples).toBe(MAX_ROUNDS);
    const short = new AdvisorWindow(() => 100);
    for (let i = 0; i < 300; i++) short.recordRound('h/s', round(i));
    expect(short.figuresOf('h/s', 300)!.samples).toBe(100);
    short.prune(10_000);
    expect(short.upstreams()).toEqual([]);
  });

  it('judges only the rounds and answers under the caps in force', () => {
    const w = new AdvisorWindow(() => 60_000);
    for (let t = 0; t < 30_000; t += 1000) w.recordRound('h/s', round(t, { caps: { ...caps, batch: 4 } }));
    for (let t = 0; t < 30_000; t += 100) w.recordAnswer('h/s', 'batch', 20_000, t);
    for (let t = 30_000; t < 40_000; t += 1000) w.recordRound('h/s', round(t));
    w.recordAnswer('h/s', 'batch', 100, 35_000);
    const f = w.figuresOf('h/s', 40_000)!;
    expect(f).toMatchObject({ samples: 10, capsChanged: true, spanMs: 10_000, caps, requests: { batch: 1 }, waitP95Ms: { batch: 100, interactive: null } });
  });

  it('unknown GPU figures stay unknown (never 0); the server\'s own slot count bounds the proposal', () => {
    const w = new AdvisorWindow(() => 60_000);
    for (let t = 0; t < 10_000; t += 1000) w.recordRound('h/s', round(t, { gpuUtilPct: null, kvCachePct: null, serverSlots: 6 }));
    expect(w.figuresOf('h/s', 10_000)).toMatchObject({ gpuUtilP95Pct: null, kvCacheP95Pct: null, gpuMemoryP95Pct: 80, slotLimit: 6, idleReserveP50: 2, batchQueuedPct: 100 });
  });
});
