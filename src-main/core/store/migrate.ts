import type Database from 'better-sqlite3';
import { AppError, BaseErrorCode, type Clock, type Logger } from '../base/index.js';
import { StoreErrorCode } from './errors.js';
import type { Migration } from './migrations.js';

interface RecordedMigration {
  version: number;
  name: string;
}

/** Versions recorded in the file; empty for a new database. Reads only. */
export function recordedMigrations(db: Database.Database): RecordedMigration[] {
  const table = db
    .prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`)
    .get();
  if (!table) return [];
  return db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all() as RecordedMigration[];
}

/**
 * Refuses a database we must not touch: one with a version newer than we know,
 * or one whose recorded names differ from ours. Runs before anything is written.
 */
export function checkCompatible(file: string, recorded: RecordedMigration[], known: readonly Migration[]): void {
  const latest = known[known.length - 1]?.version ?? 0;
  const newest = recorded[recorded.length - 1]?.version ?? 0;
  if (newest > latest) {
    throw new AppError(
      StoreErrorCode.SCHEMA_TOO_NEW,
      `${file} was written by a newer GPU Console (schema version ${newest}; this version knows up to ${latest}). Update the app or point it at another data folder.`,
      { details: { file, version: newest, latestKnown: latest } },
    );
  }
  const byVersion = new Map(known.map((m) => [m.version, m.name]));
  for (const r of recorded) {
    if (byVersion.get(r.version) !== r.name) {
      throw new AppError(
        StoreErrorCode.SCHEMA_MISMATCH,
        `${file}: recorded migration ${r.version} "${r.name}" is not this app's migration ${r.version}`,
        { details: { file, version: r.version, recorded: r.name, expected: byVersion.get(r.version) ?? null } },
      );
    }
  }
}

/** Applies the missing migrations in one IMMEDIATE transaction; returns the resulting version. */
export function applyMigrations(
  db: Database.Database,
  file: string,
  known: readonly Migration[],
  clock: Clock,
  logger: Logger,
): number {
  assertWellFormed(known);
  const run = db.transaction((): number => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    INTEGER PRIMARY KEY,
      name       TEXT NOT NULL,
      applied_at INTEGER NOT NULL
    ) STRICT`);
    // Read again inside the write lock: another process may have migrated meanwhile.
    const recorded = recordedMigrations(db);
    checkCompatible(file, recorded, known);
    const done = new Set(recorded.map((r) => r.version));
    const insert = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    let version = recorded[recorded.length - 1]?.version ?? 0;
    for (const m of known) {
      if (done.has(m.version)) continue;
      try {
        db.exec(m.up);
      } catch (err) {
        throw new AppError(
          StoreErrorCode.MIGRATION_FAILED,
          `${file}: migration ${m.version} "${m.name}" failed: ${(err as Error).message}`,
          { details: { file, version: m.version, name: m.name }, cause: err },
        );
      }
      insert.run(m.version, m.name, Math.floor(clock.now()));
      logger.info('migration applied', { version: m.version, name: m.name });
      version = m.version;
    }
    return version;
  });
  return run.immediate();
}

function assertWellFormed(known: readonly Migration[]): void {
  known.forEach((m, i) => {
    if (m.version !== i + 1) throw new AppError(BaseErrorCode.INTERNAL_ASSERTION, `migration #${i} has version ${m.version}, expected ${i + 1}`);
  });
}
