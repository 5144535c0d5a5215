import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runCliProcess, startConsole } from '../helpers/console-process.js';

// The built `gpu-console` command as an operator runs it.

interface AuditRow {
  seq: number;
  type: string;
  actor: string;
  target: string | null;
  payload: Record<string, unknown>;
}

/** What the CLI does is done by the console's core as the CLI user, reached through the contract. */
const CLI_ACTOR = `operator:${userInfo().username}@cli`;

async function auditRows(dataDir: string): Promise<AuditRow[]> {
  const r = await runCliProcess(['audit', 'list', '--json', '--limit', '1000', '--data-dir', dataDir]);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { events: AuditRow[] }).events;
}

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
      expect(snapshot.hosts.map((h: { label: string }) => h.label).sort()).toEqual(['l20-poc', 'strix', 'tri-gpu']);
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

    it('actions proposed and rejected from the CLI are audited as the CLI user', async () => {
      const proposed = await runCliProcess(['actions', 'propose', 'l20-poc/qwen', 'sleep', '--reason', 'e2e: the CLI proposes', '--json', '--data-dir', dataDir]);
      expect(proposed.code, proposed.stderr).toBe(0);
      const { action } = JSON.parse(proposed.stdout) as { action: { id: string; nonce: string; proposer: string } };
      expect(action.proposer).toBe(CLI_ACTOR);
      const rejected = await runCliProcess(['actions', 'reject', action.id, '--nonce', action.nonce, '--reason', 'e2e: not during the shift', '--data-dir', dataDir]);
      expect(rejected.code, rejected.stderr).toBe(0);
      expect(rejected.stdout).toMatch(new RegExp(`^${action.id}\\s+rejected`));

      const rows = (await auditRows(dataDir)).filter((e) => e.payload.actionId === action.id);
      expect(rows.find((e) => e.type === 'lifecycle.proposed')).toMatchObject({ actor: CLI_ACTOR, target: 'l20-poc/qwen' });
      expect(rows.find((e) => e.type === 'lifecycle.rejected')).toMatchObject({ actor: CLI_ACTOR, payload: { reason: 'e2e: not during the shift' } });
    });

    it('tokens and the ssh-config import go to the running console, audited as the CLI user', async () => {
      const created = await runCliProcess(['tokens', 'create', 'e2e-running', '--data-dir', dataDir]);
      expect(created.code, created.stderr).toBe(0);
      // The running console's proxy knows the token at once: no restart, no shared database trick.
      const ready = JSON.parse(readFileSync(join(dataDir, 'ready.json'), 'utf8')) as { proxy: string };
      const models = await fetch(`${ready.proxy}/models`, { headers: { authorization: `Bearer ${created.stdout.trim()}` } });
      expect(models.status).toBe(200);
      const unknown = await fetch(`${ready.proxy}/models`, { headers: { authorization: `Bearer ${created.stdout.trim().slice(0, -4)}xxxx` } });
      expect(unknown.status).toBe(401);

      const sshConfig = join(dataDir, 'ssh_config');
      writeFileSync(sshConfig, 'Host night-gpu\n  HostName 10.9.8.7\n  User ops\n');
      const imported = await runCliProcess(['hosts', 'import-ssh-config', sshConfig, '--apply', '--yes', '--data-dir', dataDir]);
      expect(imported.code, imported.stderr).toBe(0);
      // A demo console writes the file but keeps its demo fleet, and says so.
      expect(imported.stdout).toContain(`Added night-gpu to ${join(dataDir, 'config.yaml')}; the running console did not load it (`);
      expect(readFileSync(join(dataDir, 'config.yaml'), 'utf8')).toContain('night-gpu');
      // Against a running console, --config must name its own file.
      const other = await runCliProcess(['hosts', 'import-ssh-config', sshConfig, '--apply', '--yes', '--config', join(dataDir, 'other.yaml'), '--data-dir', dataDir]);
      expect(other.code).toBe(1);
      expect(other.stderr).toContain('CLI_CONFIG_FILE_MISMATCH');

      const rows = await auditRows(dataDir);
      expect(rows.find((e) => e.type === 'proxy.token.created' && e.target === 'e2e-running')?.actor).toBe(CLI_ACTOR);
      expect(rows.find((e) => e.type === 'hosts.imported')).toMatchObject({ actor: CLI_ACTOR, payload: { added: ['night-gpu'] } });
    });

    it('a second console on the same data dir is refused', async () => {
      const r = await runCliProcess(['serve', '--demo', '--data-dir', dataDir]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/already uses data dir/);
    });
  });

  it('with no console running, tokens are written and audited by a core started for the command', async () => {
    const offline = mkdtempSync(join(tmpdir(), 'gc-cli-offline-'));
    const created = await runCliProcess(['tokens', 'create', 'batch-jobs', '--max-class', 'batch', '--data-dir', offline]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^gcp_\S+\n$/);
    const listed = await runCliProcess(['tokens', 'list', '--json', '--data-dir', offline]);
    expect(JSON.parse(listed.stdout)).toMatchObject({ tokens: [{ name: 'batch-jobs', maxClass: 'batch', revokedAt: null }] });
    const revoked = await runCliProcess(['tokens', 'revoke', 'batch-jobs', '--data-dir', offline]);
    expect(revoked.stdout).toBe('batch-jobs: revoked\n');

    const rows = await auditRows(offline);
    expect(rows.map((e) => [e.type, e.actor, e.target])).toEqual([
      ['proxy.token.revoked', CLI_ACTOR, 'batch-jobs'],
      ['proxy.token.created', CLI_ACTOR, 'batch-jobs'],
    ]);
    expect(rows[1]!.payload).toMatchObject({ maxClass: 'batch', prefix: created.stdout.slice(0, 10) });
    const verified = await runCliProcess(['audit', 'verify', '--data-dir', offline]);
    expect(verified.stdout).toMatch(/^audit chain OK: 2 events, head #2 /);
    // A read does not create a database where there is none.
    const none = await runCliProcess(['audit', 'list', '--data-dir', join(offline, 'nowhere')]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('CLI_NO_DATABASE');
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
