// verifyRecent (the report's chain check): it walks only the rows after the last
// full walk that verified, from the head that walk found (kept in memory), and
// answers as the full walk does on every tamper the tail or the checkpoint row
// shows; a row changed before the checkpoint is the next full walk's to find.
import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { FakeClock } from '../../../src-main/core/base/index.js';
import { openStore, type Store } from '../../../src-main/core/store/index.js';

let dir: string;
let store: Store;
let raw: Database.Database;
let clock: FakeClock;

const append = (n: number) => {
  for (let i = 0; i < n; i++) {
    clock.advance(1000);
    store.audit.append({ type: 'host.connect', actor: 'system', target: `host-${i}`, payload: { i } });
  }
};
const hashOf = (seq: number) => (raw.prepare('SELECT hash FROM audit_events WHERE seq = ?').get(seq) as { hash: string }).hash;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gpu-console-audit-recent-'));
  const file = join(dir, 'gpu-console.db');
  clock = new FakeClock(1_700_000_000_000);
  store = openStore({ file, clock });
  append(6);
  raw = new Database(file);
  raw.exec('DROP TRIGGER audit_events_no_update; DROP TRIGGER audit_events_no_delete;');
});

afterEach(() => {
  raw.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('audit verifyRecent', () => {
  it('with no full walk yet it walks the whole chain and says when', () => {
    const at = clock.now();
    expect(store.audit.verifyRecent()).toEqual({ ok: true, count: 6, head: { seq: 6, hash: hashOf(6) }, fullWalk: { throughSeq: 6, at } });
  });

  it('after a full walk it answers as the full walk does, and names the walk it rests on', () => {
    const walkedAt = clock.now();
    store.audit.verify();
    append(4);
    clock.advance(60_000);
    const recent = store.audit.verifyRecent();
    const { fullWalk, ...rest } = recent;
    expect(rest).toEqual(store.audit.verify());
    expect(rest).toEqual({ ok: true, count: 10, head: { seq: 10, hash: hashOf(10) } });
    expect(fullWalk).toEqual({ throughSeq: 6, at: walkedAt });
  });

  it('a tampered row after the checkpoint breaks at that row, as the full walk says', () => {
    store.audit.verify();
    append(4);
    raw.prepare('UPDATE audit_events SET payload = ? WHERE seq = 8').run('{"i":99}');
    const { fullWalk: _w, ...recent } = store.audit.verifyRecent();
    expect(recent).toMatchObject({ ok: false, brokenAt: 8, reason: 'hash-mismatch', count: 7, lastGood: { seq: 7, hash: hashOf(7) } });
    expect(recent).toEqual(store.audit.verify());
  });

  it('a changed or missing checkpoint row sends it back to a full walk', () => {
    store.audit.verify();
    append(2);
    raw.prepare('UPDATE audit_events SET hash = ? WHERE seq = 6').run('0'.repeat(64));
    expect(store.audit.verifyRecent()).toMatchObject({ ok: false, brokenAt: 6, reason: 'hash-mismatch', fullWalk: null });
    raw.prepare('DELETE FROM audit_events WHERE seq >= 6').run();
    // The full walk finds a shorter chain that verifies (as verify() does: only a head kept elsewhere shows a cut tail).
    expect(store.audit.verifyRecent()).toMatchObject({ ok: true, count: 5, fullWalk: { throughSeq: 5 } });
  });

  it('a row changed before the checkpoint is not seen until the next full walk, which finds it', () => {
    store.audit.verify();
    raw.prepare('UPDATE audit_events SET payload = ? WHERE seq = 2').run('{"i":42}');
    expect(store.audit.verifyRecent()).toMatchObject({ ok: true, fullWalk: { throughSeq: 6 } });
    expect(store.audit.verify()).toMatchObject({ ok: false, brokenAt: 2 });
    // A broken full walk leaves no checkpoint: the next report walks everything and says it is broken.
    expect(store.audit.verifyRecent()).toMatchObject({ ok: false, brokenAt: 2, fullWalk: null });
  });
});
