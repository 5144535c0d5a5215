// Stable error codes of the store capability (the database, its migrations,
// settings and the audit log). Callers match on these, never on messages.

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
  /** SQLite refused a read or write (disk full, I/O error, constraint); details.sqliteCode says which. */
  SQLITE_FAILED: 'STORE_SQLITE_FAILED',
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

/** Wraps a better-sqlite3 error at the edge, keeping it as `cause`; AppErrors pass through. */
export function wrapSqliteError(err: unknown, what: string): AppError {
  if (err instanceof AppError) return err;
  const sqliteCode = (err as { code?: unknown })?.code;
  const code = typeof sqliteCode === 'string' ? sqliteCode : null;
  const busy = code !== null && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
  return new AppError(busy ? StoreErrorCode.BUSY : StoreErrorCode.SQLITE_FAILED, `${what}: ${(err as Error)?.message ?? String(err)}`, {
    retryable: busy,
    details: { sqliteCode: code },
    cause: err,
  });
}

declare module '../base/index.js' {
  interface ErrorCodeRegistry {
    store: StoreErrorCode;
  }
}
