import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi, type Api } from '../../../src-main/core/api.js';
import { startApp, type App } from '../../../src-main/core/app.js';
import { silentLogger } from '../../../src-main/core/base/index.js';
import { waitHost } from './helpers.js';

// Through the contract: the ~/.ssh/config import (preview, then apply into the
// YAML config with a reload) and the passphrase channel, whose value must
// never appear in a view, an answer or the audit log.

let dir: string;
let app: App;
let api: Api;
const PASS = 'tr0ub4dor&3-never-logged';

async function call<T>(channel: string, input: unknown): Promise<T> {
  const r = await api.invoke(channel, input, { caller: 'test' });
  if (!r.ok) throw Object.assign(new Error(r.error.message), r.error);
  return r.data as T;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-import-'));
  const key = join(dir, 'id_enc');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', PASS, '-f', key]);
  // Port 1 on loopback: nothing listens, so after unlocking, the host retries (never a real network).
  writeFileSync(
    join(dir, 'config.yaml'),
    `# operator's file\nhosts:\n  - label: locked\n    ssh: { host: 127.0.0.1, port: 1, user: ops, identityFile: ${key} }\n    knownHostsFile: ${join(dir, 'kh')}\n`,
  );
  writeFileSync(
    join(dir, 'ssh_config'),
    'Host *\n  User ops\n  IdentityFile ~/.ssh/id_fleet\nHost bastion\n  HostName 192.0.2.10\nHost gpu-1 gpu-2\n  HostName %h.example.internal\n  ProxyJump bastion\n  Weird yes\nHost locked\n  HostName 192.0.2.99\n',
  );
  app = await startApp({ mode: 'web', version: 'test', dataDir: dir, configFile: join(dir, 'config.yaml'), demo: false, logger: silentLogger, home: dir, pollIntervalMs: 250 });
  api = createApi(app, silentLogger);
});

afterAll(async () => {
  api?.dispose();
  await app?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('ssh channels through the api', () => {
  it('hosts.importPreview reads the file, marks labels already configured, reports unknown directives', async () => {
    const p = await call<{ hosts: { label: string; exists: boolean; jumpHost: string | null; identityFile: string | null }[]; issues: { message: string }[] }>(
      'hosts.importPreview',
      { file: join(dir, 'ssh_config') },
    );
    expect(p.hosts.map((h) => [h.label, h.exists])).toEqual([
      ['bastion', false],
      ['gpu-1', false],
      ['gpu-2', false],
      ['locked', true],
    ]);
    expect(p.hosts[1]).toMatchObject({ jumpHost: 'ops@192.0.2.10', identityFile: join(dir, '.ssh/id_fleet') });
    expect(p.issues.map((i) => i.message).join('\n')).toContain('unknown directive Weird');
    await expect(call('hosts.importPreview', { file: join(dir, 'nope') })).rejects.toMatchObject({ code: 'SSH_CONFIG_UNREADABLE' });
  });

  it('hosts.importApply writes the chosen hosts into the YAML config (comments kept), reloads, audits', async () => {
    const r = await call<{ added: string[]; reloaded: boolean; configFile: string }>('hosts.importApply', { file: join(dir, 'ssh_config'), labels: ['gpu-1', 'bastion'] });
    expect(r).toMatchObject({ added: ['bastion', 'gpu-1'], reloaded: true, configFile: join(dir, 'config.yaml') });
    expect(readFileSync(join(dir, 'config.yaml'), 'utf8')).toMatch(/^# operator's file/);
    expect(app.config.current.hosts.map((h) => h.label)).toEqual(['locked', 'bastion', 'gpu-1']);
    expect(app.store.audit.list({ type: 'hosts.imported' })[0]).toMatchObject({ payload: { added: ['bastion', 'gpu-1'], reloaded: true } });
    await expect(call('hosts.importApply', { file: join(dir, 'ssh_config'), labels: ['nope'] })).rejects.toMatchObject({ code: 'SSH_CONFIG_UNSUPPORTED' });
    // Imported hosts start connecting without touching the others; nothing here reaches a real network.
    await call('hosts.disconnect', { label: 'bastion' });
    await call('hosts.disconnect', { label: 'gpu-1' });
  });

  it('hosts.passphrase unlocks the key from memory; the value is in no answer, view or audit row', async () => {
    const first = await waitHost(app.fleet, 'locked', (h) => h.credentialPrompt != null);
    expect(first).toMatchObject({ state: 'failed', lastError: { code: 'SSH_PASSPHRASE_REQUIRED' }, credentialPrompt: { reason: 'required' } });
    const wrong = await call<{ state: string }>('hosts.passphrase', { label: 'locked', passphrase: 'nope-nope' });
    expect(wrong.state).toBe('failed');
    expect(app.fleet.snapshot().hosts.find((h) => h.label === 'locked')!.lastError?.code).toBe('SSH_PASSPHRASE_INCORRECT');
    const right = await call<{ state: string }>('hosts.passphrase', { label: 'locked', passphrase: PASS });
    expect(right.state).toBe('reconnecting'); // the key opened; port 1 refuses, so it retries
    const h = await waitHost(app.fleet, 'locked', (x) => x.lastError?.code === 'SSH_CONNECT_FAILED');
    expect(h.credentialPrompt).toBeNull();
    const everything = JSON.stringify({ snap: app.fleet.snapshot(), audit: app.store.audit.list({ limit: 1000 }), settings: app.store.settings.all() });
    expect(everything).not.toContain(PASS);
    expect(everything).not.toContain('nope-nope');
    expect(app.store.audit.list({ type: 'ssh.key.unlocked' }).map((e) => e.payload['accepted'])).toEqual([true, false]);
    await call('hosts.disconnect', { label: 'locked' });
  });
});
