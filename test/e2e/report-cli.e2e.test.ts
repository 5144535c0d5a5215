import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { assertBuilt, runCliProcess, startConsole } from '../helpers/console-process.js';

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

describe('gpu-console report build against a running console', () => {
  it('exports a signed report (encrypted key, passphrase from a file) that report verify and ssh-keygen accept, and lists it', async () => {
    const data = join(dir, 'data');
    const key = join(dir, 'ops_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'night shift words', '-f', key]);
    writeFileSync(join(dir, 'pass'), 'night shift words\n', { mode: 0o600 });
    const c = await startConsole(['--demo', '--demo-traffic', 'off', '--data-dir', data, '--ui-port', '0', '--proxy-port', '0']);
    try {
      const out = join(dir, 'evidence');
      const built = await runCliProcess(['report', 'build', '--data-dir', data, '--hosts', 'l20-poc', '--since', '30m', '--format', 'md,json', '--sign', key, '--passphrase-file', join(dir, 'pass'), '--out', out, '--title', 'CLI handover']);
      expect(built.code, built.stderr).toBe(0);
      const folder = /^export \S+: (.+)$/m.exec(built.stdout)?.[1];
      expect(folder).toBeTruthy();
      expect(built.stdout).toMatch(/signed by SHA256:/);
      expect(built.stdout).toMatch(/[0-9a-f]{64} {2}report\.md/);
      const verified = await runCliProcess(['report', 'verify', folder!, '--data-dir', data, '--require-signature']);
      expect(verified.code, verified.stdout).toBe(0);
      const principal = readFileSync(join(folder!, 'allowed_signers'), 'utf8').split(' ')[0]!;
      const ssh = spawnSync('ssh-keygen', ['-Y', 'verify', '-f', join(folder!, 'allowed_signers'), '-I', principal, '-n', 'gpu-console-evidence', '-s', join(folder!, 'manifest.json.sig')], {
        input: readFileSync(join(folder!, 'manifest.json')),
      });
      expect(ssh.status, ssh.stderr.toString()).toBe(0);
      expect(readFileSync(join(folder!, 'report.md'), 'utf8')).toContain('# CLI handover');
      const listed = await runCliProcess(['report', 'list', '--data-dir', data]);
      expect(listed.stdout).toContain(folder!);
      // A wrong passphrase is a clear error, and nothing is left behind.
      writeFileSync(join(dir, 'pass'), 'wrong\n');
      const wrong = await runCliProcess(['report', 'build', '--data-dir', data, '--sign', key, '--passphrase-file', join(dir, 'pass'), '--out', out]);
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toContain('REPORT_SIGNING_KEY_PASSPHRASE_INCORRECT');
      expect(wrong.stderr).not.toContain('wrong');
      expect(execFileSync('ls', ['-A', out], { encoding: 'utf8' }).trim().split('\n')).toHaveLength(1);
    } finally {
      expect(await c.stop()).toBe(0);
    }
    // With the console stopped, a core started for each command answers from the data dir.
    const listed = await runCliProcess(['report', 'list', '--data-dir', data]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/ SHA256:\S+ /);
    const folder = listed.stdout.trim().split('  ').at(-1)!;
    const verified = await runCliProcess(['report', 'verify', folder, '--data-dir', data, '--require-signature', '--json']);
    expect(verified.code, verified.stdout).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, signature: 'valid', auditChecked: true });
    // A database file of its own (a backup) is checked on a copy; the file itself is not touched.
    const backup = join(dir, 'backup.db');
    writeFileSync(backup, readFileSync(join(data, 'gpu-console.db')));
    const before = readFileSync(backup);
    const onBackup = await runCliProcess(['report', 'verify', folder, '--db', backup]);
    expect(onBackup.code, onBackup.stdout).toBe(0);
    expect(onBackup.stdout).toMatch(/ok +audit: audit rows 1–\d+ verify/);
    expect(readFileSync(backup).equals(before)).toBe(true);
  }, 60_000);
});

