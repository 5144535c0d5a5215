import type Database from 'better-sqlite3';
import { AppError, type Clock } from '../base/index.js';
import { canonicalJson } from './canonical-json.js';
import { StoreErrorCode, wrapSqliteError } from './errors.js';

/** Small key → JSON value settings that belong to this machine's console (not the YAML config). */
export interface SettingsRepository {
  /** The stored value, or undefined when the key was never set. */
  get<T = unknown>(key: string): T | undefined;
  /** Stores `value` (anything canonicalJson accepts) and stamps updated_at from the clock. */
  set(key: string, value: unknown): void;
  /** Removes the key; true when it existed. */
  delete(key: string): boolean;
  /** Every setting, keys in sorted order. */
  all(): Record<string, unknown>;
  /**
   * Runs `fn` as one SQLite transaction: a save that writes a setting and its audit row (or several
   * settings) lands whole or not at all, even if the console is killed in between or a write fails.
   * Nested calls join the outer transaction.
   */
  atomically<T>(fn: () => T): T;
}

export function createSettings(db: Database.Database, clock: Clock, ensureOpen: () => void): SettingsRepository {
  const getStmt = db.prepare<[string], { value: string }>('SELECT value FROM settings WHERE key = ?');
  const setStmt = db.prepare(
    `INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
  );
  const deleteStmt = db.prepare('DELETE FROM settings WHERE key = ?');
  const allStmt = db.prepare<[], { key: string; value: string }>('SELECT key, value FROM settings ORDER BY key');

  const decode = (key: string, text: string): unknown => {
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      throw new AppError(StoreErrorCode.CORRUPT, `setting "${key}" does not hold JSON`, { details: { key }, cause: err });
    }
  };

  return {
    get<T>(key: string): T | undefined {
      ensureOpen();
      const row = getStmt.get(key);
      return row ? (decode(key, row.value) as T) : undefined;
    },
    set(key: string, value: unknown): void {
      ensureOpen();
      if (typeof key !== 'string' || key.length === 0) {
        throw new AppError(StoreErrorCode.INVALID_VALUE, 'setting key must be a non-empty string');
      }
      let text: string;
      try {
        text = canonicalJson(value);
      } catch (err) {
        throw new AppError(StoreErrorCode.INVALID_VALUE, `setting "${key}": ${(err as Error).message}`, {
          details: { key },
          cause: err,
        });
      }
      try {
        setStmt.run(key, text, Math.floor(clock.now()));
      } catch (err) {
        throw wrapSqliteError(err, `setting "${key}"`);
      }
    },
    delete(key: string): boolean {
      ensureOpen();
      return deleteStmt.run(key).changes > 0;
    },
    all(): Record<string, unknown> {
      ensureOpen();
      const out: Record<string, unknown> = {};
      for (const row of allStmt.iterate()) out[row.key] = decode(row.key, row.value);
      return out;
    },
    atomically<T>(fn: () => T): T {
      ensureOpen();
      return db.transaction(fn)();
    },
  };
}
