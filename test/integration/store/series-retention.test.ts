// The series store on a real SQLite file: retention deletes exactly the rows
// past each tier's window (the row at the boundary stays, the one before it
// goes), downsampling writes each 5 min row as the mean and max of its 10 s
// rows, and the -wal file stays bounded under sustained writes from the
// series store, the request log and the audit log together.
import { afterEach, describe, expect, it } from 'vitest';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { FakeClock, silentLogger } from '../../../src-main/core/base/index.js';
import { RequestLog } from '../../../src-main/core/proxy/request-log.js';
import { openStore, type Store } from '../../../src-main/core/store/index.js';
import { SeriesStore } from '../../../src-main/core/telemetry/index.js';
import { hostSeriesTemplate } from '../../bench/lib/store-growth-fill.js';
import { tempDir } from '../../unit/core/store/helpers.js';

const T0 = 1_700_000_100_000; // a multiple of 5 min
const DAY = 86_400_000;
const MiB = 1_048_576;

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function fileStore(clock: FakeClock, walSizeLimitBytes?: number): Store {
  const { dir, cleanup } = tempDir('gpu-console-series-');
  const store = openStore({ file: join(dir, 'gpu-console.db'), clock, ...(walSizeLimitBytes ? { walSizeLimitBytes } : {}) });
  cleanups.push(cleanup, () => store.close());
  return store;
}

const times = (store: Store, tier: '10s' | '5m') =>
  (store.db.prepare(`SELECT t FROM telemetry_samples_${tier} ORDER BY t`).all() as { t: number }[]).map((r) => r.t);

function walBytes(store: Store): number {
  try {
    return statSync(`${store.file}-wal`).size;
  } catch {
    return 0;
  }
}

describe('series store retention at the tier boundaries (7 days of 10 s rows, 90 days of 5 min rows)', () => {
  it('keeps the row that starts exactly at the cut and deletes the one just before it, per tier', () => {
    const now = T0 + 100 * DAY;
    const clock = new FakeClock(now);
    const store = fileStore(clock);
    const series = new SeriesStore({ db: store.db, clock });
    const cut10 = now - 7 * DAY;
    const cut5m = now - 90 * DAY;
    // One sample per 5 min bucket around each cut: each writes one 10 s row and (when its 5 min bucket closes) one 5 min row.
    const at = [cut5m - 600_000, cut5m - 300_000, cut5m, cut5m + 300_000, cut10 - 600_000, cut10 - 300_000, cut10, cut10 + 300_000, now - 300_000];
    for (const t of at) series.record('h', t, { 'gpu.0.util_pct': t / 1e9 });
    series.dispose();
    const reopened = new SeriesStore({ db: store.db, clock });
    expect(times(store, '10s')).toHaveLength(at.length);
    const deleted = reopened.prune(now);
    const s = (ms: number) => ms / 1000;
    expect(times(store, '10s')).toEqual([s(cut10), s(cut10 + 300_000), s(now - 300_000)]);
    expect(times(store, '5m')).toEqual([s(cut5m), s(cut5m + 300_000), ...at.slice(4).map(s)]);
    expect(deleted).toBe(6 + 2); // 10 s: everything before cut10; 5 min: the two before cut5m
    expect(reopened.prune(now)).toBe(0); // a second pass finds nothing
    // a millisecond later the boundary rows are still inside (cuts are in whole seconds), a second later they go
    expect(reopened.prune(now + 999)).toBe(0);
    expect(reopened.prune(now + 1_000)).toBe(2);
    expect(times(store, '10s')[0]).toBe(s(cut10 + 300_000));
    expect(times(store, '5m')[0]).toBe(s(cut5m + 300_000));
    reopened.dispose();
  });

  it('each 5 min row is the mean and the max of its 10 s rows, column by column; unknown stays unknown', () => {
    const clock = new FakeClock(T0);
    const store = fileStore(clock);
    const series = new SeriesStore({ db: store.db, clock });
    const template = hostSeriesTemplate(2, 'qwen');
    const names = Object.keys(template);
    // 35 min at 1 s with a 3-minute gap; every series a different pattern, one always null
    for (let i = 0; i < 35 * 60; i++) {
      const t = T0 + i * 1000;
      if (t >= T0 + 12 * 60_000 && t < T0 + 15 * 60_000) continue;
      const v: Record<string, number | null> = {};
      names.forEach((n, c) => (v[n] = n.endsWith('spec_accept_pct') ? null : ((i * (c + 1)) % 97) + c / 8));
      series.record('h', t, v);
    }
    series.dispose();
    const cols = (store.db.prepare('SELECT col, metric FROM telemetry_columns ORDER BY col').all() as { col: number; metric: string }[]).map((r) => r.metric);
    expect(cols).toEqual(names);
    const f32 = (b: Buffer) => new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
    const rows10 = store.db.prepare('SELECT t, data FROM telemetry_samples_10s WHERE t >= ? AND t < ? ORDER BY t');
    const rows5 = store.db.prepare('SELECT t, n, data FROM telemetry_samples_5m ORDER BY t').all() as { t: number; n: number; data: Buffer }[];
    expect(rows5.map((r) => r.t - T0 / 1000)).toEqual([0, 300, 600, 900, 1200, 1500, 1800]);
    for (const r of rows5) {
      const inner = (rows10.all(r.t, r.t + 300) as { data: Buffer }[]).map((x) => f32(x.data));
      expect(inner.length).toBe(r.t === T0 / 1000 + 600 ? 12 : 30); // the 3-minute gap leaves 12 of 30
      const five = f32(r.data);
      for (let c = 0; c < r.n; c++) {
        // each 10 s row holds ten 1 s samples, so the 5 min mean is the mean of the 10 s means
        const vals = inner.map((f) => f[c]!).filter((v) => !Number.isNaN(v));
        if (vals.length === 0) {
          expect(Number.isNaN(five[c]!) && Number.isNaN(five[r.n + c]!), names[c]).toBe(true);
          continue;
        }
        expect(five[c]!).toBeCloseTo(vals.reduce((a, b) => a + b, 0) / vals.length, 3);
        expect(five[r.n + c]!).toBeGreaterThanOrEqual(Math.max(...vals)); // the max of raw samples ≥ the max of 10 s means
      }
    }
    // the max is the max of the raw 1 s samples: util of GPU 0 (column 2) peaks at 96 in every full bucket
    const util = names.indexOf('gpu.0.util_pct');
    expect(f32(rows5[0]!.data)[rows5[0]!.n + util]).toBeCloseTo(96 + util / 8, 3);
  });
});

describe('-wal file under sustained writes', () => {
  it('stays bounded while the series store, the request log and the audit log write for 30 simulated minutes', () => {
    const clock = new FakeClock(T0);
    const store = fileStore(clock);
    const series = new SeriesStore({ db: store.db, clock, pruneEveryMs: 600_000 });
    series.start();
    let commits = 0;
    const log = new RequestLog({ db: store.db, clock, logger: silentLogger, onFlushed: () => commits++ });
    cleanups.push(() => log.dispose(), () => series.dispose());
    const hosts = Array.from({ length: 8 }, (_, h) => ({ label: `h${h}`, values: hostSeriesTemplate(8, 'qwen') }));
    let maxWal = 0;
    for (let s = 0; s < 30 * 60; s++) {
      for (const h of hosts) {
        for (const k of Object.keys(h.values)) h.values[k] = (s * 7 + k.length) % 101;
        series.record(h.label, clock.now(), h.values);
      }
      for (let r = 0; r < 20; r++) {
        log.add({ id: `r${s}-${r}`, ts: clock.now(), client: 'c', class: 'batch', endpoint: '/v1/chat/completions', model: 'M', upstream: 'h0/qwen', stream: true, status: r === 0 ? 502 : 200, errorCode: null, queueMs: 1, ttftMs: 2, totalMs: 3, tokensIn: 4, tokensOut: 5, bytesIn: 6, bytesOut: 7, replayed: false });
      }
      if (s % 10 === 0) store.audit.append({ type: 'host.connection.up', actor: 'system', target: 'h0', payload: { s } });
      clock.advance(1000); // request log flushes every 250 ms, series every 10 s, prune every 10 min
      maxWal = Math.max(maxWal, walBytes(store));
    }
    series.flush();
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    const dbBytes = statSync(store.file).size;
    // ~1,800 commits of several pages each (each table and index a commit touches is a page) went through
    // a WAL that never grew past SQLite's 1,000-page autocheckpoint: it was reset and reused, not grown
    expect(commits).toBeGreaterThanOrEqual(1_800);
    expect(series.droppedRows).toBe(0);
    expect(maxWal).toBeGreaterThan(0);
    expect(maxWal).toBeLessThan(1_100 * (4096 + 24)); // the 1,000-page autocheckpoint, plus the commit that crosses it
    expect(dbBytes).toBeGreaterThan(maxWal);
  });

  it('is cut back to the size limit after one large transaction (a retention pass after days off)', () => {
    const clock = new FakeClock(T0);
    const store = fileStore(clock, 2 * MiB);
    const insert = store.db.prepare('INSERT INTO telemetry_samples_10s (host_id, t, n, data) VALUES (1, ?, 1, ?)');
    const blob = Buffer.alloc(3_000, 1);
    store.db.transaction(() => {
      for (let i = 0; i < 4_000; i++) insert.run(i, blob); // ~12 MiB in one commit
    })();
    expect(walBytes(store)).toBeGreaterThan(8 * MiB);
    // a later small write after the checkpoint restarts the log and truncates it to the limit
    store.db.pragma('wal_checkpoint(PASSIVE)');
    store.settings.set('probe', { at: 1 });
    expect(walBytes(store)).toBeLessThanOrEqual(2 * MiB);
  });
});
