import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { SeriesStore } from '../../../../src-main/core/telemetry/index.js';
import { openStore } from '../../../../src-main/core/store/index.js';

const T0 = 1_700_000_100_000; // a multiple of 5 min, so buckets line up with the test's arithmetic

function open(clock: FakeClock, opts: Partial<ConstructorParameters<typeof SeriesStore>[0]> = {}) {
  const db = openStore({ file: ':memory:', clock }).db;
  const store = new SeriesStore({ db, clock, ...opts });
  return { db, store };
}

let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup) c();
  cleanup = [];
});

describe('SeriesStore', () => {
  it('keeps 1 s samples in memory and answers a 15 min query from them', () => {
    expect(T0 % 300_000).toBe(0);
    const clock = new FakeClock(T0);
    const { store, db } = open(clock);
    cleanup.push(() => db.close());
    for (let i = 0; i < 30; i++) {
      store.record('h', T0 + i * 1000, { 'gpu.0.util_pct': i, 'svc.q.gen_tok_s': i % 2 === 0 ? null : 10 });
    }
    clock.advance(29_000);
    const r = store.query({ host: 'h', range: '15m' });
    expect(r.stepMs).toBe(1000);
    expect(r.tiers).toEqual(['1s']);
    expect(r.t).toHaveLength(30);
    expect(r.t[0]).toBe(T0);
    const util = r.series.find((s) => s.metric === 'gpu.0.util_pct')!;
    expect(util.unit).toBe('%');
    expect(util.avg.slice(0, 3)).toEqual([0, 1, 2]);
    const gen = r.series.find((s) => s.metric === 'svc.q.gen_tok_s')!;
    expect(gen.unit).toBe('tok/s');
    expect(gen.avg.slice(0, 3)).toEqual([null, 10, null]); // unknown stays a gap
  });

  it('filters series by exact name and prefix', () => {
    const clock = new FakeClock(T0);
    const { store, db } = open(clock);
    cleanup.push(() => db.close());
    store.record('h', T0, { 'gpu.0.util_pct': 1, 'gpu.1.util_pct': 2, 'svc.q.running': 3 });
    expect(store.query({ host: 'h', range: '15m', metrics: ['gpu.*'] }).series.map((s) => s.metric)).toEqual(['gpu.0.util_pct', 'gpu.1.util_pct']);
    expect(store.query({ host: 'h', range: '15m', metrics: ['svc.q.running'] }).series.map((s) => s.metric)).toEqual(['svc.q.running']);
    expect(store.query({ host: 'nope', range: '15m' }).series).toEqual([]);
  });

  it('the ring is bounded: one hour of slots, oldest overwritten, memory flat', () => {
    const clock = new FakeClock(T0);
    const { store, db } = open(clock, { memoryWindowMs: 60_000 });
    cleanup.push(() => db.close());
    store.record('h', T0, { 'gpu.0.util_pct': 0 });
    const bytes = store.memoryBytes();
    for (let i = 1; i < 500; i++) store.record('h', T0 + i * 1000, { 'gpu.0.util_pct': i });
    expect(store.memoryBytes()).toBe(bytes);
    clock.advance(499_000);
    const r = store.query({ host: 'h', range: '15m', metrics: ['gpu.0.util_pct'] });
    // the last 60 s from memory; older buckets come from the unflushed 10 s rows
    expect(r.tiers).toEqual(['1s', '10s']);
    expect(r.series[0]!.avg.at(-1)).toBe(499);
  });

  it('closes 10 s buckets (mean) and 5 min buckets (mean and max), writes them in a batch', () => {
    const clock = new FakeClock(T0);
    const { store, db } = open(clock);
    cleanup.push(() => db.close());
    // 10 minutes of a sawtooth 0..9 per 10 s bucket: mean 4.5, max 9
    for (let i = 0; i <= 600; i++) store.record('h', T0 + i * 1000, { 'gpu.0.power_w': i % 10 });
    expect(store.pendingRows).toBe(60 + 1); // 60 × 10 s rows + the first 5 min row
    expect(store.flush()).toBe(61);
    expect(db.prepare('SELECT count(*) AS n FROM telemetry_samples_10s').get()).toEqual({ n: 60 });
    expect(db.prepare('SELECT count(*) AS n FROM telemetry_samples_5m').get()).toEqual({ n: 1 });
    clock.advance(7 * 86_400_000);
    const r = store.query({ host: 'h', range: '7d', endMs: T0 + 600_000 });
    expect(r.stepMs).toBe(300_000);
    expect(r.tiers).toEqual(['1s']); // the ring still holds that time: exact means and maxima
    const p = r.series[0]!;
    expect(p.avg).toEqual([4.5, 4.5, 0]);
    expect(p.max).toEqual([9, 9, 0]);
  });

  it('7-day query from disk: 5 min rows, the open bucket from memory; 24 h from 10 s rows', () => {
    const clock = new FakeClock(T0);
    const { store, db } = open(clock, { memoryWindowMs: 1000 });
    cleanup.push(() => db.close());
    for (let i = 0; i < 3 * 3600; i += 10) store.record('h', T0 + i * 1000, { 'host.cost_usd_h': 2.641736 });
    store.flush();
    const r = store.query({ host: 'h', range: '7d', endMs: T0 + 3 * 3_600_000 });
    expect(r.tiers).toEqual(['1s', '5m']);
    expect(r.t).toHaveLength(36);
    expect(r.series[0]!.avg.every((v) => v !== null && Math.abs(v - 2.641736) < 1e-5)).toBe(true);
    const day = store.query({ host: 'h', range: '24h', endMs: T0 + 3 * 3_600_000 });
    expect(day.stepMs).toBe(60_000);
    expect(day.t).toHaveLength(180);
    expect(day.tiers).toContain('10s');
  });

  it('prunes 10 s rows after 7 days and 5 min rows after 90 days', () => {
    const clock = new FakeClock(T0);
    const { store, db } = open(clock);
    cleanup.push(() => db.close());
    for (let i = 0; i <= 600; i += 10) store.record('h', T0 + i * 1000, { 'gpu.0.temp_c': 50 });
    store.flush();
    expect(store.prune(T0 + 6 * 86_400_000)).toBe(0);
    expect(store.prune(T0 + 8 * 86_400_000)).toBe(60);
    expect(store.prune(T0 + 91 * 86_400_000)).toBe(1);
  });

  it('flushes on the clock once started and bounds the write queue (drop oldest)', () => {
    const clock = new FakeClock(T0);
    const { store, db } = open(clock, { maxPendingRows: 5 });
    cleanup.push(() => db.close());
    for (let i = 0; i <= 100; i += 10) store.record('h', T0 + i * 1000, { 'gpu.0.temp_c': i });
    expect(store.pendingRows).toBe(5);
    expect(store.droppedRows).toBe(5);
    store.start();
    clock.advance(10_000);
    expect(store.pendingRows).toBe(0);
    expect(store.rowsWritten).toBe(5);
    store.dispose();
    store.dispose();
    expect(() => store.record('h', T0, {})).toThrow(/closed/);
  });

  it('ignores samples older than the newest slot; a second sample in a slot overwrites it', () => {
    const clock = new FakeClock(T0);
    const { store, db } = open(clock);
    cleanup.push(() => db.close());
    store.record('h', T0 + 5000, { 'gpu.0.util_pct': 1 });
    store.record('h', T0 + 1000, { 'gpu.0.util_pct': 99 });
    store.record('h', T0 + 5500, { 'gpu.0.util_pct': 2 });
    clock.advance(6000);
    const r = store.query({ host: 'h', range: '15m' });
    expect(r.t).toEqual([T0 + 5000]);
    expect(r.series[0]!.avg).toEqual([2]);
  });
});
