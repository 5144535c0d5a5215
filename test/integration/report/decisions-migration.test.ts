import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, silentLogger } from '../../../src-main/core/base/index.js';
import { renderMarkdown } from '../../../src-main/core/report/render-markdown.js';
import { applyMigrations } from '../../../src-main/core/store/migrate.js';
import { MIGRATIONS } from '../../../src-main/core/store/index.js';
import { ActionViewSchema } from '../../../src-preload/contract/index.js';
import { WORLD_T0, startReportWorld, type ReportWorld } from '../../helpers/report-world.js';

// Migration 11 on a database the old action queue wrote (fixture: its real
// rows and audit chain at schema version 10), where reject() and withdraw()
// had put the person who decided in `approver`: afterwards every row parses
// as today's ActionView, the decider is in the field of its decision, and a
// report over that history counts and words each decision as the audit log
// recorded it.

interface Fixture {
  actions: Record<string, unknown>[];
  audit: Record<string, unknown>[];
  ids: { expired: string; approved: string; rejected: string; withdrawn: string; withdrawnWithReason: string };
}
const fixture = JSON.parse(readFileSync(join(import.meta.dirname, '../../fixtures/lifecycle/decisions-before-migration-11.json'), 'utf8')) as Fixture;

let world: ReportWorld | null = null;
afterEach(() => world?.close());

function databaseAtVersion10(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'gc-mig11-')), 'console.db');
  const db = new Database(file);
  applyMigrations(db, file, MIGRATIONS.filter((m) => m.version <= 10), new FakeClock(WORLD_T0), silentLogger);
  const insert = (table: string, row: Record<string, unknown>) =>
    db.prepare(`INSERT INTO ${table} (${Object.keys(row).join(', ')}) VALUES (${Object.keys(row).map(() => '?').join(', ')})`).run(...Object.values(row));
  for (const r of fixture.audit) insert('audit_events', r);
  for (const r of fixture.actions) insert('actions', r);
  db.close();
  return file;
}

describe('migration 11: decisions out of `approver`', () => {
  it('moves each decider to the field of its decision, by the row state the audit log also recorded', async () => {
    const dbFile = databaseAtVersion10();
    const lastTs = Math.max(...fixture.audit.map((e) => e.ts as number));
    world = await startReportWorld({ dbFile, startMs: lastTs + 1_000 });
    expect(world.store.audit.verify().ok).toBe(true);
    const views = new Map(world.lifecycle.list(100).actions.map((a) => [a.id, ActionViewSchema.parse(a)]));
    const { ids } = fixture;
    expect(views.get(ids.approved)).toMatchObject({ decision: 'approved', approver: { displayName: 'Dana Night-Shift', via: 'web' }, rejectedBy: null, withdrawnBy: null });
    expect(views.get(ids.rejected)).toMatchObject({ decision: 'rejected', approver: null, rejectedBy: { osUser: 'root', via: 'cli' }, rejectReason: 'not during the demo', withdrawnBy: null });
    expect(views.get(ids.withdrawn)).toMatchObject({ decision: 'withdrawn', approver: null, withdrawnBy: { osUser: 'root', via: 'cli' }, withdrawReason: null, rejectReason: null });
    expect(views.get(ids.withdrawnWithReason)).toMatchObject({ decision: 'withdrawn', approver: null, withdrawnBy: { via: 'web' }, withdrawReason: 'wrong host', rejectReason: null });
    expect(views.get(ids.expired)).toMatchObject({ decision: 'expired', approver: null });
    expect([...views.values()].filter((v) => v.state === 'proposed').map((v) => v.decision)).toEqual([null]);

    const e = await world.preview({ fromMs: WORLD_T0, toMs: world.clock.now(), sections: ['lifecycle'], live: false });
    expect(e.lifecycle).toMatchObject({ proposed: 6, approved: 1, rejected: 1, withdrawn: 2, expired: 1, pending: 1 });
    expect(e.notes.filter((n) => n.includes('audit log records'))).toEqual([]);
    const md = renderMarkdown(e, { evidenceSha256: 'b'.repeat(64) });
    expect(md).toContain('Proposed 6 · approved 1 · rejected 1 · withdrawn 2 · expired 1 · waiting 1');
    const row = (id: string) => md.split('\n').find((l) => l.includes(id)) ?? '';
    expect(row(ids.rejected)).toContain('rejected by **root (root, via cli)**');
    expect(row(ids.rejected)).not.toContain('approved by');
    expect(row(ids.withdrawnWithReason)).toContain('because wrong host');
  });
});
