// Delivery attempts kept in the database (table notify_deliveries), bounded:
// each insert prunes all but the newest `maxRows`. A row holds what an
// operator needs to see why a page did not arrive (channel, event, outcome,
// HTTP status, attempt, error) and never a URL, header, signature or secret.
import type Database from 'better-sqlite3';
import type { NotifyDelivery, NotifyDeliveryRow } from '../../../src-preload/contract/notify.js';
import type { NotificationSeverity } from './router.js';

export const DEFAULT_MAX_DELIVERY_ROWS = 5_000;

interface RowDb {
  id: number;
  at: number;
  channel_id: string;
  event: string;
  severity: string;
  title: string;
  status: string;
  http_status: number | null;
  attempt: number;
  error_code: string | null;
  error_message: string | null;
  duration_ms: number | null;
}

/** The notice a delivery was for: only what the row shows. */
export interface DeliverySubject {
  severity: NotificationSeverity;
  title: string;
}

export class DeliveryLog {
  private readonly insert: Database.Statement;
  private readonly prune: Database.Statement;
  private readonly listAll: Database.Statement<[number], RowDb>;
  private readonly listChannel: Database.Statement<[string, number], RowDb>;

  constructor(
    db: Database.Database,
    private readonly maxRows = DEFAULT_MAX_DELIVERY_ROWS,
  ) {
    this.insert = db.prepare(
      `INSERT INTO notify_deliveries (at, channel_id, event, severity, title, status, http_status, attempt, error_code, error_message, duration_ms)
       VALUES (@at, @channel_id, @event, @severity, @title, @status, @http_status, @attempt, @error_code, @error_message, @duration_ms)`,
    );
    this.prune = db.prepare('DELETE FROM notify_deliveries WHERE id <= ?');
    this.listAll = db.prepare('SELECT * FROM notify_deliveries ORDER BY id DESC LIMIT ?');
    this.listChannel = db.prepare('SELECT * FROM notify_deliveries WHERE channel_id = ? ORDER BY id DESC LIMIT ?');
  }

  record(d: NotifyDelivery, subject: DeliverySubject): void {
    const { code, message } = splitError(d.error);
    const info = this.insert.run({
      at: Math.floor(d.at),
      channel_id: d.channelId,
      event: d.event,
      severity: subject.severity,
      title: subject.title.slice(0, 300),
      status: d.status,
      http_status: d.httpStatus,
      attempt: d.attempt,
      error_code: code,
      error_message: message,
      duration_ms: d.durationMs === null ? null : Math.round(d.durationMs),
    });
    // Ids only grow (AUTOINCREMENT), so one range delete keeps exactly the newest maxRows.
    const cutoff = Number(info.lastInsertRowid) - this.maxRows;
    if (cutoff > 0) this.prune.run(cutoff);
  }

  /** Newest first. */
  list(q: { limit: number; channelId?: string }): NotifyDeliveryRow[] {
    const rows = q.channelId === undefined ? this.listAll.all(q.limit) : this.listChannel.all(q.channelId, q.limit);
    return rows.map((r) => ({
      id: r.id,
      at: r.at,
      channelId: r.channel_id,
      event: r.event as NotifyDeliveryRow['event'],
      severity: r.severity as NotifyDeliveryRow['severity'],
      title: r.title,
      status: r.status as NotifyDeliveryRow['status'],
      httpStatus: r.http_status,
      attempt: r.attempt,
      errorCode: r.error_code,
      errorMessage: r.error_message,
      durationMs: r.duration_ms,
    }));
  }
}

/**
 * The dispatcher's error is a code (`ECONNREFUSED`, `TIMEOUT`), `HTTP <status>` or a short message
 * with URLs already replaced; URLs are replaced again here so no row can hold one.
 */
export function splitError(error: string | null): { code: string | null; message: string | null } {
  if (!error) return { code: null, message: null };
  if (/^[A-Z][A-Z0-9_]{1,63}$/.test(error)) return { code: error, message: null };
  if (/^HTTP \d{3}$/.test(error)) return { code: 'HTTP_STATUS', message: error };
  return { code: null, message: error.replace(/[a-z][a-z0-9+.-]*:\/\/\S+/gi, '<url>').slice(0, 300) };
}
