import { closeSync, openSync, writeSync } from 'node:fs';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../../src-main/core/base/index.js';
import { classifyStorageFault, storageErrorCode, StoreErrorCode, wrapSqliteError } from '../../../../src-main/core/store/index.js';
import { formatStorageBytes } from '../../../../src-preload/contract/index.js';

// One place says what a failed write means for the data folder (issue #33 item 3): the codes
// better-sqlite3 and node:fs really give, produced for real where the machine allows it.

/** SQLITE_FULL as SQLite gives it: a database capped at its current page count asked for more pages. */
function realSqliteFull(): unknown {
  const db = new Database(':memory:');
  try {
    db.exec('CREATE TABLE t (v TEXT)');
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
    db.prepare('INSERT INTO t VALUES (?)').run('x'.repeat(100_000));
    return null;
  } catch (err) {
    return err;
  } finally {
    db.close();
  }
}

/** ENOSPC as node:fs gives it: /dev/full refuses every write. */
function realEnospc(): unknown {
  let fd: number | undefined;
  try {
    fd = openSync('/dev/full', 'w');
    writeSync(fd, Buffer.alloc(16));
    return null;
  } catch (err) {
    return err;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

const sqlite = (code: string) => new Database.SqliteError(`failed (${code})`, code);
const errno = (code: string) => Object.assign(new Error(`${code}: failed`), { code });

describe('classifyStorageFault', () => {
  it('reads a real SQLITE_FULL and a real ENOSPC as a full disk', () => {
    const full = realSqliteFull();
    expect(full).toBeInstanceOf(Database.SqliteError);
    expect(storageErrorCode(full)).toBe('SQLITE_FULL');
    expect(classifyStorageFault(full)).toBe('full');
    const enospc = realEnospc();
    expect(storageErrorCode(enospc)).toBe('ENOSPC');
    expect(classifyStorageFault(enospc)).toBe('full');
    expect(classifyStorageFault(errno('EDQUOT'))).toBe('full');
  });

  it('reads SQLite I/O errors (every extended code), a read-only database and EIO / EROFS as the disk refusing', () => {
    for (const code of ['SQLITE_IOERR', 'SQLITE_IOERR_WRITE', 'SQLITE_IOERR_FSYNC', 'SQLITE_IOERR_SHMSIZE', 'SQLITE_READONLY_DBMOVED', 'SQLITE_CANTOPEN']) {
      expect(classifyStorageFault(sqlite(code)), code).toBe('io');
    }
    expect(classifyStorageFault(errno('EIO'))).toBe('io');
    expect(classifyStorageFault(errno('EROFS'))).toBe('io');
  });

  it('keeps locks and everything else apart from the disk', () => {
    expect(classifyStorageFault(sqlite('SQLITE_BUSY'))).toBe('busy');
    expect(classifyStorageFault(sqlite('SQLITE_LOCKED_SHAREDCACHE'))).toBe('busy');
    expect(classifyStorageFault(sqlite('SQLITE_CONSTRAINT_UNIQUE'))).toBe('other');
    expect(classifyStorageFault(sqlite('SQLITE_CORRUPT'))).toBe('other');
    // A prefix is not enough: SQLITE_IOERRX is no I/O error.
    expect(classifyStorageFault(sqlite('SQLITE_IOERRX'))).toBe('other');
    expect(classifyStorageFault(errno('ENOENT'))).toBe('other');
    expect(classifyStorageFault(new Error('no code'))).toBe('other');
    expect(classifyStorageFault(undefined)).toBe('other');
  });

  it('reads an error already wrapped (by its code, or by the SQLite code it kept)', () => {
    expect(classifyStorageFault(wrapSqliteError(sqlite('SQLITE_FULL'), 'x'))).toBe('full');
    expect(classifyStorageFault(new AppError(StoreErrorCode.IO_ERROR, 'x'))).toBe('io');
    expect(storageErrorCode(wrapSqliteError(sqlite('SQLITE_IOERR_WRITE'), 'x'))).toBe('SQLITE_IOERR_WRITE');
  });
});

describe('wrapSqliteError', () => {
  it('a full disk: STORE_DISK_FULL, retryable, naming the folder and what it has left', () => {
    const e = wrapSqliteError(realSqliteFull(), 'audit append (lifecycle.approved)', { folder: '/data/console', freeBytes: 0 });
    expect(e).toMatchObject({ code: StoreErrorCode.DISK_FULL, retryable: true, details: { folder: '/data/console', freeBytes: 0, sqliteCode: 'SQLITE_FULL' } });
    expect(e.message).toBe('audit append (lifecycle.approved): the data folder /data/console is full (0 B free); nothing was written. Free space there and try again (SQLITE_FULL).');
    expect(e.cause).toBeInstanceOf(Database.SqliteError);
  });

  it('an I/O error: STORE_IO_ERROR with the code; a lock: STORE_BUSY; anything else: STORE_SQLITE_FAILED, not retryable', () => {
    expect(wrapSqliteError(sqlite('SQLITE_IOERR_WRITE'), 'w', { folder: '/d', freeBytes: null })).toMatchObject({
      code: StoreErrorCode.IO_ERROR,
      retryable: true,
      message: expect.stringContaining('SQLITE_IOERR_WRITE'),
      details: { folder: '/d' },
    });
    expect(wrapSqliteError(sqlite('SQLITE_BUSY'), 'w')).toMatchObject({ code: StoreErrorCode.BUSY, retryable: true });
    expect(wrapSqliteError(sqlite('SQLITE_CONSTRAINT_UNIQUE'), 'w')).toMatchObject({ code: StoreErrorCode.SQLITE_FAILED, retryable: false });
    const given = new AppError(StoreErrorCode.CLOSED, 'closed');
    expect(wrapSqliteError(given, 'w')).toBe(given);
  });

  it('formats free space as an operator reads it', () => {
    expect([0, 1023, 1024, 1536, 10 * 1024 * 1024, 3.25 * 1024 ** 3].map(formatStorageBytes)).toEqual(['0 B', '1023 B', '1 KiB', '1.5 KiB', '10 MiB', '3.3 GiB']);
  });
});
