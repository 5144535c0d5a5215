import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../helpers/imports.js';
import { literalsIn, literalsOf, type Literal } from '../../helpers/source-scan.js';

// "A capability reaches another's tables only through its service"
// (ARCHITECTURE §2). Each table has one owner: the capability whose repository
// reads and writes it (store/migrations.ts creates them all, in order). Any SQL
// string in another capability naming that table is an offender: it should call
// a query method the owner exports through its index.ts.

const OWNERS: Readonly<Record<string, string>> = {
  settings: 'store',
  audit_events: 'store',
  schema_migrations: 'store',
  requests: 'proxy',
  client_tokens: 'proxy',
  captures: 'proxy',
  telemetry_hosts: 'telemetry',
  telemetry_columns: 'telemetry',
  telemetry_samples_10s: 'telemetry',
  telemetry_samples_5m: 'telemetry',
  actions: 'lifecycle',
  standing_approvals: 'lifecycle',
  bench_scenarios: 'bench',
  bench_runs: 'bench',
  bench_requests: 'bench',
  report_exports: 'report',
  report_gates: 'report',
  notify_deliveries: 'notify',
};

/** Names a template builds from a prefix (series-store's `telemetry_samples_${tier}`). */
const OWNER_PREFIXES: ReadonlyArray<readonly [string, string]> = [['telemetry_samples_${}', 'telemetry']];

/** The migrations create (and once rebuilt) every table; that is the store's job, not a reach. */
// migrations-<topic>.ts: one migration each, listed in migrations.ts.
const MIGRATIONS = { has: (file: string) => /^src-main\/core\/store\/(migrate|migrations(-[a-z0-9-]+)?)\.ts$/.test(file) };

const SQL = /\b(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|REPLACE)\b/;
// A `${}` counts as part of the name only after an underscore (`telemetry_samples_${tier}`, not `requests${indexed}`).
const TABLE_REF = /\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?([a-z_][a-z0-9_]*(?:(?<=_)\$\{\}[a-z0-9_]*)?)/g;

/** The tables an SQL string names (none when it is not SQL); SQLite's own (pragma_*, sqlite_*) left out. */
export function tablesIn(text: string): string[] {
  if (!SQL.test(text)) return [];
  return [...text.matchAll(TABLE_REF)].map((m) => m[1]!).filter((t) => !t.startsWith('pragma_') && !t.startsWith('sqlite_'));
}

function ownerOf(table: string): string | undefined {
  return OWNERS[table] ?? OWNER_PREFIXES.find(([p]) => table === p)?.[1];
}

/** `src-main/core/<capability>/…` → capability; anything else in src-main → its path (it owns no table). */
function capabilityOf(file: string): string {
  return /^src-main\/core\/([^/]+)\//.exec(file)?.[1] ?? file;
}

function reaches(lits: readonly Literal[]): string[] {
  const out: string[] = [];
  for (const l of lits) {
    if (MIGRATIONS.has(l.file)) continue;
    for (const table of tablesIn(l.text)) {
      const owner = ownerOf(table);
      const mine = capabilityOf(l.file);
      if (owner !== mine) out.push(`${l.file}:${l.line} (${mine}) names ${table} (${owner ?? 'no owner listed'})`);
    }
  }
  return out;
}

describe('table owners (checker)', () => {
  it('reads the tables of planted SQL', () => {
    expect(tablesIn('SELECT a FROM requests r JOIN bench_runs b ON 1 WHERE x IN (SELECT y FROM pragma_data_version)')).toEqual(['requests', 'bench_runs']);
    expect(tablesIn('INSERT INTO audit_events (seq) VALUES (?)')).toEqual(['audit_events']);
    expect(tablesIn('DELETE FROM telemetry_samples_${} WHERE t < ?')).toEqual(['telemetry_samples_${}']);
    expect(tablesIn('SELECT * FROM requests${} ORDER BY seq')).toEqual(['requests']);
    expect(tablesIn('the requests from a client')).toEqual([]);
    const planted = literalsOf('src-main/core/report/planted.ts', "const s = db.prepare('SELECT * FROM audit_events WHERE ts >= ?');");
    expect(reaches(planted)).toEqual(['src-main/core/report/planted.ts:1 (report) names audit_events (store)']);
  });

  it('lists an owner for every table the migrations create', () => {
    const text = readFileSync(join(ROOT, 'src-main/core/store/migrations.ts'), 'utf8');
    const created = [...text.matchAll(/CREATE TABLE\s+([a-z_0-9]+)/g)].map((m) => m[1]!).filter((t) => t !== 'actions_next');
    expect(created.length).toBeGreaterThan(10);
    expect(created.filter((t) => ownerOf(t) === undefined)).toEqual([]);
  });
});

describe('table owners', () => {
  it('no SQL in src-main names a table another capability owns', () => {
    const lits = literalsIn(['src-main'], (f) => /\.test\.ts$/.test(f));
    expect(lits.some((l) => tablesIn(l.text).includes('requests'))).toBe(true);
    expect(reaches(lits)).toEqual([]);
  });
});
