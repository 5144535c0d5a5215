import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src-main/cli/run.js';
import { loadConfigFile } from '../../../src-main/core/config/index.js';

const dir = mkdtempSync(join(tmpdir(), 'cli-ssh-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function capture(json = false) {
  const out: string[] = [];
  const err: string[] = [];
  return { output: { json, out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

describe('gpu-console hosts import-ssh-config', () => {
  const sshConfig = join(dir, 'ssh_config');
  writeFileSync(sshConfig, 'Host *\n  User ops\nHost gpu1\n  HostName 10.1.2.3\n  IdentityFile /keys/id_gpu\n  Bogus 1\nHost gpu2\n  HostName 10.1.2.4\n  ProxyJump gpu1\n');
  const configFile = join(dir, 'config.yaml');

  it('previews without writing, naming unknown directives', async () => {
    const c = capture();
    expect(await runCli(['hosts', 'import-ssh-config', sshConfig, '--config', configFile, '--data-dir', dir], c.output)).toBe(0);
    const text = c.out.join('\n');
    expect(text).toContain('gpu1');
    expect(text).toMatch(/gpu2 .* via ops@10\.1\.2\.3/);
    expect(text).toContain('unknown directive Bogus');
    expect(text).toContain('Nothing written');
    expect(() => readFileSync(configFile)).toThrow();
  });

  it('--apply asks for --yes; --apply --yes writes a config that validates; a second run adds nothing', async () => {
    const a = capture();
    await runCli(['hosts', 'import-ssh-config', sshConfig, '--config', configFile, '--data-dir', dir, '--apply'], a.output);
    expect(a.out.join('\n')).toContain('Confirm with --yes');
    const b = capture();
    expect(await runCli(['hosts', 'import-ssh-config', sshConfig, '--config', configFile, '--data-dir', dir, '--apply', '--yes'], b.output)).toBe(0);
    expect(b.out.join('\n')).toContain('Added gpu1, gpu2');
    const config = await loadConfigFile(configFile, { home: dir });
    expect(config.hosts.map((h) => [h.label, h.ssh.jumpHost ?? null])).toEqual([
      ['gpu1', null],
      ['gpu2', 'ops@10.1.2.3'],
    ]);
    const again = capture();
    await runCli(['hosts', 'import-ssh-config', sshConfig, '--config', configFile, '--data-dir', dir, '--apply', '--yes'], again.output);
    expect(again.out.join('\n')).toContain('Nothing new');

    // No console runs: a core started for the command wrote the file, and audited it as the CLI user.
    const audit = capture(true);
    expect(await runCli(['audit', 'list', '--json', '--data-dir', dir], audit.output)).toBe(0);
    const events = (JSON.parse(audit.out.join('')) as { events: { type: string; actor: string; target: string | null; payload: { added?: string[] } }[] }).events;
    const imported = events.filter((e) => e.type === 'hosts.imported').reverse();
    expect(imported.map((e) => e.payload.added)).toEqual([['gpu1', 'gpu2'], []]);
    expect(imported.every((e) => e.actor === `operator:${userInfo().username}@cli` && e.target === configFile)).toBe(true);
    expect(events.filter((e) => e.type === 'hosts.import.previewed')).toHaveLength(2);
    expect(events.some((e) => e.type === 'console.started')).toBe(false);
  });

  it('a missing file is a coded error; trust needs a running console', async () => {
    const c = capture();
    expect(await runCli(['hosts', 'import-ssh-config', join(dir, 'nope')], c.output)).toBe(1);
    expect(c.err.join('\n')).toContain('SSH_CONFIG_UNREADABLE');
    const t = capture();
    expect(await runCli(['hosts', 'trust', 'gpu1', 'SHA256:' + 'a'.repeat(43), '--data-dir', dir], t.output)).toBe(1);
    expect(t.err.join('\n')).toContain('CLI_NO_RUNNING_CONSOLE');
    const u = capture();
    expect(await runCli(['hosts', 'trust', 'gpu1'], u.output)).toBe(2);
  });
});

describe('gpu-console hosts import-ssh-config: the file is data', () => {
  const work = mkdtempSync(join(tmpdir(), 'cli-ssh-data-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  const sshConfig = join(work, 'team_config');
  writeFileSync(
    sshConfig,
    [
      'Host *',
      '  User ops',
      'Host gpu-east',
      "  HostName gpu-east.internal\\'$(id>/tmp/pwned)\\'",
      '  ProxyJump a,b',
      'Host gpu-pc',
      '  HostName 10.1.2.5',
      '  ProxyCommand nc -X connect -x proxy.corp:3128 %h %p \u001b]0;x\u0007',
      'Host gpu-plain',
      '  HostName 10.1.2.6',
      '',
    ].join('\n'),
  );
  const configFile = join(work, 'config.yaml');
  const run = async (...extra: string[]) => {
    const c = capture();
    const code = await runCli(['hosts', 'import-ssh-config', sshConfig, '--config', configFile, '--data-dir', work, ...extra], c.output);
    return { code, out: c.out.join('\n'), err: c.err.join('\n') };
  };

  it('names a refused host by field and line, and prints each command line as text with its hosts (control characters escaped)', async () => {
    const r = await run();
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/refused gpu-east: HostName \(line 4\): ".*" is not a host name/);
    expect(r.out).toContain('line 8: ProxyCommand nc -X connect -x proxy.corp:3128 %h %p \\x1b]0;x\\x07');
    expect(r.out).toMatch(/for gpu-pc: not run by the console: an uploaded file is not kept/);
    expect(r.out).not.toContain('\u001b');
    expect(r.out).toMatch(/gpu-plain +ops@10\.1\.2\.6:22/);
  });

  it('--apply --yes writes nothing while a host that a command line applies to is not named with --allow-command', async () => {
    const dry = await run('--apply');
    expect(dry.out).toMatch(/not added gpu-pc: ssh would run commands from the file for it \(ProxyCommand line 8\)/);
    const refused = await run('--apply', '--yes');
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/nothing written: ssh would run commands from the file for gpu-pc \(ProxyCommand line 8\).*--allow-command gpu-pc/);
    expect(() => readFileSync(configFile)).toThrow();
    expect((await run('--apply', '--yes', '--allow-command', 'gpu-nope')).code).toBe(2);
    const ok = await run('--apply', '--yes', '--allow-command', 'gpu-pc');
    expect(ok.code).toBe(0);
    expect(ok.out).toContain('Added gpu-pc, gpu-plain');
    const config = await loadConfigFile(configFile, { home: work });
    expect(config.hosts.map((h) => [h.label, h.ssh.host])).toEqual([
      ['gpu-pc', '10.1.2.5'],
      ['gpu-plain', '10.1.2.6'],
    ]);
  });
});
