import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { openStore, StorageHealthTracker, StoreErrorCode, type Store } from '../../../../src-main/core/store/index.js';
import { describeStorage, type StorageHealth } from '../../../../src-preload/contract/index.js';
import { tempDir } from './helpers.js';

// The data folder's health (issue #33 item 3): which writers fail, since when, what they drop; a probe
// that says "space is back" only with a write that lands. A real SQLITE_FULL comes from capping the
// database at its page count (PRAGMA max_page_count), a real disk's answer without filling one.

const full = () => new Database.SqliteError('database or disk is full', 'SQLITE_FULL');

function tracker(opts: { free?: () => number | null; probe?: () => void } = {}) {
  const clock = new FakeClock();
  const views: StorageHealth[] = [];
  let recovered = 0;
  const free = { bytes: 0 as number | null };
  const t = new StorageHealthTracker({
    folder: '/data',
    clock,
    logger: silentLogger,
    probeIntervalMs: 1_000,
    recoverFreeBytes: 1_000_000,
    freeBytes: opts.free ?? (() => free.bytes),
    probe: opts.probe,
  });
  t.onDidChange((v) => views.push(v));
  t.onDidRecover(() => recovered++);
  return { t, clock, views, free, recovered: () => recovered };
}

describe('StorageHealthTracker', () => {
  it('a full disk: which folder, since when, what each writer drops and holds; other failures change nothing', () => {
    const { t, clock, views } = tracker();
    t.track('requests', () => ({ dropped: 7, pending: 3 }));
    expect(t.failed('requests', new Database.SqliteError('UNIQUE', 'SQLITE_CONSTRAINT_UNIQUE'), 'w').code).toBe(StoreErrorCode.SQLITE_FAILED);
    expect(t.view().state).toBe('ok');
    expect(views).toHaveLength(0);

    const since = clock.now();
    const e = t.failed('requests', full(), 'request log write');
    expect(e).toMatchObject({ code: StoreErrorCode.DISK_FULL, details: { folder: '/data', freeBytes: 0 } });
    clock.advance(500);
    t.failed('requests', full(), 'request log write'); // the same failure again: no new event
    t.failed('audit', full(), 'audit append');
    expect(views).toHaveLength(2);
    expect(t.view()).toEqual({
      state: 'full',
      folder: '/data',
      freeBytes: 0,
      checkedAt: since + 500,
      since,
      failing: [
        { writer: 'requests', failingSince: since, code: 'SQLITE_FULL', dropped: 7, pending: 3 },
        { writer: 'audit', failingSince: since + 500, code: 'SQLITE_FULL', dropped: null, pending: null },
      ],
      recoveredAt: null,
    });
    expect(describeStorage(t.view())).toBe(
      `data folder /data is full (0 B free) since ${new Date(since).toISOString()}; dropping request-log rows (7 dropped, 3 waiting); audited changes (approvals, proposals, token and setting changes) are refused`,
    );
  });

  it('an I/O error alone is io-error, not full', () => {
    const { t } = tracker();
    t.failed('telemetry', new Database.SqliteError('disk I/O error', 'SQLITE_IOERR_WRITE'), 'w');
    expect(t.view()).toMatchObject({ state: 'io-error', failing: [{ writer: 'telemetry', code: 'SQLITE_IOERR_WRITE' }] });
  });

  it('the probe waits for room, then writes; a failing probe keeps the state, a landing one ends the episode for every writer', () => {
    const attempts: number[] = [];
    let probeFails = true;
    const { t, clock, free, recovered } = tracker({
      probe: () => {
        attempts.push(clock.now());
        if (probeFails) throw full();
      },
    });
    t.failed('requests', full(), 'w');
    t.failed('audit', full(), 'w');
    clock.advance(3_000);
    expect(attempts).toHaveLength(0); // 0 B free: not even tried
    free.bytes = 10_000_000;
    clock.advance(1_000);
    expect(attempts).toHaveLength(1);
    expect(t.view()).toMatchObject({ state: 'full', freeBytes: 10_000_000 });
    probeFails = false;
    clock.advance(1_000);
    expect(attempts).toHaveLength(2);
    expect(t.view()).toMatchObject({ state: 'ok', since: null, failing: [], recoveredAt: clock.now() });
    expect(recovered()).toBe(1);
    clock.advance(10_000);
    expect(attempts).toHaveLength(2); // healthy: the probe stopped
  });

  it("a writer's own landed write clears it; the episode ends with the last", () => {
    const { t, recovered } = tracker();
    t.failed('requests', full(), 'w');
    t.failed('telemetry', full(), 'w');
    t.wrote('requests');
    expect(t.view().failing.map((f) => f.writer)).toEqual(['telemetry']);
    t.wrote('telemetry');
    expect(t.view().state).toBe('ok');
    expect(recovered()).toBe(1);
  });
});

describe('the store on a full disk', () => {
  let store: Store | undefined;
  let cleanup: (() => void) | undefined;
  afterEach(() => {
    store?.close();
    cleanup?.();
  });

  it('an audit append and an atomic change are refused coded with nothing written; the probe records the episode once there is room', () => {
    const t = tempDir();
    cleanup = t.cleanup;
    const clock = new FakeClock();
    store = openStore({ file: join(t.dir, 'gpu-console.db'), clock, storageProbeIntervalMs: 1_000, storageRecoverFreeBytes: 0 });
    store.db.exec('CREATE TABLE scratch (v TEXT)');
    store.audit.append({ type: 'console.started', actor: 'system', payload: {} });
    const pages = store.db.pragma('page_count', { simple: true }) as number;
    store.db.pragma(`max_page_count = ${pages}`);
    const big = { note: 'x'.repeat(50_000) };

    expect(() => store!.audit.append({ type: 'secret.set', actor: 'operator:test', payload: big })).toThrow(expect.objectContaining({ code: StoreErrorCode.DISK_FULL, details: expect.objectContaining({ folder: t.dir }) }));
    const refused = (() => {
      try {
        store!.atomically('lifecycle.approved (l20/qwen)', () => {
          store!.db.prepare('INSERT INTO scratch VALUES (?)').run('changed');
          store!.audit.append({ type: 'secret.set', actor: 'operator:test', payload: big });
        });
      } catch (err) {
        return err;
      }
      return null;
    })();
    expect(refused).toMatchObject({ code: StoreErrorCode.DISK_FULL, retryable: true });
    // Neither the change nor its audit event landed.
    expect(store.db.prepare('SELECT COUNT(*) AS n FROM scratch').get()).toEqual({ n: 0 });
    expect(store.audit.head()?.seq).toBe(1);
    expect(store.health.view()).toMatchObject({ state: 'full', folder: t.dir, failing: [{ writer: 'audit', code: 'SQLITE_FULL' }] });

    store.db.pragma('max_page_count = 1073741823');
    clock.advance(1_000);
    expect(store.health.view().state).toBe('ok');
    const [event] = store.audit.list({ type: 'store.storage.recovered', limit: 1 });
    expect(event).toMatchObject({ actor: 'system', target: t.dir, payload: { folder: t.dir, state: 'full', codes: ['SQLITE_FULL'] } });
    expect(store.audit.verify()).toMatchObject({ ok: true, count: 2 });
    expect(store.db.pragma('integrity_check', { simple: true })).toBe('ok');
  });
});
