// The hash-chained, append-only audit log.
//
// Each row's hash is
//   hash = lowercase hex SHA-256 of the UTF-8 bytes of
//          prev_hash + canonicalJson({ seq, ts, type, actor, target, payload })
// where prev_hash is the previous row's hash (64 '0's for seq 1), `+` is plain
// string concatenation (no separator), target is null when absent and payload is
// the stored object; canonicalJson (canonical-json.ts) sorts keys, so the object
// text is {"actor":…,"payload":…,"seq":…,"target":…,"ts":…,"type":…}. The
// payload column must hold exactly canonicalJson(payload).
//
// What verify() can and cannot see: an altered column, a deleted or inserted row
// in the middle, and reordered rows break the chain at a definite seq. A deleted
// TAIL leaves a shorter, valid chain, and so does a chain rewritten from some row
// on by someone who recomputes the hashes; only a head recorded elsewhere (a
// signed report, an exported file) reveals those. Compare head() against it.

import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { AuditBreak, AuditHead, AuditVerifyResult } from '../../../src-preload/contract/index.js';
import { AppError, redact, type Clock } from '../base/index.js';
import { canonicalJson, isPlainObject } from './canonical-json.js';
import type { AuditEventType } from './audit-types.js';
import { StoreErrorCode, wrapSqliteError } from './errors.js';
import type { StorageHealthTracker } from './storage-health.js';
import { GENESIS_HASH } from './migrations.js';

export interface AuditEventInput {
  /** Dotted event name from the console's vocabulary (audit-types.ts), e.g. `ssh.hostkey.trusted`. */
  type: AuditEventType;
  /** Who: `operator:alice`, `system`, `policy:idle-sleep`. */
  actor: string;
  /** What it concerns, e.g. a host label; null/absent when nothing in particular. */
  target?: string | null;
  /** A plain JSON object; keys that look secret are replaced by `[redacted]` before storage. */
  payload: Record<string, unknown>;
}

export interface AuditEvent {
  seq: number;
  ts: number;
  type: string;
  actor: string;
  target: string | null;
  payload: Record<string, unknown>;
  prevHash: string;
  hash: string;
}

// The verifier's answer crosses the contract (audit.verify): one declaration, the contract's.
export type { AuditBreak, AuditHead, AuditVerifyResult };

export interface AuditListQuery {
  /** 1..1000; default 100. */
  limit?: number;
  /** Only rows with seq < beforeSeq (paging backwards). */
  beforeSeq?: number;
  /** Only rows of this exact type. */
  type?: string;
}

export interface AuditWindowQuery {
  /** from ≤ ts < to (ms epoch). */
  fromMs: number;
  toMs: number;
  /** Only types starting with one of these (`alert.`, `host.`); none or empty: every type. */
  typePrefixes?: readonly string[];
  /** At most this many rows. */
  limit: number;
}

export interface AuditLog {
  append(input: AuditEventInput): AuditEvent;
  /** Newest first. */
  list(query?: AuditListQuery): AuditEvent[];
  /**
   * The rows of a time window, oldest first, for readers that summarise a
   * period (the evidence report). Prefixes are matched by SQLite, so a long
   * window full of other events is not read into memory. Unlike list(), a
   * damaged payload reads as `{ unreadable: true }`: a report shows the row.
   */
  between(query: AuditWindowQuery): AuditEvent[];
  /** The first and last seq written in a window; nulls when none. */
  seqSpan(fromMs: number, toMs: number): { fromSeq: number | null; toSeq: number | null };
  head(): AuditHead | null;
  /** Walks the whole chain row by row (streamed, O(n) time, O(1) memory); a chain that verifies becomes the checkpoint. */
  verify(): AuditVerifyResult;
  /**
   * The chain as of now, walking only the rows after the last full walk that verified (its head is kept
   * in this process's memory, never read back from the file). The checkpoint row must still carry the
   * hash that walk found, else (and with no checkpoint) this is a full walk. A row changed before the
   * checkpoint without touching it is caught by the next full walk (scheduled or asked), so readers say
   * when that walk ran (`fullWalk`).
   */
  verifyRecent(): RecentAuditVerify;
}

/** A verification that may rest on an earlier full walk: rows 1..throughSeq were walked at `at` (null: none verified). */
export type RecentAuditVerify = AuditVerifyResult & { fullWalk: { throughSeq: number; at: number } | null };

interface AuditRow {
  seq: number;
  ts: number;
  type: string;
  actor: string;
  target: string | null;
  payload: string;
  prev_hash: string;
  hash: string;
}

const TYPE_PATTERN = /^[a-z][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)*$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
const MAX_LIST = 1000;

/** The exact hash of a row, given the previous row's hash and the stored payload object. */
export function auditHash(
  prevHash: string,
  row: { seq: number; ts: number; type: string; actor: string; target: string | null; payload: Record<string, unknown> },
): string {
  const body = canonicalJson({
    seq: row.seq,
    ts: row.ts,
    type: row.type,
    actor: row.actor,
    target: row.target,
    payload: row.payload,
  });
  return createHash('sha256').update(prevHash + body, 'utf8').digest('hex');
}

/** With `health`, a full disk or an I/O error is reported there and thrown coded (STORE_DISK_FULL) naming the folder. */
export function createAuditLog(db: Database.Database, clock: Clock, ensureOpen: () => void, health?: StorageHealthTracker): AuditLog {
  const headStmt = db.prepare<[], { seq: number; hash: string }>(
    'SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1',
  );
  const insertStmt = db.prepare(
    `INSERT INTO audit_events (seq, ts, type, actor, target, payload, prev_hash, hash)
     VALUES (@seq, @ts, @type, @actor, @target, @payload, @prev_hash, @hash)`,
  );
  const allStmt = db.prepare<[], AuditRow>('SELECT * FROM audit_events ORDER BY seq');
  const listStmts = new Map<string, Database.Statement>();
  const windowStmts = new Map<number, Database.Statement<unknown[], AuditRow>>();
  const walks = chainWalks(db, clock, allStmt);
  const spanStmt = db.prepare<[number, number], { lo: number | null; hi: number | null }>('SELECT MIN(seq) AS lo, MAX(seq) AS hi FROM audit_events WHERE ts >= ? AND ts < ?');

  const appendTx = db.transaction((input: AuditEventInput): AuditEvent => {
    const { type, actor } = input;
    const target = input.target ?? null;
    const payload = preparePayload(input.payload);
    const head = headStmt.get();
    const seq = head ? head.seq + 1 : 1;
    const prevHash = head ? head.hash : GENESIS_HASH;
    const ts = Math.floor(clock.now());
    const hash = auditHash(prevHash, { seq, ts, type, actor, target, payload });
    insertStmt.run({ seq, ts, type, actor, target, payload: canonicalJson(payload), prev_hash: prevHash, hash });
    return { seq, ts, type, actor, target, payload, prevHash, hash };
  });

  const listStatement = (byType: boolean, before: boolean): Database.Statement => {
    const key = `${byType}/${before}`;
    let stmt = listStmts.get(key);
    if (!stmt) {
      const where = [byType ? 'type = @type' : '', before ? 'seq < @beforeSeq' : ''].filter(Boolean);
      stmt = db.prepare(
        `SELECT * FROM audit_events ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY seq DESC LIMIT @limit`,
      );
      listStmts.set(key, stmt);
    }
    return stmt;
  };

  const windowStatement = (prefixes: number): Database.Statement<unknown[], AuditRow> => {
    let stmt = windowStmts.get(prefixes);
    if (!stmt) {
      const types = prefixes ? ` AND (${Array(prefixes).fill("type LIKE ? ESCAPE '\\'").join(' OR ')})` : '';
      stmt = db.prepare<unknown[], AuditRow>(`SELECT * FROM audit_events WHERE ts >= ? AND ts < ?${types} ORDER BY seq LIMIT ?`);
      windowStmts.set(prefixes, stmt);
    }
    return stmt;
  };

  return {
    append(input: AuditEventInput): AuditEvent {
      ensureOpen();
      validateInput(input);
      // IMMEDIATE: the write lock is taken before the head is read, so two
      // appenders (this process or another) can never both extend the same head.
      let event: AuditEvent;
      try {
        event = appendTx.immediate(input);
      } catch (err) {
        const what = `audit append (${input.type})`;
        throw health ? health.failed('audit', err, what) : wrapSqliteError(err, what);
      }
      // Inside an outer transaction (Store.atomically) nothing has landed yet: that one reports.
      if (!db.inTransaction) health?.wrote('audit');
      return event;
    },

    list(query: AuditListQuery = {}): AuditEvent[] {
      ensureOpen();
      const limit = query.limit ?? 100;
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST) {
        throw invalidQuery(`limit must be an integer between 1 and ${MAX_LIST} (got ${String(limit)})`);
      }
      if (query.beforeSeq !== undefined && !Number.isInteger(query.beforeSeq)) {
        throw invalidQuery(`beforeSeq must be an integer (got ${String(query.beforeSeq)})`);
      }
      const stmt = listStatement(query.type !== undefined, query.beforeSeq !== undefined);
      const params: Record<string, unknown> = { limit };
      if (query.type !== undefined) params['type'] = query.type;
      if (query.beforeSeq !== undefined) params['beforeSeq'] = query.beforeSeq;
      return (stmt.all(params) as AuditRow[]).map(toEvent);
    },

    between({ fromMs, toMs, typePrefixes = [], limit }: AuditWindowQuery): AuditEvent[] {
      ensureOpen();
      const likes = typePrefixes.map((p) => `${p.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
      return windowStatement(likes.length).all(fromMs, toMs, ...likes, limit).map(toWindowEvent);
    },

    seqSpan(fromMs: number, toMs: number): { fromSeq: number | null; toSeq: number | null } {
      ensureOpen();
      const span = spanStmt.get(fromMs, toMs);
      return { fromSeq: span?.lo ?? null, toSeq: span?.hi ?? null };
    },

    head(): AuditHead | null {
      ensureOpen();
      return headStmt.get() ?? null;
    },

    verify(): AuditVerifyResult {
      ensureOpen();
      const { fullWalk: _, ...result } = walks.full();
      return result;
    },

    verifyRecent(): RecentAuditVerify {
      ensureOpen();
      return walks.recent();
    },
  };
}

/** The full walk, which leaves its verified head as the checkpoint, and the walk of the rows after it. */
function chainWalks(db: Database.Database, clock: Clock, allStmt: Database.Statement<[], AuditRow>): { full(): RecentAuditVerify; recent(): RecentAuditVerify } {
  const hashAtStmt = db.prepare<[number], { hash: string }>('SELECT hash FROM audit_events WHERE seq = ?');
  const tailStmt = db.prepare<[number], AuditRow>('SELECT * FROM audit_events WHERE seq > ? ORDER BY seq');
  // The head of the last full walk that verified, and when it ran: this process's memory only.
  let checkpoint: { head: AuditHead; at: number } | null = null;
  const full = (): RecentAuditVerify => {
    const at = clock.now();
    const result = walkChain(allStmt.iterate());
    checkpoint = result.ok && result.head ? { head: result.head, at } : null;
    return { ...result, fullWalk: checkpoint ? { throughSeq: checkpoint.head.seq, at } : null };
  };
  const recent = (): RecentAuditVerify => {
    const cp = checkpoint;
    if (cp && hashAtStmt.get(cp.head.seq)?.hash === cp.head.hash) {
      return { ...walkChain(tailStmt.iterate(cp.head.seq), cp.head), fullWalk: { throughSeq: cp.head.seq, at: cp.at } };
    }
    return full();
  };
  return { full, recent };
}

/**
 * Verifies the chain from row 1 up to `upToSeq` (inclusive; default all rows) on
 * any connection to a console database — also a read-only one opened by
 * `gpu-console report verify`. Same rules and results as AuditLog.verify().
 */
export function verifyAuditChain(db: Database.Database, upToSeq?: number): AuditVerifyResult {
  const rows =
    upToSeq === undefined
      ? db.prepare<[], AuditRow>('SELECT * FROM audit_events ORDER BY seq').iterate()
      : db.prepare<[number], AuditRow>('SELECT * FROM audit_events WHERE seq <= ? ORDER BY seq').iterate(upToSeq);
  return walkChain(rows);
}

/** From `start` (a verified head; none: row 1), each row must extend the one before; `count` includes the rows up to `start`. */
function walkChain(rows: IterableIterator<AuditRow>, start: AuditHead | null = null): AuditVerifyResult {
  let lastGood: AuditHead | null = start;
  let count = start?.seq ?? 0;
  for (const row of rows) {
    const broken = checkRow(row, lastGood);
    // Returning from inside iterate() ends the statement, so the read is released.
    if (broken) return { ok: false, count, brokenAt: row.seq, ...broken, lastGood };
    lastGood = { seq: row.seq, hash: row.hash };
    count++;
  }
  return { ok: true, count, head: lastGood };
}

/** Why `row` does not extend the chain ending at `prev`, or null when it does. */
function checkRow(
  row: AuditRow,
  prev: AuditHead | null,
): { reason: AuditBreak; expected?: string; actual?: string } | null {
  const expectedSeq = prev ? prev.seq + 1 : 1;
  if (row.seq !== expectedSeq) return { reason: 'gap', expected: String(expectedSeq), actual: String(row.seq) };
  const expectedPrev = prev ? prev.hash : GENESIS_HASH;
  if (row.prev_hash !== expectedPrev) return { reason: 'prev-mismatch', expected: expectedPrev, actual: row.prev_hash };
  if (!decodePayload(row.payload)) return { reason: 'bad-payload' };
  const recomputed = createHash('sha256').update(row.prev_hash + canonicalRowBody(row), 'utf8').digest('hex');
  if (row.hash !== recomputed) return { reason: 'hash-mismatch', expected: recomputed, actual: row.hash };
  return null;
}

/**
 * auditHash's body for a stored row whose payload text is canonical (decodePayload checked it): the
 * same bytes as canonicalJson({ seq, ts, type, actor, target, payload }) — keys in sorted order, the
 * payload's text as stored — without encoding the payload a second time (verify runs ~1.5× faster).
 */
function canonicalRowBody(row: AuditRow): string {
  const target = row.target === null ? 'null' : JSON.stringify(row.target);
  return `{"actor":${JSON.stringify(row.actor)},"payload":${row.payload},"seq":${JSON.stringify(row.seq)},"target":${target},"ts":${JSON.stringify(row.ts)},"type":${JSON.stringify(row.type)}}`;
}

function validateInput(input: AuditEventInput): void {
  const bad = (message: string): AppError => new AppError(StoreErrorCode.AUDIT_INVALID_EVENT, message);
  if (typeof input?.type !== 'string' || input.type.length > 200 || !TYPE_PATTERN.test(input.type)) {
    throw bad(`audit type must be a dotted lower-case name like host.trust.confirmed (got ${JSON.stringify(input?.type)})`);
  }
  if (typeof input.actor !== 'string' || input.actor.length === 0 || input.actor.length > 200 || CONTROL.test(input.actor)) {
    throw bad(`audit actor must be a non-empty printable string (got ${JSON.stringify(input.actor)})`);
  }
  const target = input.target ?? null;
  if (target !== null && (typeof target !== 'string' || target.length > 500 || CONTROL.test(target))) {
    throw bad(`audit target must be a printable string or null (got ${JSON.stringify(target)})`);
  }
  if (!isPlainObject(input.payload)) throw bad('audit payload must be a plain object');
}

/** Checks the payload is encodable as it stands (so nothing is silently dropped), then redacts it. */
function preparePayload(payload: Record<string, unknown>): Record<string, unknown> {
  try {
    canonicalJson(payload);
  } catch (err) {
    throw new AppError(StoreErrorCode.AUDIT_INVALID_EVENT, `audit payload: ${(err as Error).message}`, { cause: err });
  }
  // Round-trip through the canonical text so the returned object is exactly what is stored.
  return JSON.parse(canonicalJson(redact(payload))) as Record<string, unknown>;
}

function decodePayload(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    if (!isPlainObject(value) || canonicalJson(value) !== text) return null;
    return value;
  } catch {
    return null;
  }
}

function toEvent(row: AuditRow): AuditEvent {
  const payload = decodePayload(row.payload);
  if (!payload) {
    throw new AppError(StoreErrorCode.CORRUPT, `audit event ${row.seq} has a damaged payload`, { details: { seq: row.seq } });
  }
  return {
    seq: row.seq,
    ts: row.ts,
    type: row.type,
    actor: row.actor,
    target: row.target,
    payload,
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}

/** A row as a window reader sees it: the stored payload as parsed, or `{ unreadable: true }` when it does not parse. */
function toWindowEvent(row: AuditRow): AuditEvent {
  let payload: Record<string, unknown>;
  try {
    payload = JSON.parse(row.payload) as Record<string, unknown>;
  } catch {
    payload = { unreadable: true };
  }
  return { seq: row.seq, ts: row.ts, type: row.type, actor: row.actor, target: row.target, payload, prevHash: row.prev_hash, hash: row.hash };
}

function invalidQuery(message: string): AppError {
  return new AppError(StoreErrorCode.AUDIT_INVALID_QUERY, message);
}
