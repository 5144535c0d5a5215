import { describe, it, expect } from 'vitest';
import {
  ProxyConfigSchema,
  parseConfig,
  validateConfig,
  defaultConfigPath,
  expandHomePath,
  redactedView,
  ConfigSchema,
  type ConfigIssue,
} from '../../../../src-main/core/config/index.js';
import { EXAMPLE, withLine, withHosts } from './fixtures.js';

const opts = { file: 'config.yaml', home: '/home/ops' };

function invalid(text: string): { message: string; issues: ConfigIssue[]; first: ConfigIssue } {
  try {
    parseConfig(text, opts);
  } catch (err) {
    const e = err as { code: string; message: string; details: { file: string; issues: ConfigIssue[] } };
    expect(e.code).toBe('CONFIG_INVALID');
    expect(e.details.file).toBe('config.yaml');
    expect(e.details.issues.length).toBeGreaterThan(0);
    return { message: e.message, issues: e.details.issues, first: e.details.issues[0]! };
  }
  throw new Error('expected CONFIG_INVALID');
}

describe('parseConfig: valid input', () => {
  it('parses the example with defaults filled and ~ expanded', () => {
    const config = parseConfig(EXAMPLE, opts);
    expect(config).toEqual({
      hosts: [
        {
          label: 'l20-poc',
          ssh: { host: '203.0.113.10', port: 22, user: 'ops', identityFile: '/home/ops/.ssh/id_ed25519' },
          knownHostsFile: '/home/ops/.ssh/known_hosts',
          gpu: { model: 'NVIDIA L20', count: 1 },
          pricePerHourUsd: 2.641736,
          services: [
            {
              id: 'qwen',
              kind: 'vllm',
              remoteHost: '127.0.0.1',
              remotePort: 8000,
              localPort: 18000,
              model: 'Qwen3.6-27B-FP8',
              aliases: ['qwen'],
              slots: 4,
              restartCommand: 'docker compose -f /srv/vllm/compose.yaml restart vllm',
            },
          ],
        },
      ],
      telemetry: { pollIntervalMs: 1000, source: 'ssh' },
      proxy: ProxyConfigSchema.parse({ port: 0 }),
      ui: { port: 0 },
      ssh: { transport: 'auto' },
      fleet: { simulated: false },
    });
  });

  it('fills defaults for a minimal host (port 22, known_hosts, services, slots, remoteHost)', () => {
    const config = parseConfig(
      [
        'hosts:',
        '  - label: box',
        '    ssh: { host: gpu.example, user: ops, agent: true, jumpHost: "jump@bastion:2222", keepaliveIntervalMs: 15000 }',
        '  - label: box2',
        '    ssh: { host: gpu2.example, user: ops, agent: true }',
        '    services: [{ id: llama, kind: llama-server, remotePort: 8080, model: gemma }]',
      ].join('\n'),
      opts,
    );
    expect(config.hosts[0]).toEqual({
      label: 'box',
      ssh: { host: 'gpu.example', port: 22, user: 'ops', agent: true, jumpHost: 'jump@bastion:2222', keepaliveIntervalMs: 15000 },
      knownHostsFile: '/home/ops/.ssh/known_hosts',
      services: [],
    });
    expect(config.hosts[1]!.services[0]).toEqual({
      id: 'llama',
      kind: 'llama-server',
      remoteHost: '127.0.0.1',
      remotePort: 8080,
      model: 'gemma',
      aliases: [],
      slots: 4,
    });
  });

  it('an empty file (or only comments) is the empty config', () => {
    const empty = { hosts: [], telemetry: { pollIntervalMs: 1000, source: 'ssh' }, proxy: ProxyConfigSchema.parse({}), ui: { port: 0 }, ssh: { transport: 'auto' }, fleet: { simulated: false } };
    expect(parseConfig('', opts)).toEqual(empty);
    expect(parseConfig('# nothing yet\n', opts)).toEqual(empty);
    expect(ConfigSchema.parse({})).toEqual(empty);
  });

  it('expands only a leading ~/ against the injected home', () => {
    expect(expandHomePath('~/.ssh/id', '/home/x')).toBe('/home/x/.ssh/id');
    expect(expandHomePath('~', '/home/x')).toBe('/home/x');
    expect(expandHomePath('/etc/ssh/key', '/home/x')).toBe('/etc/ssh/key');
    expect(expandHomePath('~other/key', '/home/x')).toBe('~other/key');
    const config = parseConfig(withLine(4, '    knownHostsFile: /etc/ssh/ssh_known_hosts'), { file: 'c.yaml', home: '/Users/bob' });
    expect(config.hosts[0]!.ssh.identityFile).toBe('/Users/bob/.ssh/id_ed25519');
    expect(config.hosts[0]!.knownHostsFile).toBe('/etc/ssh/ssh_known_hosts');
  });

  it('defaultConfigPath is config.yaml in the data folder', () => {
    expect(defaultConfigPath('/data/gpu-console')).toBe('/data/gpu-console/config.yaml');
  });

  it('redactedView returns an equal copy that does not alias the original', () => {
    const config = parseConfig(EXAMPLE, opts);
    const view = redactedView(config);
    expect(view).toEqual(config);
    expect(view.hosts[0]).not.toBe(config.hosts[0]);
  });
});

describe('parseConfig: errors name the field and the line', () => {
  it('wrong type: port: "x"', () => {
    const { message, first } = invalid(withLine(3, '    ssh: { host: 203.0.113.10, port: "x", user: ops, identityFile: ~/.ssh/id_ed25519 }'));
    expect(first).toEqual({ path: 'hosts[0].ssh.port', line: 3, column: 38, message: 'expected number, got text "x"' });
    expect(message).toBe('config.yaml:3:38 hosts[0].ssh.port: expected number, got text "x"');
  });

  it.each([
    ['0', 0],
    ['70000', 70000],
  ])('port out of range: %s', (text) => {
    const { message, first } = invalid(withLine(3, `    ssh: { host: 203.0.113.10, port: ${text}, user: ops, identityFile: ~/.ssh/id_ed25519 }`));
    expect(first).toMatchObject({ path: 'hosts[0].ssh.port', line: 3, column: 38 });
    expect(message).toBe('config.yaml:3:38 hosts[0].ssh.port: must be between 1 and 65535');
  });

  it('remotePort out of range in block style points at its line', () => {
    const { first } = invalid(withLine(11, '        remotePort: 65536'));
    expect(first).toEqual({ path: 'hosts[0].services[0].remotePort', line: 11, column: 21, message: 'must be between 1 and 65535' });
  });

  it('unknown key at the root points at the key', () => {
    const { message, first } = invalid(withLine(18, 'proxy: { port: 0 }', 'proxyy: { port: 1 }'));
    expect(first).toEqual({ path: 'proxyy', line: 19, column: 1, message: 'unknown key "proxyy"' });
    expect(message).toBe('config.yaml:19:1 proxyy: unknown key "proxyy"');
  });

  it('unknown key in ssh points at the key', () => {
    const { first } = invalid(withLine(3, '    ssh: { host: 203.0.113.10, prot: 22, user: ops, identityFile: ~/.ssh/id_ed25519 }'));
    expect(first).toEqual({ path: 'hosts[0].ssh.prot', line: 3, column: 32, message: 'unknown key "prot"' });
  });

  it('unknown key in a service points at the key', () => {
    const { first } = invalid(withLine(15, '        slots: 4', '        gpuMemoryUtilization: 0.9'));
    expect(first).toEqual({ path: 'hosts[0].services[0].gpuMemoryUtilization', line: 16, column: 9, message: 'unknown key "gpuMemoryUtilization"' });
  });

  it('missing required field points at the parent key', () => {
    const { first } = invalid(withLine(3, '    ssh: { host: 203.0.113.10, port: 22, identityFile: ~/.ssh/id_ed25519 }'));
    expect(first).toEqual({ path: 'hosts[0].ssh.user', line: 3, column: 5, message: 'required' });
  });

  it('missing model in a block-style service points at the list item', () => {
    const { first } = invalid(withLine(13));
    expect(first).toEqual({ path: 'hosts[0].services[0].model', line: 8, column: 9, message: 'required' });
  });

  it('ssh without identityFile or agent', () => {
    const { first } = invalid(withLine(3, '    ssh: { host: 203.0.113.10, user: ops, agent: false }'));
    expect(first).toMatchObject({ path: 'hosts[0].ssh', line: 3, column: 10, message: 'needs identityFile or agent: true (or both), or a configHost whose OpenSSH config names them' });
  });

  it('duplicate host label (case-insensitive) points at the duplicate', () => {
    const { message, first } = invalid(
      withHosts('  - label: L20-POC', '    ssh: { host: 203.0.113.11, user: ops, agent: true }'),
    );
    expect(first).toEqual({ path: 'hosts[1].label', line: 17, column: 12, message: 'duplicate host label "L20-POC" (first at hosts[0].label)' });
    expect(message).toMatch(/^config\.yaml:17:12 hosts\[1\]\.label: duplicate host label/);
  });

  it('a host reading Prometheus without a URL anywhere points at its source; a wrong GPU tool is named', () => {
    const { first } = invalid(withHosts('  - label: prom-host', '    ssh: { host: 203.0.113.11, user: ops, agent: true }', '    telemetry: { source: prometheus }'));
    expect(first).toMatchObject({ path: 'hosts[1].telemetry.source', message: expect.stringContaining('source: prometheus needs a url') });
    const tool = invalid(withHosts('  - label: amd-host', '    ssh: { host: 203.0.113.12, user: ops, agent: true }', '    telemetry: { gpu: radeon-smi }'));
    expect(tool.first).toMatchObject({ path: 'hosts[1].telemetry.gpu', message: 'must be one of: auto, nvidia-smi, amd-smi, rocm-smi, amd-sysfs, none' });
  });

  it('a service restartCommand beside lifecycle.systemdUnit is refused (one restart, not a silent winner)', () => {
    const text = withHosts(
      '  - label: strix',
      '    ssh: { host: 203.0.113.12, user: ops, agent: true }',
      '    services:',
      '      - { id: coder, kind: llama-server, remotePort: 8080, model: coder-model, restartCommand: "sudo systemctl restart llama", lifecycle: { systemdUnit: llama-server.service } }',
    );
    const { first } = invalid(text);
    expect(first).toMatchObject({ path: 'hosts[1].services[0].lifecycle.systemdUnit', message: expect.stringContaining('restartCommand (hosts[1].services[0].restartCommand) is given too') });
  });

  it('a host may name its own Prometheus and GPU tool', () => {
    const config = parseConfig(
      withHosts('  - label: strix', '    ssh: { host: 203.0.113.12, user: ops, agent: true }', '    telemetry: { gpu: amd-sysfs, source: prometheus, prometheus: { url: "http://127.0.0.1:9090" } }'),
      opts,
    );
    expect(config.hosts[1]!.telemetry).toEqual({ gpu: 'amd-sysfs', source: 'prometheus', prometheus: { url: 'http://127.0.0.1:9090' } });
  });

  it('duplicate alias across hosts points at the alias', () => {
    const { first } = invalid(
      withHosts(
        '  - label: h100',
        '    ssh: { host: 203.0.113.12, user: ops, agent: true }',
        '    services:',
        '      - id: big',
        '        kind: vllm',
        '        remotePort: 8000',
        '        model: Llama-70B',
        '        aliases: [llama, QWEN]',
      ),
    );
    expect(first).toEqual({
      path: 'hosts[1].services[0].aliases[1]',
      line: 24,
      column: 26,
      message:
        'model name "QWEN" is already served by l20-poc/qwen as model "Qwen3.6-27B-FP8" (hosts[0].services[0].aliases[0]); a second service may share a name only as a replica of the same model',
    });
  });

  it('duplicate localPort and duplicate service id', () => {
    const { issues } = invalid(
      withLine(16, '        restartCommand: x', '      - id: QWEN', '        kind: vllm', '        remotePort: 8001', '        localPort: 18000', '        model: other'),
    );
    expect(issues).toEqual([
      { path: 'hosts[0].services[1].id', line: 17, column: 13, message: 'duplicate service id "QWEN" on host l20-poc (first at hosts[0].services[0].id)' },
      { path: 'hosts[0].services[1].localPort', line: 20, column: 20, message: 'port 18000 is already used by hosts[0].services[0].localPort' },
    ]);
  });

  it('duplicate YAML key', () => {
    const { message, first } = invalid(withLine(15, '        slots: 4', '        slots: 8'));
    expect(first).toEqual({ path: 'hosts[0].services[0].slots', line: 16, column: 9, message: 'duplicate key "slots"' });
    expect(message).toBe('config.yaml:16:9 hosts[0].services[0].slots: duplicate key "slots"');
  });

  it('bad YAML syntax reports the line', () => {
    const { message, first } = invalid(withLine(13, '        model: Qwen: 27B'));
    expect(first).toMatchObject({ path: '', line: 13 });
    expect(message).toMatch(/^config\.yaml:13:\d+ YAML syntax: /);
  });

  it('an unclosed flow list is reported where the parser notices it (the next line)', () => {
    const { first } = invalid(withLine(14, '        aliases: [qwen'));
    expect(first.line).toBe(15);
  });

  it('bad indentation reports the line', () => {
    const { first } = invalid(withLine(5, '   gpu: { model: NVIDIA L20, count: 1 }'));
    expect(first.line).toBe(5);
  });

  it('reports every issue in details, in file order', () => {
    const { issues } = invalid(
      withLine(3, '    ssh: { host: 203.0.113.10, port: 0, user: ops, agent: true }').replace('slots: 4', 'slots: 2000').replace('{ pollIntervalMs: 1000 }', '{ pollIntervalMs: 10 }'),
    );
    expect(issues.map((i) => [i.path, i.line])).toEqual([
      ['hosts[0].ssh.port', 3],
      ['hosts[0].services[0].slots', 15],
      ['telemetry.pollIntervalMs', 17],
    ]);
    expect(issues.map((i) => i.message)).toEqual([
      'must be between 1 and 65535',
      'must be between 1 and 1024',
      'must be between 250 and 60000',
    ]);
  });

  it.each([
    ['label pattern', withLine(2, '  - label: -bad'), 'hosts[0].label', 2],
    ['service kind', withLine(9, '        kind: ollama'), 'hosts[0].services[0].kind', 9],
    ['negative price', withLine(6, '    pricePerHourUsd: -1'), 'hosts[0].pricePerHourUsd', 6],
    ['infinite price', withLine(6, '    pricePerHourUsd: .inf'), 'hosts[0].pricePerHourUsd', 6],
    ['gpu count 0', withLine(5, '    gpu: { model: NVIDIA L20, count: 0 }'), 'hosts[0].gpu.count', 5],
    ['fractional slots', withLine(15, '        slots: 1.5'), 'hosts[0].services[0].slots', 15],
    ['proxy port', withLine(18, 'proxy: { port: 65536 }'), 'proxy.port', 18],
    ['hosts not a list', 'hosts: {}\n', 'hosts', 1],
    ['root is a list', '- a\n- b\n', '', 1],
    ['jump host', withLine(3, '    ssh: { host: h, user: ops, agent: true, jumpHost: "a b" }'), 'hosts[0].ssh.jumpHost', 3],
    ['keepalive', withLine(3, '    ssh: { host: h, user: ops, agent: true, keepaliveIntervalMs: 10 }'), 'hosts[0].ssh.keepaliveIntervalMs', 3],
  ])('%s', (_name, text, path, line) => {
    const { first } = invalid(text);
    expect(first.path).toBe(path);
    expect(first.line).toBe(line);
  });

  it('validateConfig checks configs built in code, without line numbers', () => {
    expect(() => validateConfig({ hosts: [{ label: 'x', ssh: { host: 'h', user: 'u' } }] }, { home: '/h' })).toThrow(
      /<in-memory config> hosts\[0\]\.ssh: needs identityFile or agent/,
    );
    const ok = validateConfig({ hosts: [{ label: 'x', ssh: { host: 'h', user: 'u', identityFile: '~/k' } }] }, { home: '/h' });
    expect(ok.hosts[0]!.ssh.identityFile).toBe('/h/k');
  });
});
