import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src-main/core/app.js';
import { HAVE_OPENSSH } from '../../helpers/ssh-tools.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';

// Issue #26, finding 1: an uploaded "team ssh_config" whose HostName carries
// shell text. The console wrote it unquoted into the openssh transport's
// config; with two jump hops `auto` picks OpenSSH, whose ProxyJump runs
// `/bin/sh -c "exec ssh … -W '[%h]:%p' …"`, and the shell ran `touch`.
// Imported text is data: the host is refused in the preview, by name and
// field, and nothing is ever run.

let dir: string;
const markerDir = join(tmpdir(), `gc-hostile-marker-${process.pid}`);
let core: TestApp;
let app: App;

const call = <T,>(channel: string, input: unknown): Promise<T> => core.call<T>(channel, input);

/** True as soon as `file` exists; false once `ms` have passed without it. */
async function appears(file: string, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (existsSync(file)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return existsSync(file);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-hostile-'));
  mkdirSync(markerDir, { recursive: true });
  writeFileSync(join(dir, 'config.yaml'), '# operator\nhosts: []\n');
  core = await startTestApp({ dataDir: dir, configFile: join(dir, 'config.yaml'), home: dir, pollIntervalMs: 250 });
  app = core.app;
});

afterAll(async () => {
  await core?.dispose();
  rmSync(dir, { recursive: true, force: true });
  rmSync(markerDir, { recursive: true, force: true });
});

describe.skipIf(!HAVE_OPENSSH)('an imported ssh_config is data, never shell', () => {
  it('a HostName carrying $(…) behind two jump hops is refused by name and field; no marker is ever written', async () => {
    // ssh lowercases a HostName before the shell sees it: the marker's path is lowercase, the command has no spaces
    // (the old "non-empty, no whitespace" check let it through). Port 1 on loopback refuses the jump.
    const marker = join(markerDir, 'pwned');
    const text = [
      'Host gpu-east',
      `  HostName gpu-east.internal\\'$(id>${marker})\\'`,
      '  User ops',
      '  ProxyJump ops@127.0.0.1:1,ops@127.0.0.1:1',
      'Host gpu-west',
      '  HostName 192.0.2.8',
      '  User ops',
      '',
    ].join('\n');
    const p = await call<{ previewId: string; hosts: { label: string }[]; skipped: { alias: string; reason: string }[] }>('hosts.importPreview', {
      source: { kind: 'content', name: 'team_ssh_config', text },
    });
    const refusal = p.skipped.find((s) => s.alias === 'gpu-east');
    const applied = await call<{ added: string[] }>('hosts.importApply', { previewId: p.previewId, labels: ['gpu-east', 'gpu-west'] }).catch((e: { code?: string }) => e);
    // The old code wrote and connected the host here; give ssh the time it took (about 2 s) and more.
    const ran = await appears(marker, 5_000);
    expect(ran).toBe(false);
    expect(p.hosts.map((h) => h.label)).toEqual(['gpu-west']);
    expect(refusal?.reason).toMatch(/HostName/);
    expect(refusal?.reason).toMatch(/line 2/);
    expect(refusal?.reason).toMatch(/is not a host name .* or an IPv4 or IPv6 address/);
    expect(applied).toMatchObject({ code: 'SSH_CONFIG_UNSUPPORTED' });
    expect(readFileSync(join(dir, 'config.yaml'), 'utf8')).not.toContain('gpu-east');
  }, 20_000);

  it('lines that make ssh run a command are shown with their hosts, never run by the preview, and each must be acknowledged', async () => {
    const ran = join(markerDir, 'ran');
    // ~/.ssh/config on disk: hosts keep their alias, so ssh would read these lines once they are added.
    mkdirSync(join(dir, '.ssh'), { recursive: true });
    writeFileSync(
      join(dir, '.ssh', 'config'),
      [
        `Match exec "touch ${ran}-match"`,
        '  User ops',
        'Host gpu-a gpu-b',
        '  HostName 192.0.2.20',
        `  ProxyCommand sh -c 'touch ${ran}-proxy; nc %h %p'`,
        'Host gpu-c',
        '  HostName 192.0.2.21',
        '  User ops',
        `  LocalCommand touch ${ran}-local`,
        '  PermitLocalCommand yes',
        '',
      ].join('\n'),
    );
    type Preview = {
      previewId: string;
      hosts: { label: string; commands: string[] }[];
      commands: { id: string; directive: string; text: string; line: number; hosts: string[]; effect: string }[];
    };
    const p = await call<Preview>('hosts.importPreview', { source: { kind: 'default' } });
    expect(p.commands.map((c) => [c.id, c.directive, c.line, c.hosts])).toEqual([
      ['cmd-1', 'Match exec', 1, ['gpu-a', 'gpu-b', 'gpu-c']],
      ['cmd-2', 'ProxyCommand', 5, ['gpu-a', 'gpu-b']],
      ['cmd-3', 'LocalCommand', 9, ['gpu-c']],
      ['cmd-4', 'PermitLocalCommand', 10, ['gpu-c']],
    ]);
    expect(p.commands[0]!.text).toBe(`exec "touch ${ran}-match"`);
    expect(p.commands[1]!.text).toBe(`sh -c 'touch ${ran}-proxy; nc %h %p'`);
    expect(p.commands[1]!.effect).toMatch(/ssh runs this on this computer.*gpu-a, gpu-b/);
    expect(p.commands[2]!.effect).toMatch(/not run today: the console sets PermitLocalCommand no/);
    expect(p.hosts.find((h) => h.label === 'gpu-a')!.commands).toEqual(['cmd-1', 'cmd-2']);

    const before = readFileSync(join(dir, 'config.yaml'), 'utf8');
    await expect(call('hosts.importApply', { previewId: p.previewId, labels: ['gpu-a', 'gpu-c'], acknowledgedCommands: ['cmd-1', 'cmd-2'] })).rejects.toMatchObject({
      code: 'SSH_IMPORT_COMMAND_NOT_ACKNOWLEDGED',
      details: { hosts: ['gpu-c'], commands: ['cmd-3', 'cmd-4'] },
    });
    await expect(call('hosts.importApply', { previewId: p.previewId, labels: ['gpu-a'], acknowledgedCommands: ['cmd-9'] })).rejects.toMatchObject({ code: 'SSH_CONFIG_UNSUPPORTED' });
    await expect(call('hosts.importApply', { previewId: p.previewId, labels: ['gpu-a'], acknowledgedCommands: ['touch x'] })).rejects.toMatchObject({ code: 'CONTRACT_INVALID_INPUT' });
    expect(readFileSync(join(dir, 'config.yaml'), 'utf8')).toBe(before);
    // Nothing was run or evaluated: not the Match exec, not the ProxyCommand, not the LocalCommand.
    expect(existsSync(`${ran}-match`) || existsSync(`${ran}-proxy`) || existsSync(`${ran}-local`)).toBe(false);

    // gpu-c, its lines acknowledged: written, and the audit row names the lines by place and digest, never their text.
    const r = await call<{ added: string[] }>('hosts.importApply', { previewId: p.previewId, labels: ['gpu-c'], acknowledgedCommands: ['cmd-1', 'cmd-3', 'cmd-4'] });
    expect(r.added).toEqual(['gpu-c']);
    await call('hosts.disconnect', { label: 'gpu-c' });
    const audit = app.store.audit.list({ type: 'hosts.imported' })[0]!;
    expect((audit.payload['acknowledgedCommands'] as { directive: string; line: number; sha256: string }[]).map((c) => [c.directive, c.line, c.sha256.length])).toEqual([
      ['Match exec', 1, 64],
      ['LocalCommand', 9, 64],
      ['PermitLocalCommand', 10, 64],
    ]);
    expect(JSON.stringify(audit.payload)).not.toContain('touch');
  }, 20_000);
});
