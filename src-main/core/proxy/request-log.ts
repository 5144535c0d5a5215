// One `requests` row per answered request of an authenticated client, written
// in batches off the hot path: rows collect in memory and a timer (or a full
// batch, on the next turn of the event loop) writes them in one transaction. The buffer is bounded; flush() and
// dispose() write what is left. A retention (age and row count) is enforced in
// the background in small deletes, so the proxy never waits on a long one.
// When the data folder is full (or the disk fails) the proxy keeps serving: rows
// wait in a bounded backlog, the oldest beyond it are dropped and counted, and
// the store's health says which folder and since when; writes resume by themselves.
import type Database from 'better-sqlite3';
import type { RequestLogCounts, RequestLogRetention, RequestQuery, RequestRow } from '../../../src-preload/contract/index.js';
import { type Clock, type Disposable, type Logger } from '../base/index.js';
import type { StorageHealthTracker } from '../store/index.js';
import type { TrafficClass } from './classes.js';

/** A row before it is written; `traceId` absent reads as none (writers from before traces). */
export type RequestRecord = Omit<RequestRow, 'seq' | 'traceId'> & { traceId?: string | null };

export interface RequestLogOptions {
  db: Database.Database;
  clock: Clock;
  logger: Logger;
  flushIntervalMs?: number;
  /** Rows that trigger a flush at once. */
  batchSize?: number;
  /** Called after each written batch with the distinct client names in it. */
  onFlushed?(clients: Set<string>, at: number): void;
  /** Called for each record as it is queued (others react to answered requests, e.g. one sleeping). */
  onAdded?(record: RequestRecord): void;
  /** The retention in force (read at each pass, so a config reload applies). */
  retention?: () => { maxAgeMs: number; maxRows: number };
  /** How often the retention pass runs; default a minute (and once soon after start). */
  pruneIntervalMs?: number;
  /** Told of each failed and landed batch (which folder is full, what is dropped); absent in tests of the log alone. */
  health?: StorageHealthTracker;
  /** Rows held while writes fail; beyond it the oldest are dropped and counted. Default 10,000 (~3 MB). */
  backlogRows?: number;
  /** After a failed batch, the next try waits this long (a full disk fails every try). Default 1 s. */
  retryMs?: number;
}

/** Rows held before add() writes them itself, in batches: a full batch otherwise waits for the next turn of the event loop. */
const SYNC_FLUSH_BATCHES = 4;
/** Rows per DELETE: a few milliseconds of work, then the event loop gets the proxy back. */
const PRUNE_CHUNK_ROWS = 2_000;
/**
 * The row count is kept up to date by this log (writes add, deletes subtract) and counted again
 * at most this often: COUNT(*) walks an index of every row (~35 ms at 1,000,000 rows).
 */
const RECOUNT_MS = 600_000;

/**
 * The index each filter combination reads newest-first (migration 8). Chosen here, not left to the
 * planner: without statistics it reads a model's or a class's rows for a rare combination (an error
 * filter with a model: every row of the model, 60+ ms at 1,000,000 rows), where the index named here
 * holds only the rows that can match.
 */
function requestIndex(q: RequestQuery): string | null {
  if (q.trace !== undefined) return null;
  if (q.outcome === 'error') return q.model ? 'requests_errors_model' : 'requests_errors';
  if (q.model) return q.class ? 'requests_model_class' : 'requests_model';
  return q.class ? 'requests_class' : null;
}

/** The Proxy view's query: the newest rows matching the filters, through the index chosen for them. */
export function requestQuerySql(q: RequestQuery): { sql: string; params: Record<string, unknown> } {
  const where: string[] = [];
  const params: Record<string, unknown> = { limit: q.limit };
  if (q.beforeSeq !== undefined) {
    where.push('seq < @beforeSeq');
    params['beforeSeq'] = q.beforeSeq;
  }
  if (q.model) {
    where.push('model = @model COLLATE NOCASE');
    params['model'] = q.model;
  }
  if (q.class) {
    where.push('class = @class');
    params['class'] = q.class;
  }
  if (q.trace !== undefined) {
    // A trace is the client's id (requests_trace) or, for a request that sent none, our own row id (UNIQUE).
    where.push('seq IN (SELECT seq FROM requests WHERE trace_id = @trace UNION ALL SELECT seq FROM requests WHERE id = @trace)');
    params['trace'] = q.trace;
  }
  if (q.outcome === 'ok') where.push('status < 400');
  // Exactly the partial indexes' condition, so SQLite may use them.
  if (q.outcome === 'error') where.push('status >= 400');
  const index = requestIndex(q);
  const sql = `SELECT * FROM requests${index ? ` INDEXED BY ${index}` : ''} ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY seq DESC LIMIT @limit`;
  return { sql, params };
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

interface DbRow {
  seq: number;
  id: string;
  ts: number;
  client: string;
  class: TrafficClass | null;
  endpoint: string;
  model: string | null;
  upstream: string | null;
  stream: number;
  status: number;
  error_code: string | null;
  queue_ms: number;
  ttft_ms: number | null;
  total_ms: number;
  tokens_in: number | null;
  tokens_out: number | null;
  bytes_in: number;
  bytes_out: number;
  replayed: number;
  trace_id: string | null;
}

export class RequestLog implements Disposable {
  private buffer: RequestRecord[] = [];
  private readonly timer: Disposable;
  private readonly insert: Database.Statement;
  private readonly writeBatch: (rows: RequestRecord[]) => void;
  private readonly batchSize: number;
  private written = 0;
  private dropped = 0;
  private failingSince: number | null = null;
  private nextTryAt = 0;
  private readonly backlogRows: number;
  private readonly healthLinks: Disposable[] = [];
  private disposed = false;
  /** A flush of a full batch is scheduled (flushSoon). */
  private flushQueued = false;
  private readonly pruneTimer: Disposable | null;
  private pruning: Promise<number> | null = null;
  private lastPrune: { at: number; rows: number } | null = null;
  /** Rows in the table as of `at` (a full count), kept current by this log's own writes and deletes. */
  private rowCount: { at: number; rows: number } | null = null;
  private readonly queries = new Map<string, Database.Statement>();
  private readonly deleteOlder: Database.Statement<[number, number]>;
  private readonly deleteUpTo: Database.Statement<[number, number]>;
  private readonly nthNewest: Database.Statement<[number], { seq: number }>;
  private readonly span: Database.Statement<[], { span: number | null }>;

  constructor(private readonly options: RequestLogOptions) {
    const { db } = options;
    this.batchSize = options.batchSize ?? 512;
    this.insert = db.prepare(
      `INSERT INTO requests (id, ts, client, class, endpoint, model, upstream, stream, status, error_code, queue_ms, ttft_ms,
         total_ms, tokens_in, tokens_out, bytes_in, bytes_out, replayed, trace_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    // Positional parameters: no per-row object copy, and cheaper binding than named ones.
    this.writeBatch = db.transaction((rows: RequestRecord[]) => {
      const insert = this.insert;
      for (const r of rows) {
        insert.run(r.id, r.ts, r.client, r.class, r.endpoint, r.model, r.upstream, r.stream ? 1 : 0, r.status, r.errorCode, r.queueMs,
          r.ttftMs, r.totalMs, r.tokensIn, r.tokensOut, r.bytesIn, r.bytesOut, r.replayed ? 1 : 0, r.traceId ?? null);
      }
    });
    this.timer = options.clock.setInterval(() => this.flush(), options.flushIntervalMs ?? 250);
    // Oldest by arrival through requests_ts: with nothing past the age this is one index probe (ORDER BY seq
    // made SQLite walk the whole table looking for a match, ~70 ms every pass at 1,000,000 rows).
    this.deleteOlder = db.prepare('DELETE FROM requests WHERE seq IN (SELECT seq FROM requests WHERE ts < ? ORDER BY ts LIMIT ?)');
    this.span = db.prepare('SELECT MAX(seq) - MIN(seq) + 1 AS span FROM requests');
    this.deleteUpTo = db.prepare('DELETE FROM requests WHERE seq IN (SELECT seq FROM requests WHERE seq <= ? ORDER BY seq LIMIT ?)');
    this.nthNewest = db.prepare('SELECT seq FROM requests ORDER BY seq DESC LIMIT 1 OFFSET ?');
    this.pruneTimer = options.retention
      ? options.clock.setInterval(() => void this.prune().catch((err: unknown) => this.pruneFailed(err)), options.pruneIntervalMs ?? 60_000)
      : null;
    if (options.retention) setImmediate(() => void this.prune().catch((err: unknown) => this.pruneFailed(err)));
    this.backlogRows = Math.max(0, Math.floor(options.backlogRows ?? 10_000));
    if (options.health) {
      this.healthLinks.push(options.health.track('requests', () => ({ dropped: this.dropped, pending: this.buffer.length })));
      // Space is back: write what waits now rather than at the next retry.
      this.healthLinks.push(options.health.onDidRecover(() => this.flush(true)));
    }
  }

  private pruneFailed(err: unknown): void {
    this.options.logger.warn('request log retention pass failed; will retry', { error: (err as Error).message });
  }

  /**
   * Deletes rows past the retention, oldest first, in chunks with the event loop free between them.
   * Returns the rows deleted; a pass already running is joined, not doubled.
   */
  prune(): Promise<number> {
    if (!this.options.retention || this.disposed) return Promise.resolve(0);
    this.pruning ??= (async () => {
      const { maxAgeMs, maxRows } = this.options.retention!();
      const cutoff = this.options.clock.now() - maxAgeMs;
      let deleted = 0;
      for (;;) {
        if (this.disposed) break;
        const n = this.deleteOlder.run(cutoff, PRUNE_CHUNK_ROWS).changes;
        deleted += n;
        if (n < PRUNE_CHUNK_ROWS) break;
        await yieldToLoop();
      }
      // Seqs only grow, so the span from the oldest to the newest bounds the count: within the cap, there
      // is nothing to find, and the OFFSET walk over maxRows rows (~50 ms at 1,000,000) is skipped.
      const span = this.disposed ? null : (this.span.get()?.span ?? null);
      const edge = span === null || span <= maxRows ? undefined : this.nthNewest.get(maxRows);
      if (edge) {
        for (;;) {
          if (this.disposed) break;
          const n = this.deleteUpTo.run(edge.seq, PRUNE_CHUNK_ROWS).changes;
          deleted += n;
          if (n < PRUNE_CHUNK_ROWS) break;
          await yieldToLoop();
        }
      }
      this.lastPrune = { at: this.options.clock.now(), rows: deleted };
      if (this.rowCount) this.rowCount.rows = Math.max(0, this.rowCount.rows - deleted);
      return deleted;
    })().finally(() => {
      this.pruning = null;
    });
    return this.pruning;
  }

  /** What the retention keeps and what is kept now. */
  retentionView(): RequestLogRetention {
    const now = this.options.clock.now();
    this.flush();
    if (!this.rowCount || now - this.rowCount.at > RECOUNT_MS) {
      const row = this.options.db.prepare('SELECT COUNT(*) AS n FROM requests').get() as { n: number };
      this.rowCount = { at: now, rows: row.n };
    }
    const oldest = this.options.db.prepare('SELECT MIN(ts) AS oldest FROM requests').get() as { oldest: number | null };
    const r = this.options.retention?.() ?? null;
    return {
      maxAgeDays: r ? r.maxAgeMs / 86_400_000 : null,
      maxRows: r ? r.maxRows : null,
      rowsKept: this.rowCount.rows,
      oldestTs: oldest.oldest,
      lastPrunedAt: this.lastPrune?.at ?? null,
      lastPrunedRows: this.lastPrune?.rows ?? null,
    };
  }

  /** Rows written so far by this log. */
  get writtenCount(): number {
    return this.written;
  }

  get pendingCount(): number {
    return this.buffer.length;
  }

  /** Rows written, dropped (writes failed past the backlog) and waiting, and since when writes fail. */
  counts(): RequestLogCounts {
    return { written: this.written, dropped: this.dropped, pending: this.buffer.length, failingSince: this.failingSince };
  }

  add(record: RequestRecord): void {
    this.buffer.push(record);
    this.options.onAdded?.(record);
    if (this.failingSince !== null) this.trimBacklog();
    // A caller adding rows without yielding (an import, a fill) never outruns the bound: written at once.
    else if (this.buffer.length >= this.batchSize * SYNC_FLUSH_BATCHES) this.flush();
    else if (this.buffer.length >= this.batchSize) this.flushSoon();
  }

  /**
   * A full batch is written once the event loop has finished the I/O at hand (setImmediate), not
   * inside the request that filled it: ~15 µs a row of SQLite index work, a few ms a batch, stays
   * off every request's own path.
   */
  private flushSoon(): void {
    if (this.flushQueued || this.disposed) return;
    this.flushQueued = true;
    setImmediate(() => {
      this.flushQueued = false;
      if (!this.disposed) this.flush();
    });
  }

  /**
   * Writes what waits in one transaction. While writes fail, a try waits `retryMs` after the last
   * failure unless `force` (space came back, a reader wants the rows, the log closes).
   */
  flush(force = false): void {
    if (this.buffer.length === 0) return;
    const now = this.options.clock.now();
    if (this.failingSince !== null && !force && now < this.nextTryAt) return;
    const rows = this.buffer;
    this.buffer = [];
    try {
      this.writeBatch(rows);
    } catch (err) {
      this.buffer = rows.concat(this.buffer);
      this.failedBatch(err, rows.length, now);
      return;
    }
    this.written += rows.length;
    if (this.rowCount) this.rowCount.rows += rows.length;
    if (this.failingSince !== null) {
      this.options.logger.info('request log writes again', { failingSince: this.failingSince, dropped: this.dropped });
      this.failingSince = null;
    }
    this.options.health?.wrote('requests');
    this.options.onFlushed?.(new Set(rows.map((r) => r.client)), now);
  }

  /** A busy or full disk must not take the proxy down: rows wait (bounded), the oldest beyond it are dropped and counted. */
  private failedBatch(err: unknown, rows: number, now: number): void {
    const first = this.failingSince === null;
    this.failingSince ??= now;
    this.nextTryAt = now + (this.options.retryMs ?? 1_000);
    this.trimBacklog();
    const reported = this.options.health?.failed('requests', err, 'request log write') ?? err;
    if (first) this.options.logger.warn('request log write failed; rows wait and are retried', { rows, error: (reported as Error).message, dropped: this.dropped });
  }

  private trimBacklog(): void {
    const over = this.buffer.length - this.backlogRows;
    if (over <= 0) return;
    this.buffer.splice(0, over);
    this.dropped += over;
  }

  query(q: RequestQuery): RequestRow[] {
    this.flush();
    const { sql, params } = requestQuerySql(q);
    let stmt = this.queries.get(sql);
    if (!stmt) {
      stmt = this.options.db.prepare(sql);
      this.queries.set(sql, stmt);
    }
    return (stmt.all(params) as DbRow[]).map((r) => ({
      seq: r.seq,
      id: r.id,
      ts: r.ts,
      client: r.client,
      class: r.class,
      endpoint: r.endpoint,
      model: r.model,
      upstream: r.upstream,
      stream: r.stream === 1,
      status: r.status,
      errorCode: r.error_code,
      queueMs: r.queue_ms,
      ttftMs: r.ttft_ms,
      totalMs: r.total_ms,
      tokensIn: r.tokens_in,
      tokensOut: r.tokens_out,
      bytesIn: r.bytes_in,
      bytesOut: r.bytes_out,
      replayed: r.replayed === 1,
      traceId: r.trace_id,
    }));
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    void this.timer.dispose();
    void this.pruneTimer?.dispose();
    for (const link of this.healthLinks.splice(0)) void link.dispose();
    this.flush(true);
    // What could not be written at close is lost with the process: counted, so the last figures say so.
    if (this.buffer.length > 0) {
      this.dropped += this.buffer.length;
      this.options.logger.warn('request log closed with rows it could not write', { rows: this.buffer.length, dropped: this.dropped });
      this.buffer = [];
    }
  }
}
