// Captured requests in the `captures` table (migration 15). Captures wait in a
// bounded memory queue and are written off the hot path in one transaction per
// flush, redacted on the way (the client's token, the upstream's API key,
// secrets written inline). The retention (days, rows, bytes) runs in the
// background in small deletes, as the request log's does. A full data folder
// never stops the proxy: captures wait within the backlog, the oldest beyond it
// are dropped and counted, and the store's health says so.
import type Database from 'better-sqlite3';
import type { CaptureBody, CaptureBodyMeta, CaptureDetail, CaptureQuery, CaptureSummary } from '../../../src-preload/contract/index.js';
import type { Clock, Disposable, Logger } from '../base/index.js';
import type { Config } from '../config/index.js';
import type { StorageHealthTracker } from '../store/index.js';
import { describeBody, redactHeaders, redactText } from './capture-body.js';
import type { CaptureSink, PendingBody, PendingCapture } from './capture-tap.js';

type CaptureSettings = Config['proxy']['capture'];

export interface CaptureStoreOptions {
  db: Database.Database;
  clock: Clock;
  logger: Logger;
  /** The capture config in force (read at each pass, so a reload applies). */
  settings: () => CaptureSettings;
  /** The API key of an upstream, when it has one: redacted wherever it appears. */
  upstreamSecrets?: (upstream: string) => Promise<readonly string[]>;
  health?: StorageHealthTracker;
  flushIntervalMs?: number;
  /** How often the retention pass runs; default a minute (and once soon after start). */
  pruneIntervalMs?: number;
  /** Kept bytes of captures waiting to be written; beyond it the oldest are dropped and counted. Default 32 MiB. */
  backlogBytes?: number;
  /** After a failed write, the next try waits this long. Default 1 s. */
  retryMs?: number;
}

/** Rows per DELETE: a few milliseconds of work, then the event loop gets the proxy back. */
const PRUNE_CHUNK_ROWS = 500;
/** A full count at most this often, and after a retention pass that deleted rows (once a minute at most). */
const RECOUNT_MS = 600_000;
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

interface Row {
  ts: number;
  requestId: string;
  traceId: string | null;
  client: string;
  model: string | null;
  upstream: string | null;
  endpoint: string;
  status: number;
  errorCode: string | null;
  reason: 'failure' | 'sample';
  requestMeta: string;
  requestHeaders: string;
  requestText: string | null;
  answerMeta: string;
  answerHeaders: string;
  answerText: string | null;
  storedBytes: number;
}

interface DbRow {
  id: number;
  ts: number;
  request_id: string;
  trace_id: string | null;
  client: string;
  model: string | null;
  upstream: string | null;
  endpoint: string;
  status: number;
  error_code: string | null;
  reason: 'failure' | 'sample';
  request_meta: string;
  answer_meta: string;
  request_headers?: string;
  request_text?: string | null;
  answer_headers?: string;
  answer_text?: string | null;
}

const SUMMARY_COLUMNS = 'id, ts, request_id, trace_id, client, model, upstream, endpoint, status, error_code, reason, request_meta, answer_meta';

export class CaptureStore implements CaptureSink, Disposable {
  private pending: PendingCapture[] = [];
  private pendingBytes = 0;
  private dropped = 0;
  private failingSince: number | null = null;
  private nextTryAt = 0;
  private flushing: Promise<void> | null = null;
  private pruning: Promise<number> | null = null;
  private lastPrunedAt: number | null = null;
  /**
   * Rows, kept bytes and the oldest capture as of `at` (a full count), kept current by this store's own
   * writes; a retention pass that deleted marks it stale. COUNT and SUM walk the table (a million rows
   * is tens of milliseconds), and the Proxy view asks every second.
   */
  private kept: { at: number; rows: number; bytes: number; oldestTs: number | null; stale: boolean } | null = null;
  private disposed = false;
  private readonly timers: Disposable[] = [];
  private readonly insertMany: (rows: Row[]) => void;
  private readonly backlogBytes: number;

  constructor(private readonly options: CaptureStoreOptions) {
    const { db, clock } = options;
    this.backlogBytes = options.backlogBytes ?? 32 * 1024 * 1024;
    const insert = db.prepare(
      `INSERT INTO captures (ts, request_id, trace_id, client, model, upstream, endpoint, status, error_code, reason,
         request_meta, request_headers, request_text, answer_meta, answer_headers, answer_text, stored_bytes)
       VALUES (@ts, @requestId, @traceId, @client, @model, @upstream, @endpoint, @status, @errorCode, @reason,
         @requestMeta, @requestHeaders, @requestText, @answerMeta, @answerHeaders, @answerText, @storedBytes)`,
    );
    this.insertMany = db.transaction((rows: Row[]) => {
      for (const r of rows) insert.run(r);
    });
    this.timers.push(clock.setInterval(() => void this.flush(), options.flushIntervalMs ?? 250));
    this.timers.push(clock.setInterval(() => void this.prune().catch((err: unknown) => this.pruneFailed(err)), options.pruneIntervalMs ?? 60_000));
    setImmediate(() => void this.prune().catch((err: unknown) => this.pruneFailed(err)));
    if (options.health) {
      this.timers.push(options.health.track('captures', () => ({ dropped: this.dropped, pending: this.pending.length })));
      this.timers.push(options.health.onDidRecover(() => void this.flush(true)));
    }
  }

  add(capture: PendingCapture): void {
    if (this.disposed) return;
    this.pending.push(capture);
    this.pendingBytes += capture.request.bytes.length + capture.answer.bytes.length;
    this.trimBacklog();
  }

  /** Writes what waits; a flush under way is joined. While writes fail, a try waits `retryMs` unless `force`. */
  flush(force = false): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.pending.length === 0) return Promise.resolve();
    if (this.failingSince !== null && !force && this.options.clock.now() < this.nextTryAt) return Promise.resolve();
    this.flushing = this.writePending().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async writePending(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    const rows: Row[] = [];
    for (const c of batch) rows.push(toRow(c, await this.secretsOf(c)));
    try {
      this.insertMany(rows);
    } catch (err) {
      this.pending = batch.concat(this.pending);
      this.pendingBytes = this.pending.reduce((n, c) => n + c.request.bytes.length + c.answer.bytes.length, 0);
      this.failedWrite(err, batch.length);
      return;
    }
    if (this.failingSince !== null) {
      this.options.logger.info('captured requests are written again', { failingSince: this.failingSince, dropped: this.dropped });
      this.failingSince = null;
    }
    this.options.health?.wrote('captures');
    if (this.kept) {
      this.kept.rows += rows.length;
      this.kept.bytes += rows.reduce((n, r) => n + r.storedBytes, 0);
      this.kept.oldestTs ??= rows[0]?.ts ?? null;
    }
  }

  private async secretsOf(c: PendingCapture): Promise<string[]> {
    const secrets = c.clientToken ? [c.clientToken] : [];
    if (c.upstream && this.options.upstreamSecrets) {
      try {
        secrets.push(...(await this.options.upstreamSecrets(c.upstream)));
      } catch (err) {
        this.options.logger.warn('the upstream API key could not be read to redact a capture', { upstream: c.upstream, error: (err as Error).message });
      }
    }
    return secrets;
  }

  private failedWrite(err: unknown, count: number): void {
    const first = this.failingSince === null;
    const now = this.options.clock.now();
    this.failingSince ??= now;
    this.nextTryAt = now + (this.options.retryMs ?? 1_000);
    this.trimBacklog();
    const reported = this.options.health?.failed('captures', err, 'captured request write') ?? err;
    if (first) this.options.logger.warn('captured requests could not be written; they wait and are retried', { count, error: (reported as Error).message });
  }

  private trimBacklog(): void {
    while (this.pendingBytes > this.backlogBytes && this.pending.length > 0) {
      const gone = this.pending.shift()!;
      this.pendingBytes -= gone.request.bytes.length + gone.answer.bytes.length;
      this.dropped++;
    }
  }

  private pruneFailed(err: unknown): void {
    this.options.logger.warn('capture retention pass failed; will retry', { error: (err as Error).message });
  }

  /** Deletes captures past the retention (age, then count, then bytes), oldest first, in chunks. Returns the rows deleted. */
  prune(): Promise<number> {
    if (this.disposed) return Promise.resolve(0);
    this.pruning ??= this.prunePass().finally(() => {
      this.pruning = null;
    });
    return this.pruning;
  }

  private async prunePass(): Promise<number> {
    const { db, clock } = this.options;
    const { days, rows, bytes } = this.options.settings().retention;
    let deleted = await this.deleteChunks(db.prepare('DELETE FROM captures WHERE id IN (SELECT id FROM captures WHERE ts < ? ORDER BY ts LIMIT ?)'), clock.now() - days * 86_400_000);
    const upTo = db.prepare('DELETE FROM captures WHERE id IN (SELECT id FROM captures WHERE id <= ? ORDER BY id LIMIT ?)');
    const byRows = this.disposed ? undefined : (db.prepare('SELECT id FROM captures ORDER BY id DESC LIMIT 1 OFFSET ?').get(rows) as { id: number } | undefined);
    if (byRows) deleted += await this.deleteChunks(upTo, byRows.id);
    // The newest capture past which the kept bytes, counted from the newest, exceed the cap.
    const byBytes = this.disposed
      ? undefined
      : (db
          .prepare('SELECT id FROM (SELECT id, SUM(stored_bytes) OVER (ORDER BY id DESC) AS kept FROM captures) WHERE kept > ? ORDER BY id DESC LIMIT 1')
          .get(bytes) as { id: number } | undefined);
    if (byBytes) deleted += await this.deleteChunks(upTo, byBytes.id);
    this.lastPrunedAt = clock.now();
    if (this.kept && deleted > 0) this.kept.stale = true;
    return deleted;
  }

  private async deleteChunks(stmt: Database.Statement, edge: number): Promise<number> {
    let deleted = 0;
    for (;;) {
      if (this.disposed) break;
      const n = stmt.run(edge, PRUNE_CHUNK_ROWS).changes;
      deleted += n;
      if (n < PRUNE_CHUNK_ROWS) break;
      await yieldToLoop();
    }
    return deleted;
  }

  counts(): { rowsKept: number; bytesKept: number; oldestTs: number | null; pending: number; dropped: number; lastPrunedAt: number | null } {
    const now = this.options.clock.now();
    const k = this.kept;
    if (!k || k.stale || now - k.at > RECOUNT_MS) {
      const row = this.options.db.prepare('SELECT COUNT(*) AS n, COALESCE(SUM(stored_bytes), 0) AS bytes, MIN(ts) AS oldest FROM captures').get() as { n: number; bytes: number; oldest: number | null };
      this.kept = { at: now, rows: row.n, bytes: row.bytes, oldestTs: row.oldest, stale: false };
    }
    const { rows, bytes, oldestTs } = this.kept!;
    return { rowsKept: rows, bytesKept: bytes, oldestTs, pending: this.pending.length, dropped: this.dropped, lastPrunedAt: this.lastPrunedAt };
  }

  list(q: CaptureQuery): CaptureSummary[] {
    const { where, params } = filters(q);
    const sql = `SELECT ${SUMMARY_COLUMNS} FROM captures ${where} ORDER BY id DESC LIMIT @limit`;
    return (this.options.db.prepare(sql).all({ ...params, limit: q.limit }) as DbRow[]).map(summaryOf);
  }

  /** Captures with their bodies: these ids, or what the query selects. */
  details(select: { ids: readonly number[] } | { query: CaptureQuery }): CaptureDetail[] {
    const { db } = this.options;
    if ('ids' in select) {
      const stmt = db.prepare('SELECT * FROM captures WHERE id = ?');
      return select.ids.flatMap((id) => {
        const row = stmt.get(id) as DbRow | undefined;
        return row ? [detailOf(row)] : [];
      });
    }
    const { where, params } = filters(select.query);
    return (db.prepare(`SELECT * FROM captures ${where} ORDER BY id DESC LIMIT @limit`).all({ ...params, limit: select.query.limit }) as DbRow[]).map(detailOf);
  }

  dispose(): Promise<void> {
    if (this.disposed) return Promise.resolve();
    this.disposed = true;
    for (const t of this.timers.splice(0)) void t.dispose();
    // What waits is written now; what cannot be is lost with the process, and counted.
    return this.flush(true).then(() => {
      if (this.pending.length > 0) {
        this.dropped += this.pending.length;
        this.options.logger.warn('captured requests closed with captures it could not write', { count: this.pending.length });
        this.pending = [];
      }
    });
  }
}

function filters(q: CaptureQuery): { where: string; params: Record<string, unknown> } {
  const where: string[] = [];
  const params: Record<string, unknown> = {};
  const add = (sql: string, name: string, value: unknown) => {
    where.push(sql);
    params[name] = value;
  };
  if (q.beforeId !== undefined) add('id < @beforeId', 'beforeId', q.beforeId);
  if (q.model) add('model = @model COLLATE NOCASE', 'model', q.model);
  if (q.client) add('client = @client', 'client', q.client);
  if (q.requestId) add('request_id = @requestId', 'requestId', q.requestId);
  if (q.sinceTs !== undefined) add('ts >= @sinceTs', 'sinceTs', q.sinceTs);
  return { where: where.length ? `WHERE ${where.join(' AND ')}` : '', params };
}

function headerOf(h: PendingBody['headers'], name: string): string | null {
  const v = h[name];
  if (v === undefined) return null;
  return Array.isArray(v) ? (v as string[]).join(', ') : String(v as string | number);
}

/** The stored row: each body classified, its text and headers redacted. */
export function toRow(c: PendingCapture, secrets: readonly string[]): Row {
  const body = (b: PendingBody) => {
    const described = describeBody(b.bytes, b.sizeBytes, b.truncated, { contentType: headerOf(b.headers, 'content-type'), contentEncoding: headerOf(b.headers, 'content-encoding') });
    const text = described.text === null ? null : redactText(described.text, secrets, b.truncated);
    return { meta: JSON.stringify(described.meta), headers: JSON.stringify(redactHeaders(b.headers, secrets)), text };
  };
  const request = body(c.request);
  const answer = body(c.answer);
  return {
    ts: c.ts,
    requestId: c.requestId,
    traceId: c.traceId,
    client: c.client,
    model: c.model,
    upstream: c.upstream,
    endpoint: c.endpoint,
    status: c.status,
    errorCode: c.errorCode,
    reason: c.reason,
    requestMeta: request.meta,
    requestHeaders: request.headers,
    requestText: request.text,
    answerMeta: answer.meta,
    answerHeaders: answer.headers,
    answerText: answer.text,
    storedBytes: Buffer.byteLength(request.text ?? '') + Buffer.byteLength(answer.text ?? ''),
  };
}

function summaryOf(r: DbRow): CaptureSummary {
  return {
    id: r.id,
    ts: r.ts,
    requestId: r.request_id,
    traceId: r.trace_id,
    client: r.client,
    model: r.model,
    upstream: r.upstream,
    endpoint: r.endpoint,
    status: r.status,
    errorCode: r.error_code,
    reason: r.reason,
    request: JSON.parse(r.request_meta) as CaptureBodyMeta,
    answer: JSON.parse(r.answer_meta) as CaptureBodyMeta,
  };
}

function detailOf(r: DbRow): CaptureDetail {
  const s = summaryOf(r);
  const body = (meta: CaptureBodyMeta, headers: string | undefined, text: string | null | undefined): CaptureBody => ({
    ...meta,
    headers: JSON.parse(headers ?? '{}') as Record<string, string>,
    text: text ?? null,
  });
  return { ...s, request: body(s.request, r.request_headers, r.request_text), answer: body(s.answer, r.answer_headers, r.answer_text) };
}
