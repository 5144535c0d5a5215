import { chmodSync, closeSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { AppError, silentLogger, systemClock, type Clock, type Disposable, type Logger } from '../base/index.js';
import { createAuditLog, type AuditLog } from './audit.js';
import { StoreErrorCode } from './errors.js';
import { StorageHealthTracker } from './storage-health.js';
import { applyMigrations, checkCompatible, recordedMigrations } from './migrate.js';
import { MIGRATIONS } from './migrations.js';
import { createSettings, type SettingsRepository } from './settings.js';

export interface OpenStoreOptions {
  /** Path of the SQLite file (created if missing, with its folder), or ':memory:' for tests. */
  file: string;
  /**
   * Passed unchanged to better-sqlite3's `nativeBinding`: the Electron shell gives
   * the path of a better_sqlite3.node built for Electron's ABI; plain Node omits it.
   */
  nativeBinding?: string;
  clock?: Clock;
  logger?: Logger;
  /** How long a write waits for another connection's lock before SQLITE_BUSY. Default 5000. */
  busyTimeoutMs?: number;
  /**
   * The -wal file is cut back to this size when a checkpoint resets it (journal_size_limit). Without a
   * limit SQLite reuses the file but never shrinks it, so one large transaction (a retention pass after
   * the console was off for days) left a WAL of hundreds of MiB for good. Default 64 MiB.
   */
  walSizeLimitBytes?: number;
  /** How often a failing store checks whether its folder has room again (storage-health.ts). Default 2 s. */
  storageProbeIntervalMs?: number;
  /** Free bytes a full folder needs before writes are tried again. Default 1 MiB. */
  storageRecoverFreeBytes?: number;
}

export interface Store extends Disposable {
  readonly file: string;
  /** Highest migration applied. */
  readonly schemaVersion: number;
  /**
   * The connection, for repositories of later capabilities (their tables come
   * from migrations.ts). Synchronous; keep statements short on hot paths and
   * batch writes in a transaction.
   */
  readonly db: Database.Database;
  readonly settings: SettingsRepository;
  readonly audit: AuditLog;
  /** Whether writes to the data folder land: which writers fail (full disk, I/O error), since when, what they drop. */
  readonly health: StorageHealthTracker;
  /**
   * Runs `fn` in one IMMEDIATE transaction: every write in it lands, or none does. For a change and its
   * audit event (an approval and `lifecycle.approved`): a change the log cannot record is not made. A full
   * disk or an I/O error is thrown as STORE_DISK_FULL / STORE_IO_ERROR naming the data folder.
   */
  atomically<T>(what: string, fn: () => T): T;
  readonly isOpen: boolean;
  /** Closes the connection (checkpointing the WAL). Idempotent. */
  close(): void;
  /** Same as close(). */
  dispose(): void;
}

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

export function openStore(options: OpenStoreOptions): Store {
  const { file } = options;
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const inMemory = file === ':memory:' || file === '';

  if (!inMemory) refuseForeignFile(file);

  let db: Database.Database;
  try {
    if (!inMemory) {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      restrictToOwner(file);
    }
    db = new Database(file, options.nativeBinding === undefined ? {} : { nativeBinding: options.nativeBinding });
  } catch (err) {
    throw openFailed(file, err);
  }

  let schemaVersion: number;
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
    db.pragma('foreign_keys = ON');
    // Refuse a newer schema before anything is written (switching to WAL writes the header).
    checkCompatible(file, readRecorded(db, file), MIGRATIONS);
    if (!inMemory) {
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (String(mode).toLowerCase() !== 'wal') {
        throw new AppError(StoreErrorCode.OPEN_FAILED, `${file}: could not switch to WAL (journal_mode is ${String(mode)})`, {
          details: { file },
        });
      }
      db.pragma('synchronous = NORMAL');
      db.pragma(`journal_size_limit = ${Math.max(0, Math.floor(options.walSizeLimitBytes ?? 64 * 1_048_576))}`);
    }
    schemaVersion = applyMigrations(db, file, MIGRATIONS, clock, logger);
  } catch (err) {
    db.close();
    throw err instanceof AppError ? err : openFailed(file, err);
  }

  let open = true;
  const ensureOpen = (): void => {
    if (!open) throw new AppError(StoreErrorCode.CLOSED, `store ${file} is closed`, { details: { file } });
  };
  // The audit log is the probe: the recovery event is the first write a full folder takes again.
  let audit: AuditLog | null = null;
  const health = new StorageHealthTracker({
    folder: inMemory ? ':memory:' : dirname(file),
    clock,
    logger,
    probeIntervalMs: options.storageProbeIntervalMs,
    recoverFreeBytes: options.storageRecoverFreeBytes,
    freeBytes: inMemory ? () => null : undefined,
    probe: (episode) => {
      audit?.append({ type: 'store.storage.recovered', actor: 'system', target: episode.folder, payload: { ...episode } });
    },
  });
  audit = createAuditLog(db, clock, ensureOpen, health);
  const close = (): void => {
    if (!open) return;
    open = false;
    health.dispose();
    db.close();
  };
  logger.debug('store opened', { file, schemaVersion });

  return {
    file,
    schemaVersion,
    db,
    settings: createSettings(db, clock, ensureOpen),
    audit,
    health,
    atomically<T>(what: string, fn: () => T): T {
      ensureOpen();
      let result: T;
      try {
        result = db.transaction(fn).immediate();
      } catch (err) {
        throw health.failed('audit', err, `${what} refused: it cannot be recorded in the audit log`);
      }
      health.wrote('audit');
      return result;
    },
    get isOpen() {
      return open;
    },
    close,
    dispose: close,
  };
}

/**
 * The database holds request history, token hashes and the audit log: only its owner reads it. SQLite
 * gives -wal and -shm the mode of the database file, so creating it 0600 (and tightening an older
 * file's, with any journal files left beside it) covers all three.
 */
function restrictToOwner(file: string): void {
  try {
    closeSync(openSync(file, 'a', 0o600));
  } catch {
    return; // SQLite's own open reports why the file cannot be had
  }
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) {
    try {
      chmodSync(f, 0o600);
    } catch {
      // absent: nothing to tighten
    }
  }
}

/**
 * A non-empty file without the SQLite header is someone else's data: refuse it
 * before SQLite touches it (opening alone can create -wal/-shm files, and a later
 * write would overwrite it).
 */
function refuseForeignFile(file: string): void {
  let size: number;
  try {
    size = statSync(file).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw openFailed(file, err);
  }
  if (size === 0) return;
  const head = Buffer.alloc(SQLITE_HEADER.length);
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    readSync(fd, head, 0, head.length, 0);
  } catch (err) {
    throw openFailed(file, err);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  if (!head.equals(SQLITE_HEADER)) {
    throw new AppError(StoreErrorCode.OPEN_FAILED, `${file} is not a GPU Console database (not a SQLite file); it was left untouched`, {
      details: { file, reason: 'not-a-database' },
    });
  }
}

function readRecorded(db: Database.Database, file: string): ReturnType<typeof recordedMigrations> {
  try {
    return recordedMigrations(db);
  } catch (err) {
    throw openFailed(file, err);
  }
}

function openFailed(file: string, err: unknown): AppError {
  const code = (err as { code?: unknown })?.code;
  return new AppError(StoreErrorCode.OPEN_FAILED, `cannot open database ${file}: ${(err as Error)?.message ?? String(err)}`, {
    details: { file, ...(typeof code === 'string' ? { sqliteCode: code } : {}) },
    cause: err,
  });
}
