// Tamper drills on a real database file: a second, raw better-sqlite3
// connection (someone with file access) drops the append-only triggers and
// edits the log behind the store's back; verify() must name the exact row.
import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { FakeClock } from '../../../src-main/core/base/index.js';
import { openStore, type AuditEvent, type Store } from '../../../src-main/core/store/index.js';
import { auditType } from '../../helpers/audit-types.js';

let dir: string;
let file: string;
let store: Store;
let raw: Database.Database;
let events: AuditEvent[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gpu-console-tamper-'));
  file = join(dir, 'gpu-console.db');
  const clock = new FakeClock(1_700_000_000_000);
  store = openStore({ file, clock });
  events = [];
  for (let i = 1; i <= 6; i++) {
    clock.advance(1000);
    events.push(
      store.audit.append({
        type: i % 2 ? 'host.connect' : auditType('action.approved'),
        actor: i % 2 ? 'system' : 'operator:alice',
        target: `host-${i}`,
        payload: { i, note: `event ${i}` },
      }),
    );
  }
  raw = new Database(file);
  raw.exec('DROP TRIGGER audit_events_no_update; DROP TRIGGER audit_events_no_delete;');
});

afterEach(() => {
  raw.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const ev = (seq: number): AuditEvent => events[seq - 1]!;
const good = (seq: number) => ({ seq, hash: ev(seq).hash });

describe('audit chain tamper drills (real file, second connection)', () => {
  it('a pristine file verifies', () => {
    expect(store.audit.verify()).toEqual({ ok: true, count: 6, head: good(6) });
  });

  it('an altered payload breaks at that row with hash-mismatch', () => {
    raw.prepare('UPDATE audit_events SET payload = ? WHERE seq = 3').run('{"i":3,"note":"nothing happened"}');
    expect(store.audit.verify()).toEqual({
      ok: false,
      count: 2,
      brokenAt: 3,
      reason: 'hash-mismatch',
      expected: expect.stringMatching(/^[0-9a-f]{64}$/),
      actual: ev(3).hash,
      lastGood: good(2),
    });
  });

  it.each([
    ['ts', 'UPDATE audit_events SET ts = ts + 1 WHERE seq = 4'],
    ['type', "UPDATE audit_events SET type = 'action.rejected' WHERE seq = 4"],
    ['actor', "UPDATE audit_events SET actor = 'operator:mallory' WHERE seq = 4"],
    ['target', 'UPDATE audit_events SET target = NULL WHERE seq = 4'],
    ['hash', "UPDATE audit_events SET hash = 'ab' || substr(hash, 3) WHERE seq = 4"],
  ])('an altered %s column breaks at that row with hash-mismatch', (_column, sql) => {
    raw.exec(sql);
    expect(store.audit.verify()).toMatchObject({ ok: false, brokenAt: 4, reason: 'hash-mismatch', count: 3, lastGood: good(3) });
  });

  it('an altered prev_hash breaks at that row with prev-mismatch', () => {
    raw.prepare('UPDATE audit_events SET prev_hash = ? WHERE seq = 5').run('f'.repeat(64));
    expect(store.audit.verify()).toEqual({
      ok: false,
      count: 4,
      brokenAt: 5,
      reason: 'prev-mismatch',
      expected: ev(4).hash,
      actual: 'f'.repeat(64),
      lastGood: good(4),
    });
  });

  it('a re-encoded (same content, not canonical) payload is bad-payload', () => {
    raw.prepare('UPDATE audit_events SET payload = ? WHERE seq = 2').run('{"note": "event 2", "i": 2}');
    expect(store.audit.verify()).toMatchObject({ ok: false, brokenAt: 2, reason: 'bad-payload', lastGood: good(1) });
  });

  it('a payload that is not JSON is bad-payload', () => {
    raw.prepare('UPDATE audit_events SET payload = ? WHERE seq = 6').run('not json');
    expect(store.audit.verify()).toMatchObject({ ok: false, brokenAt: 6, reason: 'bad-payload', count: 5 });
  });

  it('a deleted middle row is a gap at the next row', () => {
    raw.prepare('DELETE FROM audit_events WHERE seq = 3').run();
    expect(store.audit.verify()).toEqual({
      ok: false,
      count: 2,
      brokenAt: 4,
      reason: 'gap',
      expected: '3',
      actual: '4',
      lastGood: good(2),
    });
  });

  it('a deleted first row is a gap at seq 2', () => {
    raw.prepare('DELETE FROM audit_events WHERE seq = 1').run();
    expect(store.audit.verify()).toMatchObject({ ok: false, count: 0, brokenAt: 2, reason: 'gap', lastGood: null });
  });

  it('a deleted row with the later rows renumbered is a prev-mismatch', () => {
    raw.exec('DELETE FROM audit_events WHERE seq = 3; UPDATE audit_events SET seq = seq - 1 WHERE seq > 3;');
    expect(store.audit.verify()).toMatchObject({ ok: false, brokenAt: 3, reason: 'prev-mismatch', lastGood: good(2) });
  });

  it("two rows' contents swapped break at the first of them", () => {
    raw.exec(`
      CREATE TEMP TABLE r AS SELECT * FROM audit_events WHERE seq IN (2, 3);
      UPDATE audit_events SET (ts, type, actor, target, payload, prev_hash, hash) =
        (SELECT ts, type, actor, target, payload, prev_hash, hash FROM r WHERE r.seq = 5 - audit_events.seq)
      WHERE seq IN (2, 3);
    `);
    const swapped = raw.prepare('SELECT seq, hash FROM audit_events WHERE seq IN (2, 3) ORDER BY seq').all();
    expect(swapped).toEqual([
      { seq: 2, hash: ev(3).hash },
      { seq: 3, hash: ev(2).hash },
    ]);
    expect(store.audit.verify()).toMatchObject({
      ok: false,
      count: 1,
      brokenAt: 2,
      reason: 'prev-mismatch',
      expected: ev(1).hash,
      actual: ev(2).hash,
      lastGood: good(1),
    });
  });

  it('a deleted tail is NOT detectable alone: only a head recorded elsewhere reveals it', () => {
    const recordedHead = store.audit.head();
    raw.prepare('DELETE FROM audit_events WHERE seq >= 5').run();
    expect(store.audit.verify()).toEqual({ ok: true, count: 4, head: good(4) });
    expect(store.audit.head()).not.toEqual(recordedHead);
  });

  it('appends from two connections to the same file never fork the chain', () => {
    const other = openStore({ file, clock: new FakeClock(1_800_000_000_000) });
    try {
      for (let i = 0; i < 50; i++) {
        (i % 2 ? store : other).audit.append({ type: auditType('proxy.request'), actor: 'system', payload: { i } });
      }
      expect(other.audit.verify()).toMatchObject({ ok: true, count: 56 });
      expect(store.audit.verify()).toEqual(other.audit.verify());
    } finally {
      other.close();
    }
  });
});

describe('audit append under a held write lock', () => {
  it('gives up after busy_timeout with a retryable STORE_BUSY and writes nothing', () => {
    const busy = openStore({ file, busyTimeoutMs: 50 });
    raw.exec('BEGIN IMMEDIATE');
    try {
      let caught: unknown;
      try {
        busy.audit.append({ type: auditType('a.b'), actor: 'system', payload: {} });
      } catch (err) {
        caught = err;
      }
      expect(caught).toMatchObject({ code: 'STORE_BUSY', retryable: true, details: { sqliteCode: 'SQLITE_BUSY' } });
    } finally {
      raw.exec('ROLLBACK');
      busy.close();
    }
    expect(store.audit.verify()).toEqual({ ok: true, count: 6, head: good(6) });
  });
});
