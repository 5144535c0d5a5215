import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src-main/core/app.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { waitHost } from './helpers.js';

// Through the contract: the ~/.ssh/config import (preview, then apply into the
// YAML config with a reload) and the passphrase channel, whose value must
// never appear in a view, an answer or the audit log.

let dir: string;
let core: TestApp;
let app: App;
const PASS = 'tr0ub4dor&3-never-logged';

const call = <T,>(channel: string, input: unknown): Promise<T> => core.call<T>(channel, input);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-import-'));
  const key = join(dir, 'id_enc');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', PASS, '-f', key]);
  // Port 1 on loopback: nothing listens, so after unlocking, the host retries (never a real network).
  writeFileSync(
    join(dir, 'config.yaml'),
    `# operator's file\nhosts:\n  - label: locked\n    ssh: { host: 127.0.0.1, port: 1, user: ops, identityFile: ${key} }\n    knownHostsFile: ${join(dir, 'kh')}\n`,
  );
  // `home` is `dir`: the default source is <dir>/.ssh/config, which Includes conf.d/* (relative to ~/.ssh, as ssh does).
  mkdirSync(join(dir, '.ssh', 'conf.d'), { recursive: true });
  writeFileSync(
    join(dir, '.ssh', 'config'),
    'Include conf.d/*.conf\nHost *\n  User ops\n  IdentityFile ~/.ssh/id_fleet\nHost bastion\n  HostName 192.0.2.10\nHost gpu-1 gpu-2\n  HostName %h.example.internal\n  ProxyJump bastion\n  Weird yes\nHost locked\n  HostName 192.0.2.99\n',
  );
  writeFileSync(join(dir, '.ssh', 'conf.d', '10-lab.conf'), 'Host lab-1\n  HostName 192.0.2.50\n  User lab\nroot:x:0:0:root:/root:/bin/bash\n');
  core = await startTestApp({ dataDir: dir, configFile: join(dir, 'config.yaml'), home: dir, pollIntervalMs: 250 });
  app = core.app;
});

afterAll(async () => {
  await core?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('ssh channels through the api', () => {
  it('hosts.importPreview reads ~/.ssh/config with its Includes, marks labels already configured, reports unknown directives', async () => {
    const p = await call<{
      previewId: string;
      files: string[];
      hosts: { label: string; exists: boolean; jumpHost: string | null; identityFile: string | null; user: string }[];
      issues: { file: string | null; line: number; message: string }[];
    }>('hosts.importPreview', { source: { kind: 'default' } });
    expect(p.files).toEqual([join(dir, '.ssh', 'config'), join(dir, '.ssh', 'conf.d', '10-lab.conf')]);
    expect(p.hosts.map((h) => [h.label, h.exists])).toEqual([
      ['lab-1', false],
      ['bastion', false],
      ['gpu-1', false],
      ['gpu-2', false],
      ['locked', true],
    ]);
    expect(p.hosts[0]).toMatchObject({ user: 'lab' });
    expect(p.hosts[2]).toMatchObject({ jumpHost: 'ops@192.0.2.10', identityFile: join(dir, '.ssh/id_fleet') });
    expect(p.issues.map((i) => i.message).join('\n')).toContain('unknown directive Weird');
    // A line that is not ssh_config is named by file and number, never echoed.
    const notConfig = p.issues.find((i) => i.file === join(dir, '.ssh', 'conf.d', '10-lab.conf') && i.line === 4);
    expect(notConfig?.message).toMatch(/not "Keyword value"/);
    expect(JSON.stringify(p)).not.toContain('root:x');
    const audit = app.store.audit.list({ type: 'hosts.import.previewed' })[0]!;
    expect(audit).toMatchObject({ actor: expect.stringMatching(/@test$/), payload: { source: 'default', files: p.files } });
  });

  it('hosts.importPreview takes no path: a file name is refused, uploaded content is parsed without echoing what is not ssh_config', async () => {
    for (const bad of [{ file: '/etc/passwd' }, { source: { kind: 'file', path: '/etc/passwd' } }, { source: { kind: 'content', name: 'x', text: 'a', path: '/etc/passwd' } }]) {
      await expect(call('hosts.importPreview', bad)).rejects.toMatchObject({ code: 'CONTRACT_INVALID_INPUT' });
    }
    // What the old channel leaked when pointed at /etc/passwd and a private key: none of it comes back.
    const planted = ['root:x:0:0:root:/root:/bin/bash', '-----BEGIN OPENSSH PRIVATE KEY-----', 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW', 'Zm9vYmFyYmF6cXV4==', 'SECRET-VALUE-9f2c"}'];
    const text = ['Host up-1', '  HostName 192.0.2.77', 'Include /etc/passwd', ...planted].join('\n');
    const p = await call<{ file: string; files: string[]; hosts: { label: string }[]; issues: { line: number; message: string; directive: string }[] }>('hosts.importPreview', {
      source: { kind: 'content', name: 'my_config', text },
    });
    expect(p.file).toBe('my_config (uploaded)');
    expect(p.files).toEqual([]);
    expect(p.hosts.map((h) => h.label)).toEqual(['up-1']);
    expect(p.issues.find((i) => i.directive === 'Include')?.message).toMatch(/not followed/);
    const answer = JSON.stringify(p);
    for (const needle of [...planted, 'root:x', 'BEGIN OPENSSH', 'b3BlbnNzaC1rZXkt', 'SECRET-VALUE']) expect(answer).not.toContain(needle);
    expect(p.issues.filter((i) => i.line >= 4).map((i) => i.line)).toEqual([4, 5, 6, 7, 8]);
    // Headless there is no native dialog: a clear error, nothing read.
    await expect(call('hosts.importPreview', { source: { kind: 'dialog' } })).rejects.toMatchObject({ code: 'SSH_IMPORT_SOURCE_UNAVAILABLE' });
  });

  it('hosts.importApply writes the chosen hosts of a preview into the YAML config (comments kept), reloads, audits', async () => {
    const p = await call<{ previewId: string }>('hosts.importPreview', { source: { kind: 'default' } });
    const r = await call<{ added: string[]; reloaded: boolean; configFile: string }>('hosts.importApply', { previewId: p.previewId, labels: ['gpu-1', 'bastion'] });
    expect(r).toMatchObject({ added: ['bastion', 'gpu-1'], reloaded: true, configFile: join(dir, 'config.yaml') });
    expect(readFileSync(join(dir, 'config.yaml'), 'utf8')).toMatch(/^# operator's file/);
    expect(app.config.current.hosts.map((h) => h.label)).toEqual(['locked', 'bastion', 'gpu-1']);
    expect(app.store.audit.list({ type: 'hosts.imported' })[0]).toMatchObject({ payload: { added: ['bastion', 'gpu-1'], reloaded: true } });
    await expect(call('hosts.importApply', { previewId: p.previewId, labels: ['nope'] })).rejects.toMatchObject({ code: 'SSH_CONFIG_UNSUPPORTED' });
    await expect(call('hosts.importApply', { previewId: 'never-issued-id', labels: ['gpu-2'] })).rejects.toMatchObject({ code: 'SSH_IMPORT_PREVIEW_UNKNOWN' });
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
