import { describe, expect, it } from 'vitest';
import { hostProblem, jumpHostProblem, parseConfig, parseJumpHop, pathProblem, userProblem } from '../../../../src-main/core/config/index.js';

// A host's SSH fields hold data, never shell: a host name or an IP literal,
// a login name, `[user@]host[:port]` hops, one-line paths. Anything else is a
// CONFIG_INVALID naming the file, line and field.

const HOSTILE_TEXT = [
  "gpu-east.internal\\'$(id>/tmp/pwned)\\'",
  'gpu`id`',
  'a;id',
  'a b',
  '-oProxyCommand=id',
  'a%h',
  'a"b',
  "a'b",
  'a\\b',
  'a\nb',
  'a$HOME',
  'a|b',
  'a&b',
  'a>b',
  'a*',
];

function config(ssh: Record<string, unknown>, extra = ''): string {
  const fields = Object.entries({ host: '10.0.0.5', user: 'ops', agent: true, ...ssh })
    .map(([k, v]) => `      ${k}: ${JSON.stringify(v)}`)
    .join('\n');
  return `hosts:\n  - label: gpu-a\n    ssh:\n${fields}\n${extra}`;
}

function issuesOf(text: string): { path: string; line: number; message: string }[] {
  try {
    parseConfig(text, { file: 'fleet.yaml', home: '/home/ops' });
    return [];
  } catch (err) {
    return (err as { code: string; details: { issues: { path: string; line: number; message: string }[] } }).details.issues;
  }
}

describe('the ssh fields of a host', () => {
  it('take host names (with "_"), IPv4 and IPv6 addresses; a bracketed IPv6 address is stored bare, as ssh wants it', () => {
    for (const host of ['gpu-east.internal', 'GPU-1', 'diag-pv_navi21_001', 'proj_gpu_1', 'a', 'gpu.example.com.', '10.0.0.5', '::1', '2001:db8::5', 'fe80::1', '::ffff:10.0.0.5']) {
      expect(hostProblem(host), host).toBeNull();
    }
    expect(parseConfig(config({ host: '[2001:db8::5]' }), { file: 'f', home: '/h' }).hosts[0]!.ssh.host).toBe('2001:db8::5');
    expect(parseConfig(config({ host: ' gpu-a ' }), { file: 'f', home: '/h' }).hosts[0]!.ssh.host).toBe('gpu-a');
  });

  it('refuse shell, ssh_config and token text in a host, a user or a hop', () => {
    for (const bad of HOSTILE_TEXT) {
      expect(hostProblem(bad), bad).not.toBeNull();
      expect(userProblem(bad), bad).not.toBeNull();
      expect(jumpHostProblem(`ops@${bad}`), bad).not.toBeNull();
      expect(jumpHostProblem(`${bad}@gpu`), bad).not.toBeNull();
    }
    for (const bad of ['', '-a', 'a..b', `${'a'.repeat(64)}.b`, '010.0.0.1', '1.2.3.256', '[gpu-a]', 'fe80::1%eth0', '[::1']) expect(hostProblem(bad), bad).not.toBeNull();
    for (const bad of ['', '-root', 'a@b', 'a:b', 'DOMAIN\\ops', 'o$', 'x'.repeat(65)]) expect(userProblem(bad), bad).not.toBeNull();
  });

  it('jump hosts: [user@]host[:port] hops, IPv6 in brackets, ports 1-65535', () => {
    expect(parseJumpHop('ops@[2001:db8::1]:2222')).toEqual({ user: 'ops', host: '2001:db8::1', port: 2222 });
    expect(parseJumpHop('bastion')).toEqual({ user: null, host: 'bastion', port: 22 });
    expect(jumpHostProblem('a,ops@b:2202,[::1]')).toBeNull();
    expect(parseJumpHop('ops@2001:db8::1')).toMatch(/in brackets/);
    expect(jumpHostProblem('ops@b:0')).toMatch(/between 1 and 65535/);
    expect(jumpHostProblem('ops@b:70000')).toMatch(/between 1 and 65535/);
    expect(jumpHostProblem('a,,b')).not.toBeNull();
    expect(jumpHostProblem('a, b')).not.toBeNull();
  });

  it('paths: one line, no control characters; spaces, quotes and % are data (the writer quotes them)', () => {
    expect(pathProblem("/Users/O'Brien/Library/Application Support/key %1")).toBeNull();
    for (const bad of ['', '/k\n', '/k\r', '/k\0', '/k\u001b[2J']) expect(pathProblem(bad)).not.toBeNull();
  });

  it('a config with one is CONFIG_INVALID naming the file, the line and the field', () => {
    const text = config({ host: "gpu-east.internal\\'$(id>/tmp/pwned)\\'" });
    expect(() => parseConfig(text, { file: 'fleet.yaml', home: '/h' })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringContaining('fleet.yaml') }));
    expect(issuesOf(text)).toEqual([{ path: 'hosts[0].ssh.host', line: 4, column: expect.any(Number), message: expect.stringMatching(/is not a host name/) }]);
    expect(issuesOf(config({ user: 'ops$(id)' }))).toEqual([expect.objectContaining({ path: 'hosts[0].ssh.user', line: 5, message: expect.stringMatching(/is not a login name/) })]);
    expect(issuesOf(config({ jumpHost: 'ops@bastion,ops@`id`' }))).toEqual([expect.objectContaining({ path: 'hosts[0].ssh.jumpHost', message: expect.stringMatching(/the host of jump hop "ops@`id`"/) })]);
    expect(issuesOf(config({ identityFile: '/k\u001b]52;c;x\u0007' }))).toEqual([expect.objectContaining({ path: 'hosts[0].ssh.identityFile', message: expect.stringMatching(/control character/) })]);
    expect(issuesOf(config({ configHost: 'gpu;id' }))).toEqual([expect.objectContaining({ path: 'hosts[0].ssh.configHost' })]);
    expect(issuesOf(config({}, '    services:\n      - { id: m, kind: vllm, remotePort: 8000, model: x, remoteHost: "127.0.0.1:22" }\n'))).toEqual([
      expect.objectContaining({ path: 'hosts[0].services[0].remoteHost' }),
    ]);
  });

  it('configs that were valid keep loading', () => {
    const text = [
      'hosts:',
      '  - label: gpu-a',
      '    ssh: { host: 203.0.113.10, port: 22, user: ops, identityFile: ~/.ssh/id_ed25519 }',
      '  - label: lab',
      '    ssh: { host: gpu-lab, user: ops, configHost: gpu-lab, configFile: "/Users/Ops Team/.ssh/config" }',
      '  - label: far',
      '    ssh: { host: 10.20.0.5, user: ops.admin, agent: true, jumpHost: "jump@bastion.example.net:2202,ops@[2001:db8::1]" }',
      '    knownHostsFile: ~/.ssh/known_hosts_lab',
      '    services: [{ id: m, kind: vllm, remotePort: 8000, model: x, remoteHost: localhost }]',
    ].join('\n');
    const c = parseConfig(text, { file: 'f', home: '/home/ops' });
    expect(c.hosts.map((h) => h.ssh.host)).toEqual(['203.0.113.10', 'gpu-lab', '10.20.0.5']);
    expect(c.hosts[2]!.services[0]!.remoteHost).toBe('localhost');
  });
});
