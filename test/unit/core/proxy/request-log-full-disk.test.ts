import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { RequestLog, type RequestRecord } from '../../../../src-main/core/proxy/index.js';
import { openStore, type Store } from '../../../../src-main/core/store/index.js';
import { tempDir } from '../store/helpers.js';
import { requestRecord } from '../../../helpers/request-records.js';

// The request log on a full data folder (issue #33 item 3): rows wait in a bounded backlog, the oldest
// beyond it are dropped and counted, tries are spaced, the store's health names the writer, and when
// space returns what waited is written at once. A real SQLITE_FULL: the database capped at its page count.

const record = (i: number): RequestRecord => requestRecord(i, { id: `r${i}-${'x'.repeat(2_000)}` });

let store: Store | undefined;
let log: RequestLog | undefined;
let cleanup: (() => void) | undefined;
afterEach(() => {
  log?.dispose();
  store?.close();
  cleanup?.();
});

describe('RequestLog on a full disk', () => {
  it('holds at most backlogRows, drops and counts the oldest, retries each retryMs, writes what waits when space returns', () => {
    const t = tempDir();
    cleanup = t.cleanup;
    const clock = new FakeClock();
    store = openStore({ file: join(t.dir, 'gpu-console.db'), clock, storageProbeIntervalMs: 1_000, storageRecoverFreeBytes: 0 });
    log = new RequestLog({ db: store.db, clock, logger: silentLogger, health: store.health, backlogRows: 5, retryMs: 1_000, flushIntervalMs: 100 });
    log.add(record(0));
    clock.advance(100);
    expect(log.counts()).toEqual({ written: 1, dropped: 0, pending: 0, failingSince: null });

    store.db.pragma(`max_page_count = ${store.db.pragma('page_count', { simple: true }) as number}`);
    const stmt = store.db.prepare('SELECT COUNT(*) AS n FROM requests');
    const failedAt = clock.now() + 100;
    for (let i = 1; i <= 12; i++) log.add(record(i));
    clock.advance(100); // the first failing flush: 12 rows, 5 kept
    expect(log.counts()).toEqual({ written: 1, dropped: 7, pending: 5, failingSince: failedAt });
    expect(store.health.view()).toMatchObject({ state: 'full', folder: t.dir, failing: [{ writer: 'requests', code: 'SQLITE_FULL', dropped: 7, pending: 5 }] });

    // Rows added meanwhile push the oldest out at once; no try before retryMs (the timer runs every 100 ms).
    for (let i = 13; i <= 15; i++) log.add(record(i));
    expect(log.counts()).toMatchObject({ dropped: 10, pending: 5 });
    clock.advance(500);
    expect(stmt.get()).toEqual({ n: 1 });

    // Space returns: the next try lands what waits; the episode ends and is recorded in the audit log.
    store.db.pragma('max_page_count = 1073741823');
    clock.advance(500);
    expect(store.health.view().state).toBe('ok');
    expect(log.counts()).toEqual({ written: 6, dropped: 10, pending: 0, failingSince: null });
    expect(store.db.prepare('SELECT id FROM requests ORDER BY seq').all().map((r) => (r as { id: string }).id.split('-')[0])).toEqual(['r0', 'r11', 'r12', 'r13', 'r14', 'r15']);
    expect(store.audit.list({ type: 'store.storage.recovered', limit: 1 })[0]?.payload).toMatchObject({ dropped: { requests: 10 } });
  });

  it('closing while writes fail counts what could not be written as dropped', () => {
    const t = tempDir();
    cleanup = t.cleanup;
    const clock = new FakeClock();
    store = openStore({ file: join(t.dir, 'gpu-console.db'), clock });
    log = new RequestLog({ db: store.db, clock, logger: silentLogger, health: store.health, backlogRows: 100 });
    store.db.pragma(`max_page_count = ${store.db.pragma('page_count', { simple: true }) as number}`);
    for (let i = 0; i < 20; i++) log.add(record(i));
    log.dispose();
    expect(log.counts()).toMatchObject({ written: 0, dropped: 20, pending: 0 });
  });
});
