import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createApi, type ApiHost } from '../../../../src-main/core/api.js';
import type { AppEvent } from '../../../../src-main/core/app.js';
import { AppError, Emitter, FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { StorageHealthTracker, StoreErrorCode, wrapSqliteError } from '../../../../src-main/core/store/index.js';

// Whatever channel meets a full data folder answers it the same way (issue #33 item 3): a raw SQLite or
// fs error, or a store code given without its folder (settings), becomes STORE_DISK_FULL naming the
// folder and is counted in the store's health; another capability's own code (a report's output folder)
// and any other failure are left as they are.

function host(thrown: () => unknown) {
  const health = new StorageHealthTracker({ folder: '/data/console', clock: new FakeClock(), logger: silentLogger, freeBytes: () => 4096 });
  const events = new Emitter<AppEvent>();
  const app = {
    channels: {
      'storage.status': () => {
        throw thrown();
      },
    },
    onEvent: (l: (e: AppEvent) => void) => events.on(l),
    store: { health },
  } as unknown as ApiHost;
  return { api: createApi(app, silentLogger), health };
}

const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 });

describe('the dispatcher on a full data folder', () => {
  it('a raw SQLITE_FULL from any channel: STORE_DISK_FULL, retryable, naming the folder and its free bytes; counted', async () => {
    const { api, health } = host(() => new Database.SqliteError('database or disk is full', 'SQLITE_FULL'));
    const r = await api.invoke('storage.status', {});
    expect(r).toMatchObject({ ok: false, error: { code: StoreErrorCode.DISK_FULL, retryable: true, details: { folder: '/data/console', freeBytes: 4096 } } });
    expect(!r.ok && r.error.message).toBe('storage.status refused: the data folder /data/console is full (4 KiB free); nothing was written. Free space there and try again (SQLITE_FULL).');
    expect(health.view()).toMatchObject({ state: 'full', failing: [{ writer: 'audit', code: 'SQLITE_FULL' }] });
  });

  it('a raw ENOSPC (a file write) and a store code without its folder (settings) get the folder too', async () => {
    expect(await host(enospc).api.invoke('storage.status', {})).toMatchObject({ ok: false, error: { code: StoreErrorCode.DISK_FULL, details: { folder: '/data/console' } } });
    const settings = wrapSqliteError(new Database.SqliteError('database or disk is full', 'SQLITE_FULL'), 'setting "budget.month"');
    const r = await host(() => settings).api.invoke('storage.status', {});
    expect(r).toMatchObject({ ok: false, error: { code: StoreErrorCode.DISK_FULL, details: { folder: '/data/console', sqliteCode: 'SQLITE_FULL' } } });
    expect(!r.ok && r.error.message).toContain('(data folder /data/console)');
  });

  it("another capability's code and other failures are left alone", async () => {
    const report = new AppError('REPORT_OUTPUT_UNWRITABLE', 'cannot write /mnt/usb/report', { cause: enospc() });
    expect(await host(() => report).api.invoke('storage.status', {})).toMatchObject({ ok: false, error: { code: 'REPORT_OUTPUT_UNWRITABLE', message: 'cannot write /mnt/usb/report' } });
    const { api, health } = host(() => new Database.SqliteError('UNIQUE constraint failed', 'SQLITE_CONSTRAINT_UNIQUE'));
    expect(await api.invoke('storage.status', {})).toMatchObject({ ok: false, error: { code: 'INTERNAL_ERROR' } });
    expect(health.view().state).toBe('ok');
  });
});
