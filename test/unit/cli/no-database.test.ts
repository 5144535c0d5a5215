import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, importsOf, rel, sourceFiles } from '../../helpers/imports.js';

// The CLI is a bridge (ARCHITECTURE.md §2): what it reads and writes goes
// through the contract to a core, never to the database. No file under
// src-main/cli imports a SQLite driver or the store, nor calls openStore.

const DRIVERS = ['better-sqlite3', 'node:sqlite', 'sqlite3'];

function offences(file: string, storeDir: string): string[] {
  const found: string[] = [];
  for (const spec of importsOf(file)) {
    if (DRIVERS.includes(spec)) found.push(`${rel(file)} imports ${spec}`);
    if (spec.startsWith('.') && resolve(dirname(file), spec).startsWith(storeDir)) found.push(`${rel(file)} imports ${spec} (the store)`);
  }
  if (/\bopenStore\b/.test(readFileSync(file, 'utf8'))) found.push(`${rel(file)} names openStore`);
  return found;
}

describe('the CLI never opens the database', () => {
  const planted = mkdtempSync(join(tmpdir(), 'gc-cli-nodb-'));
  afterAll(() => rmSync(planted, { recursive: true, force: true }));

  it('the check finds a planted driver import, store import and openStore call', () => {
    // The same layout as the repo, so "../../core/store" resolves the way it would in src-main/cli/extra.
    mkdirSync(join(planted, 'src-main', 'cli', 'extra'), { recursive: true });
    const file = join(planted, 'src-main', 'cli', 'extra', 'bad.ts');
    writeFileSync(
      file,
      "import Database from 'better-sqlite3';\nimport { openStore } from '../../core/store/index.js';\nexport const db = openStore({ file: 'x' }) ?? new Database('x');\n",
    );
    expect(offences(file, join(planted, 'src-main', 'core', 'store'))).toHaveLength(3);
  });

  it('no file under src-main/cli does', () => {
    const files = sourceFiles('src-main/cli');
    expect(files.map(rel)).toContain('src-main/cli/core-client.ts');
    expect(files.flatMap((f) => offences(f, join(ROOT, 'src-main', 'core', 'store')))).toEqual([]);
  });
});
