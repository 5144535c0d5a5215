import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src-main/core/base/index.js';
import { openStore, type Store } from '../../../src-main/core/store/index.js';
import { SeriesStore } from '../../../src-main/core/telemetry/index.js';

// The series tables on a real SQLite file (WAL), opened through the store; the
// samples tables come from the store's own migrations.

const T0 = 1_700_000_100_000;
let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

function openWithSamples(file: string, clock: FakeClock): Store {
  const store = openStore({ file, clock });
  expect(store.db.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'telemetry_samples_10s'`).get()).toBeTruthy();
  return store;
}

describe('SeriesStore on a real file', () => {
  it('history survives a restart: write, close, reopen, query', () => {
    dir = mkdtempSync(join(tmpdir(), 'gpu-console-series-'));
    const file = join(dir, 'console.db');
    const clock = new FakeClock(T0);
    let store = openWithSamples(file, clock);
    let series = new SeriesStore({ db: store.db, clock });
    for (let i = 0; i < 20 * 60; i++) {
      series.record('gpu-a', T0 + i * 1000, { 'gpu.0.vram_used_mib': 38_751, 'svc.qwen.gen_tok_s': 72.47, 'host.cost_usd_h': 2.641736 });
      if (i % 10 === 0) clock.advance(i === 0 ? 0 : 10_000);
    }
    series.dispose(); // flushes the open buckets too
    store.close();

    clock.advance(60_000);
    store = openWithSamples(file, clock);
    series = new SeriesStore({ db: store.db, clock });
    expect(series.hosts()).toEqual(['gpu-a']);
    expect(series.metrics('gpu-a')).toEqual(['gpu.0.vram_used_mib', 'svc.qwen.gen_tok_s', 'host.cost_usd_h']);
    const r = series.query({ host: 'gpu-a', range: '1h', endMs: T0 + 20 * 60_000 });
    expect(r.tiers).toEqual(['10s']);
    expect(r.t).toHaveLength(120);
    const gen = r.series.find((s) => s.metric === 'svc.qwen.gen_tok_s')!;
    expect(gen.avg.every((v) => v !== null && Math.abs(v - 72.47) < 1e-4)).toBe(true);
    const week = series.query({ host: 'gpu-a', range: '7d', endMs: T0 + 20 * 60_000 });
    expect(week.tiers).toEqual(['5m']);
    expect(week.t).toHaveLength(4);
    // after the restart new samples continue the same columns
    series.record('gpu-a', T0 + 21 * 60_000, { 'svc.qwen.gen_tok_s': 50, 'gpu.1.util_pct': 3 });
    series.dispose();
    const cols = store.db.prepare('SELECT col, metric FROM telemetry_columns ORDER BY col').all();
    expect(cols).toEqual([
      { col: 0, metric: 'gpu.0.vram_used_mib' },
      { col: 1, metric: 'svc.qwen.gen_tok_s' },
      { col: 2, metric: 'host.cost_usd_h' },
      { col: 3, metric: 'gpu.1.util_pct' },
    ]);
    store.close();
  });
});
