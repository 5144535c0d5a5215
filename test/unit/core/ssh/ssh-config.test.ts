import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../../src-main/core/config/index.js';
import { importSshConfig, mergeHostsIntoYaml } from '../../../../src-main/core/ssh/index.js';

const opts = { home: '/home/ops', localUser: 'ops' };

const SAMPLE = `
# defaults before any Host apply to all
User fallback
ServerAliveInterval 15

Host bastion
  HostName bastion.example.net
  User jump
  Port 2202

Host gpu-a gpu-b
  HostName %h.lab.internal
  IdentityFile ~/.ssh/id_gpu
  IdentityFile ~/.ssh/id_other
  ProxyJump bastion

Host gpu-c
  HostName 10.0.0.7
  User=root
  Port = 2222
  ProxyJump ops@203.0.113.9:2200
  UserKnownHostsFile ~/.ssh/known_hosts_lab
  ForwardAgent yes
  Frobnicate on

Host gpu-d
  ProxyJump a,b

Host *.lab !gpu-x
  User wildcard

Match host gpu-a
  User never-used

Host gpu-a
  User second-block-loses
Include ~/.ssh/conf.d/*
`;

describe('importSshConfig', () => {
  const r = importSshConfig(SAMPLE, opts);
  const byAlias = Object.fromEntries(r.hosts.map((h) => [h.alias, h]));

  it('imports concrete aliases with wildcard defaults, first value winning', () => {
    expect(r.hosts.map((h) => h.alias)).toEqual(['bastion', 'gpu-a', 'gpu-b', 'gpu-c', 'gpu-d']);
    expect(byAlias['bastion']).toMatchObject({ host: 'bastion.example.net', user: 'fallback', port: 2202, keepaliveIntervalMs: 15_000, identityFile: null, agent: true });
    expect(byAlias['gpu-a']).toMatchObject({ host: 'gpu-a.lab.internal', user: 'fallback', port: 22, identityFile: '/home/ops/.ssh/id_gpu', jumpHost: 'fallback@bastion.example.net:2202' });
    expect(byAlias['gpu-a']!.notes.join(' ')).toContain('2 IdentityFile entries');
    expect(byAlias['gpu-b']!.host).toBe('gpu-b.lab.internal');
  });

  it('keeps a literal ProxyJump, Port with =, UserKnownHostsFile', () => {
    // `User fallback` before any Host is a default that wins over the later User=root (OpenSSH: first obtained value).
    expect(byAlias['gpu-c']).toMatchObject({ host: '10.0.0.7', port: 2222, user: 'fallback', jumpHost: 'ops@203.0.113.9:2200', knownHostsFile: '/home/ops/.ssh/known_hosts_lab' });
  });

  it('keeps what only OpenSSH reads (several hops, Match, ProxyCommand, CertificateFile) by keeping the alias for the openssh transport', () => {
    expect(r.skipped).toEqual([]);
    // Both hops kept, the target's user on each; the file has Match blocks, so every host keeps its alias.
    expect(byAlias['gpu-d']).toMatchObject({ jumpHost: 'fallback@a,fallback@b', configHost: 'gpu-d', openssh: ['Match blocks', '2 ProxyJump hops'] });
    expect(byAlias['gpu-d']!.notes.join(' ')).toMatch(/connects through the openssh transport with the alias "gpu-d"/);
    const plain = importSshConfig('Host box\n  HostName box.example\n  IdentityFile /k\n', opts).hosts[0]!;
    expect(plain).toMatchObject({ configHost: null, openssh: [] });
    const pc = importSshConfig('Host box\n  ProxyCommand ssh -W %h:%p jump\n  CertificateFile ~/.ssh/id-cert.pub\n  IdentityFile /k\n', opts).hosts[0]!;
    expect(pc).toMatchObject({ configHost: 'box', openssh: ['ProxyCommand', 'CertificateFile'] });
    // Written to the inventory with its file, so ssh reads the alias as the operator wrote it.
    const merged = mergeHostsIntoYaml(null, [pc], { file: 'c.yaml', home: '/h', sshConfigFile: '/home/ops/.ssh/config' });
    expect(parseConfig(merged.text, { file: 'c.yaml', home: '/h' }).hosts[0]!.ssh).toMatchObject({ configHost: 'box', configFile: '/home/ops/.ssh/config' });
    expect(parseConfig(mergeHostsIntoYaml(null, [pc], { file: 'c.yaml', home: '/h' }).text, { file: 'c.yaml', home: '/h' }).hosts[0]!.ssh.configHost).toBeUndefined();
  });

  it('reports unknown or unsupported directives without failing', () => {
    const msgs = r.issues.map((i) => `${i.line}:${i.severity}:${i.directive}`);
    expect(msgs).toContain('23:info:ForwardAgent');
    expect(msgs).toContain('24:warning:Frobnicate');
    expect(r.issues.find((i) => i.directive === 'Match')?.message).toMatch(/openssh transport only/);
    expect(r.issues.find((i) => i.directive === 'Include')?.message).toContain('not followed');
  });

  it('uses the local user when no User applies, and ssh-agent when no IdentityFile', () => {
    const only = importSshConfig('Host box\n  HostName box.example\n', opts).hosts[0]!;
    expect(only).toMatchObject({ user: 'ops', identityFile: null, agent: true });
    expect(only.notes.join(' ')).toMatch(/local user "ops".*|ssh-agent/);
  });

  it('turns aliases into valid labels and merges into a YAML config that still validates', () => {
    const weird = importSshConfig('Host my_host+1\n  HostName h\n  User u\n  IdentityFile /k\n  IdentitiesOnly yes\n', opts);
    expect(weird.hosts[0]).toMatchObject({ label: 'my_host-1', agent: false });
    const existing = '# my fleet\nhosts:\n  - label: gpu-a\n    ssh: { host: x, user: y, agent: true }\n';
    const merged = mergeHostsIntoYaml(existing, r.hosts, { file: 'config.yaml', home: '/home/ops' });
    expect(merged.added).toEqual(['bastion', 'gpu-b', 'gpu-c', 'gpu-d']);
    expect(merged.skipped).toEqual([expect.objectContaining({ alias: 'gpu-a' })]);
    expect(merged.text.startsWith('# my fleet')).toBe(true);
    const config = parseConfig(merged.text, { file: 'config.yaml', home: '/home/ops' });
    expect(config.hosts.map((h) => h.label)).toEqual(['gpu-a', 'bastion', 'gpu-b', 'gpu-c', 'gpu-d']);
    expect(config.hosts[3]!.ssh).toMatchObject({ host: '10.0.0.7', port: 2222, jumpHost: 'ops@203.0.113.9:2200' });
    expect(mergeHostsIntoYaml(null, weird.hosts, { file: 'c.yaml', home: '/h' }).added).toEqual(['my_host-1']);
  });
});

describe('importSshConfig: the file is data', () => {
  it('refuses a host whose HostName, User, ProxyJump, IdentityFile or alias is not a plain value, naming field and line; the rest import', () => {
    const text = [
      'Host ok',
      '  HostName 192.0.2.1',
      'Host h-name',
      "  HostName gpu-east.internal\\'$(id>/tmp/pwned)\\'",
      'Host h-user',
      '  HostName 192.0.2.2',
      '  User ops`id`',
      'Host h-jump',
      '  HostName 192.0.2.3',
      '  ProxyJump ops@bastion;id',
      'Host evil-hop',
      '  HostName $(id)',
      'Host h-via-alias',
      '  HostName 192.0.2.4',
      '  ProxyJump evil-hop',
      'Host h-key',
      '  HostName 192.0.2.5',
      '  IdentityFile /k\u001b[2J',
      'Host h-token',
      '  HostName %n.example',
      'Host h;id',
      '  HostName 192.0.2.6',
      '  ProxyCommand nc %h %p',
      '',
    ].join('\n');
    const r = importSshConfig(text, opts);
    expect(r.hosts.map((h) => h.alias)).toEqual(['ok']);
    const why = Object.fromEntries(r.skipped.map((s) => [s.alias, s.reason]));
    expect(why['h-name']).toMatch(/^HostName \(line 4\): ".*" is not a host name/);
    expect(why['h-user']).toMatch(/^User \(line 7\): "ops`id`" is not a login name/);
    expect(why['h-jump']).toMatch(/^ProxyJump \(line 10\): the host of jump hop "ops@bastion;id"/);
    expect(why['evil-hop']).toMatch(/HostName \(line 12\)/);
    expect(why['h-via-alias']).toMatch(/^ProxyJump \(line 15\): the host of jump hop/);
    expect(why['h-key']).toMatch(/^IdentityFile \(line 18\): .*control character/);
    expect(why['h-key']).not.toContain('\u001b');
    expect(why['h-token']).toMatch(/^HostName \(line 20\): "%n.example"/);
    expect(why['h;id']).toMatch(/need the alias, and "h;id" is not an ssh_config Host alias/);
  });

  it('HostName expands %h and %% as ssh does, and the result is held to the grammar', () => {
    const r = importSshConfig('Host gpu-1 gpu_2\n  HostName %h.lab%%\nHost box\n  HostName %h.lab\n', opts);
    expect(r.hosts.map((h) => h.host)).toEqual(['box.lab']);
    expect(r.skipped.map((s) => s.alias)).toEqual(['gpu-1', 'gpu_2']);
    expect(r.skipped[0]!.reason).toContain('"gpu-1.lab%"');
  });

  it('lists every line that makes ssh run something with the hosts it applies to; Match blocks apply to all, evaluated never', () => {
    const text = [
      'LocalCommand echo hi',
      'Host a b',
      '  HostName 192.0.2.1',
      '  ProxyCommand ssh -W %h:%p jump',
      'Host c',
      '  HostName 192.0.2.2',
      '  ProxyCommand none',
      '  PermitLocalCommand no',
      '  KnownHostsCommand /usr/local/bin/kh %H',
      '  PKCS11Provider /usr/lib/opensc-pkcs11.so',
      'Host *.nowhere',
      '  ProxyCommand never-listed',
      'Match host c exec "test -f /tmp/vpn-up"',
      '  ProxyCommand nc -X 5 -x proxy:1080 %h %p',
      '  SecurityKeyProvider internal',
      '',
    ].join('\n');
    const r = importSshConfig(text, opts);
    expect(r.commands.map((c) => [c.id, c.directive, c.line, c.aliases])).toEqual([
      ['cmd-1', 'LocalCommand', 1, ['a', 'b', 'c']],
      ['cmd-2', 'ProxyCommand', 4, ['a', 'b']],
      ['cmd-3', 'KnownHostsCommand', 9, ['c']],
      ['cmd-4', 'PKCS11Provider', 10, ['c']],
      ['cmd-5', 'Match exec', 13, ['a', 'b', 'c']],
      ['cmd-6', 'ProxyCommand', 14, ['a', 'b', 'c']],
    ]);
    expect(r.commands[4]!.text).toBe('host c exec "test -f /tmp/vpn-up"');
    expect(r.hosts.map((h) => [h.alias, h.commands])).toEqual([
      ['a', ['cmd-1', 'cmd-2', 'cmd-5', 'cmd-6']],
      ['b', ['cmd-1', 'cmd-2', 'cmd-5', 'cmd-6']],
      ['c', ['cmd-1', 'cmd-3', 'cmd-4', 'cmd-5', 'cmd-6']],
    ]);
    // A control character in a command line is shown, not sent to a terminal.
    expect(importSshConfig('Host x\n  HostName 192.0.2.9\n  ProxyCommand nc %h %p \u001b]0;owned\u0007\n', opts).commands[0]!.text).toBe('nc %h %p \\x1b]0;owned\\x07');
  });
});
