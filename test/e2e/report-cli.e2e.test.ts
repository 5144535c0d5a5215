import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runCliProcess } from '../helpers/console-process.js';

// Bad input to `gpu-console report …`: usage errors exit 2 before anything runs,
// failures name what is wrong and exit 1.

let dir: string;
beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'gc-report-cli-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('gpu-console report: bad input', () => {
  it('refuses unreadable arguments with exit 2, naming the flag', async () => {
    const since = await runCliProcess(['report', 'build', '--since', 'yesterday-ish', '--data-dir', dir]);
    expect(since.code).toBe(2);
    expect(since.stderr).toContain('--since');
    const format = await runCliProcess(['report', 'build', '--format', 'md,docx', '--data-dir', dir]);
    expect(format.code).toBe(2);
    expect(format.stderr).toContain('"docx"');
    const order = await runCliProcess(['report', 'build', '--since', '2026-11-30T10:00:00Z', '--until', '2026-11-30T09:00:00Z', '--data-dir', dir]);
    expect(order.code).toBe(2);
    const pass = await runCliProcess(['report', 'build', '--passphrase-file', join(dir, 'p'), '--data-dir', dir]);
    expect(pass.code).toBe(2);
    expect(pass.stderr).toContain('--sign');
  });

  it('says when no console runs on the data dir', async () => {
    const r = await runCliProcess(['report', 'build', '--data-dir', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no console is running/);
  });

  it('report verify names a path that is not an export, and a database that does not exist', async () => {
    const missing = await runCliProcess(['report', 'verify', join(dir, 'no-such-export')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/REPORT_MANIFEST_INVALID|cannot be read/);
    const notExport = await runCliProcess(['report', 'verify', dir]);
    expect(notExport.code).toBe(1);
    expect(notExport.stderr).toContain('is not an export folder');
    const db = await runCliProcess(['report', 'verify', dir, '--db', join(dir, 'nope.db')]);
    expect(db.code).toBe(2);
    expect(db.stderr).toContain('no database at');
  });
});
