// Stable error codes of the store capability (the database, its migrations,
// settings and the audit log). Callers match on these, never on messages.

import { formatStorageBytes } from '../../../src-preload/contract/index.js';
import { AppError } from '../base/index.js';

export const StoreErrorCode = {
  /** The file could not be opened as a SQLite database (not a database, locked, no permission). */
  OPEN_FAILED: 'STORE_OPEN_FAILED',
  /** The database was written by a newer app version (a migration we do not know is recorded). */
  SCHEMA_TOO_NEW: 'STORE_SCHEMA_TOO_NEW',
  /** A recorded migration has a different name than ours: the file belongs to another lineage. */
  SCHEMA_MISMATCH: 'STORE_SCHEMA_MISMATCH',
  /** A migration failed; the transaction was rolled back and nothing changed. */
  MIGRATION_FAILED: 'STORE_MIGRATION_FAILED',
  /** Another connection held the write lock past busy_timeout; retrying may help. */
  BUSY: 'STORE_BUSY',
  /** SQLite refused a read or write for another reason (a constraint, a misuse); details.sqliteCode says which. */
  SQLITE_FAILED: 'STORE_SQLITE_FAILED',
  /**
   * The data folder's filesystem is full (SQLITE_FULL, ENOSPC, EDQUOT): nothing was written. Retryable once
   * space is freed; details.folder names the folder, details.freeBytes what it has left.
   */
  DISK_FULL: 'STORE_DISK_FULL',
  /** The disk refused a read or write (SQLITE_IOERR_*, EIO, a read-only filesystem); details.sqliteCode or errno says which. */
  IO_ERROR: 'STORE_IO_ERROR',
  /** The store was used after close(). */
  CLOSED: 'STORE_CLOSED',
  /** A value could not be encoded as canonical JSON (undefined, NaN, a cycle, a class instance…). */
  INVALID_VALUE: 'STORE_INVALID_VALUE',
  /** A stored row could not be decoded (damaged by hand). */
  CORRUPT: 'STORE_CORRUPT',
  /** The better-sqlite3 native module does not load in this runtime (built for another Node or Electron ABI). */
  NATIVE_BINDING_UNAVAILABLE: 'STORE_NATIVE_BINDING_UNAVAILABLE',
  /** An audit event was refused before it was written (empty type/actor, payload not an object). */
  AUDIT_INVALID_EVENT: 'AUDIT_INVALID_EVENT',
  /** An audit query was out of bounds (limit outside 1..1000, bad beforeSeq). */
  AUDIT_INVALID_QUERY: 'AUDIT_INVALID_QUERY',
} as const;

export type StoreErrorCode = (typeof StoreErrorCode)[keyof typeof StoreErrorCode];

/**
 * What a failed write says about the disk under the data folder: `full` (no space or quota left), `io`
 * (the device refused: an I/O error, a read-only filesystem), `busy` (another connection's lock) or `other`
 * (a constraint, a bug: not the disk's doing). One place for every writer (SQLite through better-sqlite3,
 * whose errors carry SQLite's extended code as `code`, and node:fs, whose errors carry an errno name).
 */
export type StorageFault = 'full' | 'io' | 'busy' | 'other';

// SQLite reports a full disk as SQLITE_FULL, but a write that fails while the OS extends a file, its
// -wal or its -shm (a short write, a failed fallocate) arrives as an I/O error with errno ENOSPC lost.
const SQLITE_IO_PREFIXES = ['SQLITE_IOERR', 'SQLITE_READONLY', 'SQLITE_CANTOPEN'];
const FS_FULL = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);
const FS_IO = new Set(['EIO', 'EROFS', 'ENXIO', 'ENODEV', 'ESTALE']);

/** The error's own code (SQLite's extended code or an errno name), or null when it carries none. */
export function storageErrorCode(err: unknown): string | null {
  if (err instanceof AppError) {
    const c = err.details['sqliteCode'] ?? err.details['errno'];
    return typeof c === 'string' ? c : storageErrorCode(err.cause);
  }
  const code = (err as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : null;
}

export function classifyStorageFault(err: unknown): StorageFault {
  if (err instanceof AppError) {
    if (err.code === StoreErrorCode.DISK_FULL) return 'full';
    if (err.code === StoreErrorCode.IO_ERROR) return 'io';
    if (err.code === StoreErrorCode.BUSY) return 'busy';
  }
  const code = storageErrorCode(err);
  if (code === null) return 'other';
  if (code === 'SQLITE_FULL' || FS_FULL.has(code)) return 'full';
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'busy';
  if (SQLITE_IO_PREFIXES.some((p) => code === p || code.startsWith(`${p}_`)) || FS_IO.has(code)) return 'io';
  return 'other';
}

/** Where the failed write was going, for the operator: the folder, and what its filesystem has left (null: unknown). */
export interface StorageWhere {
  folder: string;
  freeBytes: number | null;
}

/**
 * Wraps a better-sqlite3 (or node:fs) error at the edge, keeping it as `cause`; AppErrors pass through.
 * With `where`, a full disk or an I/O error names the folder, so the operator knows what to free.
 */
export function wrapSqliteError(err: unknown, what: string, where?: StorageWhere): AppError {
  if (err instanceof AppError) return err;
  const code = storageErrorCode(err);
  const message = (err as Error)?.message ?? String(err);
  const fault = classifyStorageFault(err);
  const details = { sqliteCode: code, ...(where ? { folder: where.folder, freeBytes: where.freeBytes } : {}) };
  if (fault === 'full') {
    const folder = where ? `the data folder ${where.folder} is full${where.freeBytes === null ? '' : ` (${formatStorageBytes(where.freeBytes)} free)`}` : 'the disk is full';
    return new AppError(StoreErrorCode.DISK_FULL, `${what}: ${folder}; nothing was written. Free space there and try again (${code ?? message}).`, {
      retryable: true,
      details,
      cause: err,
    });
  }
  if (fault === 'io') {
    const folder = where ? ` in the data folder ${where.folder}` : '';
    return new AppError(StoreErrorCode.IO_ERROR, `${what}: the disk refused the write${folder} (${code ?? 'I/O error'}: ${message})`, {
      retryable: true,
      details,
      cause: err,
    });
  }
  const busy = fault === 'busy';
  return new AppError(busy ? StoreErrorCode.BUSY : StoreErrorCode.SQLITE_FAILED, `${what}: ${message}`, {
    retryable: busy,
    details,
    cause: err,
  });
}

declare module '../base/index.js' {
  interface ErrorCodeRegistry {
    store: StoreErrorCode;
  }
}
