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
