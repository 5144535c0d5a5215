import { describe, it, expect, afterEach } from 'vitest';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import {
  openStore,
  MIGRATIONS,
  LATEST_SCHEMA_VERSION,
  GENESIS_HASH,
  auditHash,
  type Store,
} from '../../../../src-main/core/store/index.js';
import { tempDir } from './helpers.js';
import { auditType } from '../../../helpers/audit-types.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function fileStore(clock = new FakeClock()): { store: Store; file: string; dir: string; clock: FakeClock } {
  const { dir, cleanup } = tempDir();
  const file = join(dir, 'data', 'gpu-console.db');
  const store = openStore({ file, clock });
  cleanups.push(cleanup);
  cleanups.push(() => store.close());
  return { store, file, dir, clock };
}

function memStore(clock = new FakeClock()): Store {
  const store = openStore({ file: ':memory:', clock });
  cleanups.push(() => store.close());
  return store;
}

function catchError(fn: () => unknown): { code?: string; message: string; details?: Record<string, unknown> } {
  try {
    fn();
  } catch (err) {
    return err as { code?: string; message: string; details?: Record<string, unknown> };
  }
  throw new Error('expected an error');
}

describe('openStore: migrations', () => {
  it('applies every migration once and records it', () => {
    const { store, clock } = fileStore();
    expect(store.schemaVersion).toBe(LATEST_SCHEMA_VERSION);
    const rows = store.db.prepare('SELECT version, name, applied_at FROM schema_migrations ORDER BY version').all();
    expect(rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name, applied_at: clock.now() })));
  });

  it('re-opening the same file applies nothing new and keeps the data', () => {
    const { store, file } = fileStore();
    store.settings.set('theme', 'dark');
    store.audit.append({ type: 'console.started', actor: 'system', payload: {} });
    store.close();

    const later = new FakeClock(1_800_000_000_000);
    const again = openStore({ file, clock: later });
    cleanups.push(() => again.close());
    const rows = again.db.prepare('SELECT version, applied_at FROM schema_migrations').all() as { applied_at: number }[];
    expect(rows).toHaveLength(MIGRATIONS.length);
    expect(rows.every((r) => r.applied_at !== later.now())).toBe(true);
    expect(again.settings.get('theme')).toBe('dark');
    expect(again.audit.verify()).toMatchObject({ ok: true, count: 1 });
  });

  it('refuses a database from a newer app version and leaves it unchanged', () => {
    const { store, file } = fileStore();
    store.close();
    // A newer app wrote it, in rollback-journal mode: switching to WAL would rewrite the header.
    const raw = new Database(file);
    raw.pragma('journal_mode = DELETE');
    raw.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
      LATEST_SCHEMA_VERSION + 1,
      'from_the_future',
      1,
    );
    raw.close();
    const before = readFileSync(file);

    const err = catchError(() => openStore({ file }));
    expect(err.code).toBe('STORE_SCHEMA_TOO_NEW');
    expect(err.message).toContain(file);
    expect(err.details).toMatchObject({ version: LATEST_SCHEMA_VERSION + 1, latestKnown: LATEST_SCHEMA_VERSION });
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it('refuses a database whose recorded migration names are not ours', () => {
    const { store, file } = fileStore();
    store.close();
    const raw = new Database(file);
    raw.prepare('UPDATE schema_migrations SET name = ? WHERE version = 1').run('something_else');
    raw.close();
    expect(catchError(() => openStore({ file })).code).toBe('STORE_SCHEMA_MISMATCH');
  });

  it('runs with WAL, foreign keys and a busy timeout', () => {
    const { store } = fileStore();
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(store.db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(store.db.pragma('busy_timeout', { simple: true })).toBe(5000);
  });

  it('refuses a file that is not a database and does not touch it', () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const file = join(dir, 'notes.db');
    const content = 'hosts:\n  - label: precious operator notes\n'.repeat(200);
    writeFileSync(file, content);

    const err = catchError(() => openStore({ file }));
    expect(err.code).toBe('STORE_OPEN_FAILED');
    expect(err.message).toContain(file);
    expect(readFileSync(file, 'utf8')).toBe(content);
    expect(existsSync(file + '-wal')).toBe(false);
  });

  it('refuses a tiny non-database file that SQLite itself would overwrite', () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const file = join(dir, 'tiny');
    writeFileSync(file, 'x');
    expect(catchError(() => openStore({ file })).code).toBe('STORE_OPEN_FAILED');
    expect(readFileSync(file, 'utf8')).toBe('x');
  });

  it('creates a new database in an empty (zero-byte) file', () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const file = join(dir, 'empty.db');
    writeFileSync(file, '');
    const store = openStore({ file });
    cleanups.push(() => store.close());
    expect(store.schemaVersion).toBe(LATEST_SCHEMA_VERSION);
  });

  it('wraps a file SQLite cannot open as STORE_OPEN_FAILED (a folder)', () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const err = catchError(() => openStore({ file: dir }));
    expect(err.code).toBe('STORE_OPEN_FAILED');
    expect(err.details).toMatchObject({ file: dir });
  });

  it('close is idempotent, dispose closes, and use after close is STORE_CLOSED', () => {
    const store = openStore({ file: ':memory:' });
    expect(store.isOpen).toBe(true);
    store.close();
    store.close();
    store.dispose();
    expect(store.isOpen).toBe(false);
    expect(catchError(() => store.settings.get('x')).code).toBe('STORE_CLOSED');
    expect(catchError(() => store.audit.append({ type: auditType('a.b'), actor: 'system', payload: {} })).code).toBe('STORE_CLOSED');
  });
});

describe('store.settings', () => {
  it('round-trips JSON values and stamps updated_at from the clock', () => {
    const clock = new FakeClock(1_000);
    const store = memStore(clock);
    expect(store.settings.get('missing')).toBeUndefined();
    store.settings.set('ui.theme', 'dark');
    store.settings.set('limits', { maxRows: 10, tags: ['a', 'b'], nested: { on: true, ratio: 0.25 } });
    store.settings.set('nothing', null);
    expect(store.settings.get<string>('ui.theme')).toBe('dark');
    expect(store.settings.get('limits')).toEqual({ maxRows: 10, tags: ['a', 'b'], nested: { on: true, ratio: 0.25 } });
    expect(store.settings.get('nothing')).toBeNull();
    clock.advance(500);
    store.settings.set('ui.theme', 'light');
    expect(store.settings.all()).toEqual({
      limits: { maxRows: 10, tags: ['a', 'b'], nested: { on: true, ratio: 0.25 } },
      nothing: null,
      'ui.theme': 'light',
    });
    const row = store.db.prepare("SELECT updated_at FROM settings WHERE key = 'ui.theme'").get() as { updated_at: number };
    expect(row.updated_at).toBe(1_500);
    expect(store.settings.delete('ui.theme')).toBe(true);
    expect(store.settings.delete('ui.theme')).toBe(false);
    expect(store.settings.get('ui.theme')).toBeUndefined();
  });

  it('refuses values that would not survive JSON', () => {
    const store = memStore();
    expect(catchError(() => store.settings.set('x', { at: new Date() })).code).toBe('STORE_INVALID_VALUE');
    expect(catchError(() => store.settings.set('x', Number.NaN)).code).toBe('STORE_INVALID_VALUE');
    expect(catchError(() => store.settings.set('', 1)).code).toBe('STORE_INVALID_VALUE');
    expect(store.settings.all()).toEqual({});
  });
});

describe('store.audit', () => {
  it('builds a hash chain with the documented preimage', () => {
    const clock = new FakeClock(1_700_000_000_123);
    const store = memStore(clock);
    const first = store.audit.append({
      type: auditType('host.trust.confirmed'),
      actor: 'operator:alice',
      target: 'l20-poc',
      payload: { fingerprint: 'SHA256:abc', z: 1, a: [1, 2] },
    });
    clock.advance(10);
    const second = store.audit.append({ type: 'console.started', actor: 'system', payload: {} });

    expect(first).toMatchObject({ seq: 1, ts: 1_700_000_000_123, target: 'l20-poc', prevHash: GENESIS_HASH });
    expect(second).toMatchObject({ seq: 2, ts: 1_700_000_000_133, target: null, prevHash: first.hash });
    expect(GENESIS_HASH).toBe('0'.repeat(64));

    // Independent computation of the first hash, byte for byte.
    const preimage =
      GENESIS_HASH +
      '{"actor":"operator:alice","payload":{"a":[1,2],"fingerprint":"SHA256:abc","z":1},"seq":1,"target":"l20-poc","ts":1700000000123,"type":"host.trust.confirmed"}';
    expect(first.hash).toBe(createHash('sha256').update(preimage, 'utf8').digest('hex'));
    expect(second.hash).toBe(auditHash(first.hash, { ...second }));

    const stored = store.db.prepare('SELECT payload, prev_hash, hash FROM audit_events WHERE seq = 1').get();
    expect(stored).toEqual({ payload: '{"a":[1,2],"fingerprint":"SHA256:abc","z":1}', prev_hash: GENESIS_HASH, hash: first.hash });
    expect(store.audit.head()).toEqual({ seq: 2, hash: second.hash });
  });

  it('verifies an empty and a populated log', () => {
    const store = memStore();
    expect(store.audit.verify()).toEqual({ ok: true, count: 0, head: null });
    expect(store.audit.head()).toBeNull();
    let last = null;
    for (let i = 0; i < 250; i++) {
      last = store.audit.append({ type: auditType('proxy.request'), actor: 'system', target: `svc-${i % 3}`, payload: { i, ok: i % 2 === 0 } });
    }
    expect(store.audit.verify()).toEqual({ ok: true, count: 250, head: { seq: 250, hash: last!.hash } });
  });

  it('redacts secret-looking payload keys before hashing and storing', () => {
    const store = memStore();
    const event = store.audit.append({
      type: auditType('upstream.key.set'),
      actor: 'operator:alice',
      payload: { service: 'qwen', apiKey: 'sk-live-123', nested: { password: 'hunter2', note: 'ok' }, list: [{ token: 't' }] },
    });
    expect(event.payload).toEqual({ service: 'qwen', apiKey: '[redacted]', nested: { password: '[redacted]', note: 'ok' }, list: [{ token: '[redacted]' }] });
    const raw = (store.db.prepare('SELECT payload FROM audit_events').get() as { payload: string }).payload;
    expect(raw).not.toContain('sk-live-123');
    expect(raw).not.toContain('hunter2');
    expect(store.audit.list()[0]!.payload).toEqual(event.payload);
    expect(store.audit.verify()).toMatchObject({ ok: true, count: 1 });
  });

  it('refuses malformed events without writing anything', () => {
    const store = memStore();
    const bad = [
      { type: '', actor: 'system', payload: {} },
      { type: 'Has Spaces', actor: 'system', payload: {} },
      { type: 'a.b', actor: '', payload: {} },
      { type: 'a.b', actor: 'sys\ntem', payload: {} },
      { type: 'a.b', actor: 'system', payload: [] as unknown as Record<string, unknown> },
      { type: 'a.b', actor: 'system', payload: { when: new Date() } },
      { type: 'a.b', actor: 'system', payload: { n: Number.POSITIVE_INFINITY } },
    ];
    for (const input of bad) expect(catchError(() => store.audit.append({ ...input, type: auditType(input.type) })).code).toBe('AUDIT_INVALID_EVENT');
    expect(store.audit.head()).toBeNull();
  });

  it('lists newest first with paging and a type filter', () => {
    const store = memStore();
    for (let i = 1; i <= 12; i++) store.audit.append({ type: i % 3 === 0 ? 'host.connect' : auditType('proxy.request'), actor: 'system', payload: { i } });
    expect(store.audit.list({ limit: 3 }).map((e) => e.seq)).toEqual([12, 11, 10]);
    expect(store.audit.list({ limit: 3, beforeSeq: 10 }).map((e) => e.seq)).toEqual([9, 8, 7]);
    expect(store.audit.list({ type: 'host.connect' }).map((e) => e.seq)).toEqual([12, 9, 6, 3]);
    expect(store.audit.list({ type: 'host.connect', beforeSeq: 9, limit: 1 }).map((e) => e.seq)).toEqual([6]);
    expect(store.audit.list().length).toBe(12);
    expect(store.audit.list({ limit: 1000 }).length).toBe(12);
    expect(catchError(() => store.audit.list({ limit: 1001 })).code).toBe('AUDIT_INVALID_QUERY');
    expect(catchError(() => store.audit.list({ limit: 0 })).code).toBe('AUDIT_INVALID_QUERY');
    expect(catchError(() => store.audit.list({ beforeSeq: 1.5 })).code).toBe('AUDIT_INVALID_QUERY');
  });

  it('triggers refuse UPDATE and DELETE through normal SQL', () => {
    const store = memStore();
    store.audit.append({ type: auditType('a.b'), actor: 'system', payload: { v: 1 } });
    expect(() => store.db.prepare("UPDATE audit_events SET payload = '{}' WHERE seq = 1").run()).toThrow(/append-only/);
    expect(() => store.db.prepare('DELETE FROM audit_events WHERE seq = 1').run()).toThrow(/append-only/);
    expect(() => store.db.prepare('DELETE FROM audit_events').run()).toThrow(/append-only/);
    expect(store.audit.verify()).toMatchObject({ ok: true, count: 1 });
  });
});
