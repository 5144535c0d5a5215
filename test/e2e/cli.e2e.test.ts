import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runCliProcess, startConsole } from '../helpers/console-process.js';

// The built `gpu-console` command as an operator runs it.

describe('gpu-console command', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-cli-'));

  beforeAll(() => assertBuilt());

  it('--help documents every command', async () => {
    const r = await runCliProcess(['--help']);
    expect(r.code).toBe(0);
    for (const cmd of ['serve', 'status', 'hosts connect', 'audit verify', 'audit list', 'config check', '--data-dir', '--json']) {
      expect(r.stdout).toContain(cmd);
    }
  });

  it('refuses bad flags with exit 2 and names the flag', async () => {
    const r = await runCliProcess(['serve', '--ui-port', '70000', '--data-dir', dataDir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--ui-port');
    const unknown = await runCliProcess(['serve', '--bogus']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/bogus/);
    const cmd = await runCliProcess(['frobnicate']);
    expect(cmd.code).toBe(2);
  });

  it('config check names the line and field of a bad config', async () => {
    const file = join(dataDir, 'bad.yaml');
    writeFileSync(file, ['hosts:', '  - label: a', '    ssh: { host: 127.0.0.1, port: 70000, user: ops, agent: true }', ''].join('\n'));
    const r = await runCliProcess(['config', 'check', file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('bad.yaml:3');
    expect(r.stdout).toContain('hosts[0].ssh.port');
  });

  describe('against a running console', () => {
    let stop: () => Promise<number | null>;
    beforeAll(async () => {
      const running = await startConsole(['--demo', '--data-dir', dataDir, '--ui-port', '0']);
      stop = running.stop;
    }, 60_000);
    afterAll(async () => {
      expect(await stop()).toBe(0);
    });

    it('status reaches it through the ready file and its bridge', async () => {
      let r = await runCliProcess(['status', '--json', '--data-dir', dataDir]);
      for (let i = 0; i < 40 && !(r.code === 0 && JSON.parse(r.stdout).hosts.every((h: { state: string }) => h.state === 'connected')); i++) {
        await new Promise((res) => setTimeout(res, 250));
        r = await runCliProcess(['status', '--json', '--data-dir', dataDir]);
      }
      expect(r.code).toBe(0);
      const snapshot = JSON.parse(r.stdout);
      expect(snapshot.hosts.map((h: { label: string }) => h.label).sort()).toEqual(['l20-poc', 'tri-gpu']);
    }, 30_000);

    it('secrets: a value goes in from stdin, only its name comes back, the file is 0600, the audit row has no value', async () => {
      const secret = 'sk-live-e2e-7f3a9c';
      const set = await runCliProcess(['secrets', 'set', 'upstream.apikey.qwen', '--data-dir', dataDir], `${secret}\n`);
      expect(set.code).toBe(0);
      expect(set.stdout + set.stderr).not.toContain(secret);
      const list = await runCliProcess(['secrets', 'list', '--json', '--data-dir', dataDir]);
      expect(JSON.parse(list.stdout)).toMatchObject({ kind: 'file', persistent: true, names: ['upstream.apikey.qwen'] });
      expect(list.stdout).not.toContain(secret);
      expect(statSync(join(dataDir, 'secrets.json')).mode & 0o777).toBe(0o600);
      const audit = await runCliProcess(['audit', 'list', '--json', '--limit', '50', '--data-dir', dataDir]);
      expect(audit.stdout).toContain('secret.set');
      expect(audit.stdout).not.toContain(secret);
      const bad = await runCliProcess(['secrets', 'set', 'bad name', '--data-dir', dataDir], 'x');
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('CONTRACT_INVALID_INPUT');
    });

    it('a second console on the same data dir is refused', async () => {
      const r = await runCliProcess(['serve', '--demo', '--data-dir', dataDir]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/already uses data dir/);
    });
  });

  it('audit verify passes on the store the console wrote, then fails naming the altered row', async () => {
    const ok = await runCliProcess(['audit', 'verify', '--data-dir', dataDir]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/audit chain OK: \d+ events, head #\d+ [0-9a-f]{64}/);

    // Alter row 2 behind the app's back: drop the guard trigger, then UPDATE.
    const db = new Database(join(dataDir, 'gpu-console.db'));
    const triggers = db.prepare("SELECT name FROM sqlite_master WHERE type='trigger' AND tbl_name='audit_events'").all() as { name: string }[];
    for (const t of triggers) db.exec(`DROP TRIGGER "${t.name}"`);
    db.prepare("UPDATE audit_events SET actor = 'operator:mallory' WHERE seq = 2").run();
    db.close();

    const broken = await runCliProcess(['audit', 'verify', '--data-dir', dataDir]);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain('BROKEN at event #2');
    const json = await runCliProcess(['audit', 'verify', '--json', '--data-dir', dataDir]);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, brokenAt: 2 });
  });
});
