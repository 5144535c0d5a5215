import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { openStore, type Store } from '../../../../src-main/core/store/index.js';
import { SeriesStore } from '../../../../src-main/core/telemetry/index.js';

// Telemetry history on a full data folder (issue #33 item 3): a flush the disk refuses loses nothing
// it can keep (rows and the new column names stay queued, bounded), says so in the store's health and
// never throws into the poll; the next flush with room writes them. A real SQLITE_FULL: the database
// capped at its page count. (Before: the queue was emptied before the write, and the names with it.)

const T0 = 1_700_000_100_000;
const METRICS = 300; // a 10 s row of 300 series needs pages of its own, so the cap bites

let store: Store | undefined;
let series: SeriesStore | undefined;
afterEach(() => {
  series?.dispose();
  store?.close();
});

describe('SeriesStore on a full disk', () => {
  it('keeps rows and column names queued while the store refuses, writes them all when space returns', () => {
    const clock = new FakeClock(T0);
    store = openStore({ file: ':memory:', clock });
    series = new SeriesStore({ db: store.db, clock, health: store.health });
    const values = (i: number) => Object.fromEntries(Array.from({ length: METRICS }, (_, m) => [`svc.q${m}.running`, i + m]));
    series.record('h', T0, values(0)); // the host's row is written here, while there is room
    store.db.pragma(`max_page_count = ${store.db.pragma('page_count', { simple: true }) as number}`);
    for (let i = 1; i <= 25; i++) series.record('h', T0 + i * 1000, values(i));
    clock.advance(25_000);
    expect(series.pendingRows).toBe(2); // two 10 s rows closed

    expect(series.flush()).toBe(0);
    expect(series.pendingRows).toBe(2);
    expect(store.health.view()).toMatchObject({ state: 'full', failing: [{ writer: 'telemetry', code: 'SQLITE_FULL', dropped: 0, pending: 2 }] });
    // Live figures do not wait on the disk: the last second is answered from memory.
    expect(series.query({ host: 'h', range: '15m', metrics: ['svc.q0.running'] }).series[0]!.avg.filter((v) => v !== null).at(-1)).toBe(25);

    store.db.pragma('max_page_count = 1073741823');
    expect(series.flush()).toBe(2);
    expect(series.pendingRows).toBe(0);
    expect(store.health.view().state).toBe('ok');
    // A second store on the same file finds every name and both rows: nothing was lost with the failed flush.
    const again = new SeriesStore({ db: store.db, clock });
    expect(again.metrics('h')).toHaveLength(METRICS);
    clock.advance(2 * 3_600_000); // past the memory window: the 10 s rows on disk answer
    const old = again.query({ host: 'h', range: '24h', endMs: T0 + 60_000, metrics: ['svc.q0.running'] });
    expect(old.series[0]!.avg.some((v) => v !== null)).toBe(true);
    again.dispose();
  });
});
