import type Database from 'better-sqlite3';
import { ReportExportSchema, type ReportExport } from '../../../src-preload/contract/index.js';

/** A manual gate as the operator last marked it. */
export interface GateMark {
  id: string;
  status: 'pass' | 'fail' | 'pending';
  note: string;
  markedBy: string;
  markedAt: number;
}

/** Past exports and manual gate marks (migration 7). */
export class ReportRepository {
  private readonly insertExport: Database.Statement;
  private readonly recentExports: Database.Statement<[number], { export: string }>;
  private readonly upsertGate: Database.Statement;
  private readonly allGates: Database.Statement<[], { id: string; status: GateMark['status']; note: string; marked_by: string; marked_at: number }>;

  constructor(private readonly db: Database.Database) {
    this.insertExport = db.prepare('INSERT INTO report_exports (id, created_at, export) VALUES (?, ?, ?)');
    this.recentExports = db.prepare('SELECT export FROM report_exports ORDER BY created_at DESC, rowid DESC LIMIT ?');
    this.upsertGate = db.prepare(
      `INSERT INTO report_gates (id, status, note, marked_by, marked_at) VALUES (@id, @status, @note, @markedBy, @markedAt)
       ON CONFLICT (id) DO UPDATE SET status = excluded.status, note = excluded.note, marked_by = excluded.marked_by, marked_at = excluded.marked_at`,
    );
    this.allGates = db.prepare('SELECT id, status, note, marked_by, marked_at FROM report_gates');
  }

  /**
   * Lists the export; `alongside` (its audit row) runs in the same transaction, so a console killed in
   * between leaves an export that is both listed and audited, or neither (its folder is complete either way:
   * it was renamed into place before).
   */
  addExport(record: ReportExport, alongside?: () => void): void {
    this.db.transaction(() => {
      this.insertExport.run(record.id, record.createdAt, JSON.stringify(record));
      alongside?.();
    })();
  }

  /** Newest first; a row that no longer parses (hand-edited database) is skipped, not fatal. */
  listExports(limit: number): ReportExport[] {
    const out: ReportExport[] = [];
    for (const row of this.recentExports.all(limit)) {
      try {
        const parsed = ReportExportSchema.safeParse(JSON.parse(row.export));
        if (parsed.success) out.push(parsed.data);
      } catch {
        // skip the unreadable row
      }
    }
    return out;
  }

  setGate(mark: GateMark): void {
    this.upsertGate.run(mark);
  }

  gateMarks(): Map<string, GateMark> {
    const map = new Map<string, GateMark>();
    for (const r of this.allGates.all()) map.set(r.id, { id: r.id, status: r.status, note: r.note, markedBy: r.marked_by, markedAt: r.marked_at });
    return map;
  }
}
