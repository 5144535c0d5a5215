import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { MAX_SERIES_PER_HOST } from '../../../../src-main/core/telemetry/series-store.js';
import { SeriesStore } from '../../../../src-main/core/telemetry/index.js';
import { openStore } from '../../../../src-main/core/store/index.js';

// Series names come from what a host answers (a GPU index printed by nvidia-smi, a service id,
// an engine label). A host that reports a new GPU index on every poll must not grow the console's
// memory or the columns table without end: past MAX_SERIES_PER_HOST new series are not recorded,
// and counted; the series the host already has keep being recorded.

describe('SeriesStore bounds', () => {
  it('a host inventing a new GPU index every poll stops at the per-host series limit', () => {
    const T0 = 1_700_000_100_000;
    const clock = new FakeClock(T0);
    const db = openStore({ file: ':memory:', clock }).db;
    const store = new SeriesStore({ db, clock });
    try {
      const polls = MAX_SERIES_PER_HOST + 500;
      for (let i = 0; i < polls; i++) {
        store.record('hostile', T0 + i * 1000, { 'gpu.0.util_pct': 50, [`gpu.${1000 + i}.util_pct`]: i });
      }
      store.record('fine', T0, { 'gpu.0.util_pct': 1 });
      expect(store.metrics('hostile')).toHaveLength(MAX_SERIES_PER_HOST);
      expect(store.refusedValues('hostile')).toBe(polls - (MAX_SERIES_PER_HOST - 1));
      expect(store.refusedValues('fine')).toBe(0);
      // Memory: one hour of Float32 slots per series, per host, no more.
      expect(store.memoryBytes()).toBeLessThanOrEqual((MAX_SERIES_PER_HOST + 1) * 3600 * 4 + 2 * 3600 * 8);
      store.flush();
      const cols = db.prepare('SELECT COUNT(*) AS n FROM telemetry_columns c JOIN telemetry_hosts h ON h.id = c.host_id WHERE h.label = ?').get('hostile') as { n: number };
      expect(cols.n).toBe(MAX_SERIES_PER_HOST);
      // The series it had before the limit are still recorded.
      clock.advance(polls * 1000);
      const r = store.query({ host: 'hostile', range: '15m' });
      const gpu0 = r.series.find((s) => s.metric === 'gpu.0.util_pct')!;
      expect(gpu0.avg.filter((v) => v === 50).length).toBeGreaterThan(0);
    } finally {
      store.dispose();
      db.close();
    }
  });
});
