import { describe, expect, it } from 'vitest';
import { HostSecuritySchema, InventoryHostSchema, type Check } from '../../../../src-preload/contract/index.js';
import { AppError, FakeClock, offPremError } from '../../../../src-main/core/base/index.js';
import { HostConfigSchema, type HostConfig } from '../../../../src-main/core/config/index.js';
import { SecretsErrorCode } from '../../../../src-main/core/secrets/index.js';
import type { ExecResult } from '../../../../src-main/core/ssh/index.js';
import { AMD_SYSFS_COMMAND } from '../../../../src-main/core/telemetry/index.js';
import {
  parseSocketAddress,
  parseSshdConfig,
  parseSsListeners,
  redactServiceConfig,
  runLiveChecks,
  type LiveCheckDeps,
  type LiveCheckResult,
  type LiveHttpResponse,
  type LiveUpstream,
} from '../../../../src-main/core/report/live-checks.js';

// Live checks against fake hosts: every command and HTTP answer is scripted,
// time is a FakeClock (deadlines fire only when the test advances it).

const KEY = 'sk-live-PLANTED-7f3a9c1e5b2d4068';
const LLAMA_KEY = 'llama-PLANTED-key-0c4e8a2f6b1d';

const SMI = 'nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader,nounits';

const ok = (stdout: string): ExecResult => ({ exitCode: 0, signal: null, stdout, stderr: '', truncated: false });
const failed = (exitCode: number, stderr: string, stdout = ''): ExecResult => ({ exitCode, signal: null, stdout, stderr, truncated: false });

const SS_GOOD = [
  'LISTEN 0      4096   127.0.0.53%lo:53        0.0.0.0:*',
  'LISTEN 0      128          0.0.0.0:22        0.0.0.0:*',
  'LISTEN 0      2048       127.0.0.1:8000      0.0.0.0:*',
  'LISTEN 0      512        127.0.0.1:8080      0.0.0.0:*',
  'LISTEN 0      128             [::]:22           [::]:*',
].join('\n');

const SSHD_ROOT = ['port 22', 'usepam yes', 'permitrootlogin without-password', 'passwordauthentication no', 'kbdinteractiveauthentication no', 'x11forwarding yes'].join('\n');

function host(over: Partial<Record<string, unknown>> = {}): HostConfig {
  return HostConfigSchema.parse({
    label: 'gpu-a',
    ssh: { host: '10.0.0.5', user: 'ops', identityFile: '/keys/id' },
    pricePerHourUsd: 1.2,
    services: [
      {
        id: 'qwen',
        kind: 'vllm',
        remotePort: 8000,
        model: 'Qwen3-32B',
        aliases: ['qwen'],
        restartCommand: `sudo systemctl restart vllm --api-key ${KEY}`,
        lifecycle: { routerBaseUrl: 'http://admin:hunter2@127.0.0.1:9000/admin' },
      },
      { id: 'gemma', kind: 'llama-server', remotePort: 8080, model: 'gemma-3-12b' },
    ],
    ...over,
  });
}

type Handler = (headers: Record<string, string>) => LiveHttpResponse | Promise<LiveHttpResponse>;

/** An upstream that enforces its key the way vLLM (on /v1/*) and llama-server (not on /health, /v1/models) do. */
function upstream(kind: 'vllm' | 'llama-server', key: string | null, over: Record<string, Handler> = {}): Record<string, Handler> {
  const authed = (body: unknown): Handler => (h) =>
    key === null || h.authorization === `Bearer ${key}` ? { status: 200, text: JSON.stringify(body) } : { status: 401, text: '{"error":"Unauthorized"}' };
  const open = (body: unknown): Handler => () => ({ status: 200, text: JSON.stringify(body) });
  if (kind === 'vllm') {
    return {
      '/health': () => ({ status: 200, text: '' }),
      '/version': open({ version: '0.11.0' }),
      '/v1/models': authed({ object: 'list', data: [{ id: 'Qwen3-32B', object: 'model', max_model_len: 32768 }] }),
      ...over,
    };
  }
  return {
    '/health': open({ status: 'ok' }),
    '/props': authed({ build_info: 'b5600-3ac67535', default_generation_settings: { n_ctx: 16384 }, total_slots: 2 }),
    '/v1/models': open({ object: 'list', data: [{ id: 'gemma-3-12b', object: 'model', owned_by: 'llamacpp' }] }),
    ...over,
  };
}

interface Fake {
  deps: LiveCheckDeps;
  clock: FakeClock;
  commands: string[];
  requests: { url: string; headers: Record<string, string> }[];
  signals: AbortSignal[];
}

function fake(options: {
  exec?: Record<string, ExecResult | ((signal?: AbortSignal) => Promise<ExecResult>)>;
  services?: Record<string, Record<string, Handler>>;
  keys?: Record<string, string | null | Error>;
  tunnelsDown?: string[];
  /** Every service's client refused by the on-prem guard (ONPREM_REFUSED where it is made). */
  offPrem?: boolean;
  connection?: string;
  fingerprint?: string | null;
}): Fake {
  const clock = new FakeClock();
  const commands: string[] = [];
  const requests: { url: string; headers: Record<string, string> }[] = [];
  const signals: AbortSignal[] = [];
  const exec: Record<string, ExecResult | ((signal?: AbortSignal) => Promise<ExecResult>)> = {
    [SMI]: ok('0, NVIDIA L40S, 46068, 550.90\n1, NVIDIA L40S, 46068, 550.90\n'),
    'ss -ltnH': ok(SS_GOOD + '\n'),
    'sshd -T': failed(1, 'sshd: no hostkeys available -- exiting.\n'),
    'sudo -n sshd -T': ok(SSHD_ROOT + '\n'),
    ...options.exec,
  };
  const services = options.services ?? { qwen: upstream('vllm', KEY), gemma: upstream('llama-server', LLAMA_KEY) };
  const keys = options.keys ?? { qwen: KEY, gemma: LLAMA_KEY };
  // A service's upstream client, as far as the checks use it: every request recorded, answered by the handlers.
  const clientOf = (id: string): LiveUpstream => ({
    target: `${id} (SSH tunnel)`,
    request: async ({ path, headers = {}, signal }) => {
      requests.push({ url: `http://${id}.tunnel.test:1${path}`, headers });
      if (signal) signals.push(signal);
      const handler = services[id]?.[path];
      const answer = handler ? await handler(headers) : { status: 404, text: '{"detail":"Not Found"}' };
      return { ...answer, headers: {}, truncated: false, retried: false };
    },
  });
  const deps: LiveCheckDeps = {
    exec: async (command, opts) => {
      commands.push(command);
      if (opts.signal) signals.push(opts.signal);
      const answer = exec[command];
      if (answer === undefined) return failed(127, `bash: line 1: ${command.split(' ')[0]}: command not found\n`);
      return typeof answer === 'function' ? answer(opts.signal) : answer;
    },
    upstream: (id) => {
      if (options.tunnelsDown?.includes(id)) throw new AppError('FLEET_TUNNEL_NOT_READY', `the tunnel to gpu-a/${id} is not open (SSH connected)`);
      if (options.offPrem) throw offPremError(`http://${id}.example:8000`, 'probe');
      return clientOf(id);
    },
    apiKey: async (id) => {
      const k = keys[id];
      if (k instanceof Error) throw k;
      return k ?? null;
    },
    hostKeyFingerprint: options.fingerprint === undefined ? 'SHA256:abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG' : options.fingerprint,
    connection: options.connection ?? 'connected',
    clock,
  };
  return { deps, clock, commands, requests, signals };
}

const byId = (r: LiveCheckResult, id: string): Check => {
  const c = r.security.checks.find((x) => x.id === id);
  if (!c) throw new Error(`no check ${id} in ${r.security.checks.map((x) => x.id).join(', ')}`);
  return c;
};

/** Lets every pending promise chain run, then moves the fake clock. */
async function advanceAfterSettling(clock: FakeClock, ms: number): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  clock.advance(ms);
}

const never = (signal?: AbortSignal) =>
  new Promise<ExecResult>((_, reject) => signal?.addEventListener('abort', () => reject(new AppError('SSH_CANCELLED', 'exec was cancelled'))));

describe('runLiveChecks on a healthy host', () => {
  it('passes every check, fills the inventory and matches the contract', async () => {
    const f = fake({});
    const r = await runLiveChecks(host(), f.deps);
    expect(InventoryHostSchema.parse(r.inventory)).toEqual(r.inventory);
    expect(HostSecuritySchema.parse(r.security)).toEqual(r.security);
    expect(r.security.checks.map((c) => [c.id, c.verdict])).toEqual([
      ['ssh.host-key', 'pass'],
      ['gpu.visible', 'pass'],
      ['sshd.password-auth', 'pass'],
      ['sshd.root-login', 'pass'],
      ['port.loopback.qwen', 'pass'],
      ['api.health.qwen', 'pass'],
      ['api.auth.qwen', 'pass'],
      ['port.loopback.gemma', 'pass'],
      ['api.health.gemma', 'pass'],
      ['api.auth.gemma', 'pass'],
    ]);
    expect(r.security.checks.every((c) => c.at === f.clock.now())).toBe(true);
    expect(r.inventory).toMatchObject({
      label: 'gpu-a',
      address: 'ops@10.0.0.5:22',
      jumpHost: null,
      connection: 'connected',
      liveError: null,
      pricePerHourUsd: 1.2,
      gpus: [
        { index: 0, name: 'NVIDIA L40S', memoryTotalMiB: 46068, driverVersion: '550.90' },
        { index: 1, name: 'NVIDIA L40S', memoryTotalMiB: 46068, driverVersion: '550.90' },
      ],
    });
    const [qwen, gemma] = r.inventory.services;
    expect(qwen).toMatchObject({ serverVersion: '0.11.0', servedModels: [{ id: 'Qwen3-32B', maxContext: 32768 }], health: 'ok' });
    expect(gemma).toMatchObject({ serverVersion: 'b5600-3ac67535', servedModels: [{ id: 'gemma-3-12b', maxContext: 16384 }], health: 'ok' });
    expect(byId(r, 'sshd.root-login').evidence).toBe('sudo -n sshd -T: permitrootlogin without-password (root only with a key, never a password)');
    expect(byId(r, 'sshd.password-auth').evidence).toBe('sudo -n sshd -T: passwordauthentication no, kbdinteractiveauthentication no');
    expect(byId(r, 'port.loopback.qwen').evidence).toContain('ss -ltnH: port 8000 bound to 127.0.0.1 only');
    expect(byId(r, 'gpu.visible').evidence).toBe('nvidia-smi lists 2 GPUs: 0: NVIDIA L40S (46068 MiB), 1: NVIDIA L40S (46068 MiB); driver 550.90');
    expect(byId(r, 'ssh.host-key').evidence).toContain('SHA256:abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG');
    expect(f.commands).toEqual(expect.arrayContaining([SMI, 'ss -ltnH', 'sshd -T', 'sudo -n sshd -T']));
    expect(f.clock.pending).toBe(0); // every deadline timer was disposed
  });

  it('checks auth on /v1/models for vLLM and on /props for llama-server (whose /v1/models is public)', async () => {
    const f = fake({});
    const r = await runLiveChecks(host(), f.deps);
    expect(byId(r, 'api.auth.qwen').evidence).toBe('GET /v1/models without a key → 401; with the configured key → 200');
    expect(byId(r, 'api.auth.gemma').evidence).toBe('GET /props without a key → 401; with the configured key → 200');
    const health = f.requests.filter((q) => q.url.endsWith('/health'));
    expect(health.every((q) => q.headers.authorization === undefined)).toBe(true);
  });

  it('never puts an API key in the result, though it was sent and planted in the config', async () => {
    const f = fake({
      services: {
        // A server that echoes what it was sent into its error body.
        qwen: upstream('vllm', KEY, { '/health': (h) => ({ status: 500, text: `bad request, got authorization=${h.authorization ?? 'none'} key ${KEY}` }) }),
        gemma: upstream('llama-server', LLAMA_KEY),
      },
    });
    const r = await runLiveChecks(host(), f.deps);
    expect(f.requests.some((q) => q.headers.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(f.requests.some((q) => q.headers.authorization === `Bearer ${LLAMA_KEY}`)).toBe(true);
    const json = JSON.stringify(r);
    expect(json).not.toContain(KEY);
    expect(json).not.toContain(LLAMA_KEY);
    expect(json).not.toContain('hunter2');
    expect(byId(r, 'api.health.qwen').verdict).toBe('fail');
    expect(r.inventory.services[0]!.config).toMatchObject({
      restartCommand: 'sudo systemctl restart vllm --api-key [redacted]',
      lifecycle: { routerBaseUrl: 'http://[redacted]@127.0.0.1:9000/admin' },
    });
  });
});

describe('gpu.visible', () => {
  it('an AMD host (no nvidia-smi): the amdgpu sysfs files list its GPU, with VRAM and GTT', async () => {
    const sysfs = 'card card1\nmem_info_vram_used 402653184\nmem_info_vram_total 536870912\nmem_info_gtt_used 1048576\nmem_info_gtt_total 66571993088\ngpu_busy_percent 3\nproduct_name AMD Radeon 8060S\n';
    const f = fake({ exec: { [SMI]: failed(127, 'bash: line 1: nvidia-smi: command not found\n'), [AMD_SYSFS_COMMAND]: { exitCode: 0, signal: null, stdout: sysfs, stderr: '', truncated: false } } });
    const r = await runLiveChecks(host(), f.deps);
    expect(byId(r, 'gpu.visible')).toMatchObject({ verdict: 'pass', evidence: 'amdgpu sysfs lists 1 GPU: 1: AMD Radeon 8060S (VRAM 512 MiB, GTT 63488 MiB)' });
    expect(r.inventory.gpus).toEqual([{ index: 1, name: 'AMD Radeon 8060S', memoryTotalMiB: 512, driverVersion: null }]);
  });

  it('is unverified without nvidia-smi (exit 127) and without amdgpu sysfs', async () => {
    const f = fake({ exec: { [SMI]: failed(127, 'bash: line 1: nvidia-smi: command not found\n') } });
    const r = await runLiveChecks(host(), f.deps);
    expect(byId(r, 'gpu.visible')).toMatchObject({ verdict: 'unverified', at: null });
    expect(byId(r, 'gpu.visible').evidence).toMatch(/^nvidia-smi not found .*; no amdgpu sysfs GPU either/);
    expect(r.inventory.gpus).toEqual([]);
    expect(r.inventory.liveError).toBeNull();
  });

  it('fails when nvidia-smi cannot reach the driver, or lists no GPU', async () => {
    const noDriver = await runLiveChecks(
      host(),
      fake({ exec: { [SMI]: failed(9, '', "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n") } }).deps,
    );
    expect(byId(noDriver, 'gpu.visible')).toMatchObject({ verdict: 'fail' });
    expect(byId(noDriver, 'gpu.visible').evidence).toContain('exit 9');
    expect(byId(noDriver, 'gpu.visible').evidence).toContain("couldn't communicate");
    const none = await runLiveChecks(host(), fake({ exec: { [SMI]: ok('') } }).deps);
    expect(byId(none, 'gpu.visible')).toMatchObject({ verdict: 'fail', evidence: 'nvidia-smi listed no GPU: (no output)' });
  });

  it('reads a real H200 answer (driver 580, Ubuntu 24.04)', async () => {
    const r = await runLiveChecks(host(), fake({ exec: { [SMI]: ok('0, NVIDIA H200, 143771, 580.159.04\n') } }).deps);
    expect(r.inventory.gpus).toEqual([{ index: 0, name: 'NVIDIA H200', memoryTotalMiB: 143771, driverVersion: '580.159.04' }]);
    expect(byId(r, 'gpu.visible').evidence).toBe('nvidia-smi lists 1 GPU: 0: NVIDIA H200 (143771 MiB); driver 580.159.04');
  });

  it('keeps [N/A] memory and driver as null', async () => {
    const r = await runLiveChecks(host(), fake({ exec: { [SMI]: ok('0, NVIDIA GH200 480GB, [N/A], [N/A]\n') } }).deps);
    expect(r.inventory.gpus).toEqual([{ index: 0, name: 'NVIDIA GH200 480GB', memoryTotalMiB: null, driverVersion: null }]);
    expect(byId(r, 'gpu.visible').verdict).toBe('pass');
  });
});

describe('ss output', () => {
  it('reads every address form ss prints', () => {
    const cases: [string, { address: string; iface: string | null; port: number } | null][] = [
      ['0.0.0.0:8000', { address: '0.0.0.0', iface: null, port: 8000 }],
      ['127.0.0.1:8000', { address: '127.0.0.1', iface: null, port: 8000 }],
      ['127.0.0.53%lo:53', { address: '127.0.0.53', iface: 'lo', port: 53 }],
      ['[::1]:8000', { address: '::1', iface: null, port: 8000 }],
      ['[::]:22', { address: '::', iface: null, port: 22 }],
      ['*:8000', { address: '*', iface: null, port: 8000 }],
      ['[fe80::1]%eth0:8000', { address: 'fe80::1', iface: 'eth0', port: 8000 }],
      ['[fe80::1%eth0]:8000', { address: 'fe80::1', iface: 'eth0', port: 8000 }],
      ['[::ffff:127.0.0.1]:8000', { address: '::ffff:127.0.0.1', iface: null, port: 8000 }],
      [':::22', { address: '::', iface: null, port: 22 }],
      ['::1:8000', { address: '::1', iface: null, port: 8000 }],
      ['0.0.0.0:*', null],
      ['[::]:*', null],
      ['localhost:ssh', null],
      ['users:(("sshd",pid=801,fd=3))', null],
      ['1.2.3.4:99999', null],
    ];
    for (const [token, want] of cases) expect(parseSocketAddress(token), token).toEqual(want);
  });

  it('skips the header and classifies each listener', () => {
    const text = [
      'State  Recv-Q Send-Q Local Address:Port  Peer Address:PortProcess',
      'LISTEN 0      4096   127.0.0.53%lo:53         0.0.0.0:*          ',
      'LISTEN 0      2048         0.0.0.0:8000       0.0.0.0:*    users:(("python3",pid=4242,fd=17))',
      'LISTEN 0      2048        10.0.0.5:8001       0.0.0.0:*          ',
      'LISTEN 0      4096               *:8002             *:*          ',
      'LISTEN 0      4096      0.0.0.0%lo:8003       0.0.0.0:*          ',
      'LISTEN 0      4096  [::ffff:127.0.0.1]:8004      [::]:*          ',
      '',
    ].join('\n');
    const got = parseSsListeners(text).map((l) => [l.port, l.address, l.scope]);
    expect(got).toEqual([
      [53, '127.0.0.53', 'loopback'],
      [8000, '0.0.0.0', 'wildcard'],
      [8001, '10.0.0.5', 'other'],
      [8002, '*', 'wildcard'],
      [8003, '0.0.0.0', 'loopback'],
      [8004, '::ffff:127.0.0.1', 'loopback'],
    ]);
    expect(parseSsListeners(text)[1]!.line).toBe('LISTEN 0 2048 0.0.0.0:8000 0.0.0.0:* users:(("python3",pid=4242,fd=17))');
  });
});

describe('port.loopback', () => {
  const withSs = (text: string) => fake({ exec: { 'ss -ltnH': ok(text) } });

  it('fails on 0.0.0.0, *, [::] or a LAN address, quoting the line', async () => {
    for (const [line, quoted] of [
      ['LISTEN 0 2048 0.0.0.0:8000 0.0.0.0:*', '"LISTEN 0 2048 0.0.0.0:8000 0.0.0.0:*"'],
      ['LISTEN 0 4096 *:8000 *:*', '"LISTEN 0 4096 *:8000 *:*"'],
      ['LISTEN 0 4096 [::]:8000 [::]:*', '"LISTEN 0 4096 [::]:8000 [::]:*"'],
      ['LISTEN 0 4096 192.168.1.20:8000 0.0.0.0:*', '"LISTEN 0 4096 192.168.1.20:8000 0.0.0.0:*"'],
    ]) {
      const r = await runLiveChecks(host(), withSs(`LISTEN 0 2048 127.0.0.1:8000 0.0.0.0:*\n${line}\n`).deps);
      const c = byId(r, 'port.loopback.qwen');
      expect(c.verdict, line).toBe('fail');
      expect(c.evidence).toContain('port 8000 is reachable beyond loopback');
      expect(c.evidence).toContain(quoted);
      expect(c.evidence).not.toContain('127.0.0.1:8000');
    }
  });

  it('passes on 127.0.0.1 and [::1] together, and fails when nothing listens', async () => {
    const r = await runLiveChecks(host(), withSs('LISTEN 0 2048 127.0.0.1:8000 0.0.0.0:*\nLISTEN 0 2048 [::1]:8000 [::]:*\n').deps);
    expect(byId(r, 'port.loopback.qwen')).toMatchObject({ verdict: 'pass' });
    expect(byId(r, 'port.loopback.qwen').evidence).toContain('bound to 127.0.0.1, ::1 only');
    expect(byId(r, 'port.loopback.gemma')).toMatchObject({ verdict: 'fail', evidence: 'ss -ltnH: nothing listens on TCP port 8080' });
  });

  it('falls back to ss -ltn where -H is unknown, and is unverified without ss', async () => {
    const old = fake({
      exec: {
        'ss -ltnH': failed(255, "ss: invalid option -- 'H'\nUsage: ss [ OPTIONS ]\n"),
        'ss -ltn': ok('State Recv-Q Send-Q Local Address:Port Peer Address:Port\nLISTEN 0 128 127.0.0.1:8000 *:*\nLISTEN 0 128 :::8080 :::*\n'),
      },
    });
    const r = await runLiveChecks(host(), old.deps);
    expect(old.commands).toEqual(expect.arrayContaining(['ss -ltnH', 'ss -ltn']));
    expect(byId(r, 'port.loopback.qwen')).toMatchObject({ verdict: 'pass' });
    expect(byId(r, 'port.loopback.qwen').evidence).toMatch(/^ss -ltn: /);
    expect(byId(r, 'port.loopback.gemma').verdict).toBe('fail');

    const none = fake({ exec: { 'ss -ltnH': failed(127, 'bash: line 1: ss: command not found\n') } });
    const r2 = await runLiveChecks(host(), none.deps);
    expect(none.commands).not.toContain('ss -ltn');
    expect(byId(r2, 'port.loopback.qwen')).toMatchObject({ verdict: 'unverified', at: null });
    expect(byId(r2, 'port.loopback.qwen').evidence).toMatch(/^ss unavailable: ss -ltnH: bash: line 1: ss: command not found \(exit 127\)/);
  });

  it('is unverified for a service that runs on another machine than the SSH host', async () => {
    const h = host({ services: [{ id: 'far', kind: 'vllm', remoteHost: '10.0.0.9', remotePort: 8000, model: 'm' }] });
    const r = await runLiveChecks(h, fake({ keys: { far: null }, services: { far: upstream('vllm', null) } }).deps);
    expect(byId(r, 'port.loopback.far')).toMatchObject({ verdict: 'unverified' });
    expect(byId(r, 'port.loopback.far').evidence).toContain('runs on 10.0.0.9');
  });
});

describe('sshd checks', () => {
  const sshd = (exec: Record<string, ExecResult>) => fake({ exec: { 'sshd -T': failed(1, 'sshd: no hostkeys available -- exiting.\n'), ...exec } });

  it('uses plain sshd -T where it works (root) and does not try sudo', async () => {
    const f = fake({ exec: { 'sshd -T': ok('passwordauthentication no\npermitrootlogin no\n') } });
    const r = await runLiveChecks(host(), f.deps);
    expect(f.commands).not.toContain('sudo -n sshd -T');
    expect(byId(r, 'sshd.password-auth')).toMatchObject({ verdict: 'pass', evidence: 'sshd -T: passwordauthentication no' });
    expect(byId(r, 'sshd.root-login')).toMatchObject({ verdict: 'pass', evidence: 'sshd -T: permitrootlogin no (root cannot log in over SSH)' });
  });

  it('fails on password logins, root password logins, and PAM keyboard-interactive', async () => {
    const yes = await runLiveChecks(host(), sshd({ 'sudo -n sshd -T': ok('usepam yes\npermitrootlogin yes\npasswordauthentication yes\n') }).deps);
    expect(byId(yes, 'sshd.password-auth')).toMatchObject({ verdict: 'fail', evidence: 'sudo -n sshd -T: passwordauthentication yes' });
    expect(byId(yes, 'sshd.root-login')).toMatchObject({ verdict: 'fail', evidence: 'sudo -n sshd -T: permitrootlogin yes (root may log in with a password)' });
    const pam = await runLiveChecks(
      host(),
      sshd({ 'sudo -n sshd -T': ok('usepam yes\npermitrootlogin prohibit-password\npasswordauthentication no\nkbdinteractiveauthentication yes\n') }).deps,
    );
    expect(byId(pam, 'sshd.password-auth').verdict).toBe('fail');
    expect(byId(pam, 'sshd.password-auth').evidence).toContain('PAM can still ask for a password');
    expect(byId(pam, 'sshd.root-login')).toMatchObject({ verdict: 'pass', evidence: 'sudo -n sshd -T: permitrootlogin prohibit-password (root only with a key, never a password)' });
  });

  it('is unverified when neither sshd -T nor sudo -n is permitted, with both answers quoted', async () => {
    const r = await runLiveChecks(host(), sshd({ 'sudo -n sshd -T': failed(1, 'sudo: a password is required\n') }).deps);
    for (const id of ['sshd.password-auth', 'sshd.root-login']) {
      const c = byId(r, id);
      expect(c).toMatchObject({ verdict: 'unverified', at: null });
      expect(c.evidence).toBe(
        'sshd -T not permitted for this user (sshd -T: sshd: no hostkeys available -- exiting. (exit 1); sudo -n sshd -T: sudo: a password is required (exit 1))',
      );
    }
    const missing = await runLiveChecks(host(), fake({ exec: { 'sshd -T': failed(127, 'bash: sshd: command not found\n'), 'sudo -n sshd -T': failed(1, 'sudo: sshd: command not found\n') } }).deps);
    expect(byId(missing, 'sshd.root-login').evidence).toMatch(/^sshd -T not permitted for this user/);
  });

  it('reads sshd -T lines case-insensitively and keeps the first of repeated keywords', () => {
    const cfg = parseSshdConfig('ListenAddress [::]:22\nlistenaddress 0.0.0.0:22\nPermitRootLogin Without-Password\n  \n');
    expect(cfg.get('listenaddress')).toBe('[::]:22');
    expect(cfg.get('permitrootlogin')).toBe('without-password');
  });
});

describe('API checks', () => {
  it('health: non-200 and a dead upstream fail; a tunnel that is down leaves health and auth unverified', async () => {
    const f = fake({
      services: {
        qwen: upstream('vllm', KEY, { '/health': () => ({ status: 503, text: 'Service Unavailable' }) }),
        gemma: upstream('llama-server', LLAMA_KEY, {
          '/health': () => Promise.reject(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' })),
        }),
      },
    });
    const r = await runLiveChecks(host(), f.deps);
    expect(byId(r, 'api.health.qwen')).toMatchObject({ verdict: 'fail', evidence: 'GET /health → 503: Service Unavailable' });
    expect(r.inventory.services[0]!.health).toBe('down');
    expect(byId(r, 'api.health.gemma')).toMatchObject({ verdict: 'fail', evidence: 'GET /health: no answer through the tunnel (UND_ERR_SOCKET: other side closed)' });

    // The console's tunnel answers for a host that refuses the channel: that is no answer from the service.
    const refusedBody = JSON.stringify({ error: { code: 'SSH_FORWARD_FAILED', message: 'the host refused a tunnel to 127.0.0.1:8000', type: 'tunnel_error' } });
    const refused = await runLiveChecks(host(), fake({ services: { qwen: new Proxy({}, { get: () => () => ({ status: 503, text: refusedBody }) }), gemma: upstream('llama-server', LLAMA_KEY) } }).deps);
    expect(byId(refused, 'api.health.qwen')).toMatchObject({
      verdict: 'fail',
      evidence: 'GET /health: no answer through the tunnel (SSH_FORWARD_FAILED: the host refused a tunnel to 127.0.0.1:8000)',
    });
    expect(byId(refused, 'api.auth.qwen')).toMatchObject({ verdict: 'unverified', evidence: 'GET /v1/models without a key: SSH_FORWARD_FAILED: the host refused a tunnel to 127.0.0.1:8000' });
    expect(refused.inventory.services[0]).toMatchObject({ health: 'down', serverVersion: null });

    const down = await runLiveChecks(host(), fake({ tunnelsDown: ['qwen'] }).deps);
    for (const id of ['api.health.qwen', 'api.auth.qwen']) {
      expect(byId(down, id)).toMatchObject({ verdict: 'unverified', at: null });
      expect(byId(down, id).evidence).toMatch(/^tunnel not open: FLEET_TUNNEL_NOT_READY: /);
    }
    expect(byId(down, 'port.loopback.qwen').verdict).toBe('pass'); // read over SSH, not the tunnel
    expect(down.inventory.services[0]).toMatchObject({ health: 'unknown', serverVersion: null, servedModels: [] });
  });

  it('auth: unverified without a configured key; fail when open without a key or when the key is refused', async () => {
    const noKey = await runLiveChecks(host(), fake({ keys: { qwen: null, gemma: null } }).deps);
    expect(byId(noKey, 'api.auth.qwen')).toMatchObject({ verdict: 'unverified', evidence: 'no API key configured for this service', at: null });

    const open = await runLiveChecks(host(), fake({ services: { qwen: upstream('vllm', null), gemma: upstream('llama-server', LLAMA_KEY) } }).deps);
    expect(byId(open, 'api.auth.qwen')).toMatchObject({ verdict: 'fail', evidence: 'GET /v1/models without a key → 200 (answered without authentication)' });

    const wrong = await runLiveChecks(host(), fake({ services: { qwen: upstream('vllm', 'another-key-on-server'), gemma: upstream('llama-server', LLAMA_KEY) } }).deps);
    expect(byId(wrong, 'api.auth.qwen')).toMatchObject({
      verdict: 'fail',
      evidence: 'GET /v1/models without a key → 401; with the configured key → 401 (the key is refused)',
    });

    const vague = await runLiveChecks(
      host(),
      fake({ services: { qwen: upstream('vllm', KEY, { '/v1/models': () => ({ status: 500, text: 'Internal Server Error' }) }), gemma: upstream('llama-server', LLAMA_KEY) } }).deps,
    );
    expect(byId(vague, 'api.auth.qwen')).toMatchObject({ verdict: 'unverified', evidence: 'GET /v1/models without a key → 500: Internal Server Error' });

    const storeBroken = await runLiveChecks(host(), fake({ keys: { qwen: new AppError(SecretsErrorCode.UNREADABLE, 'the secret store is locked'), gemma: null } }).deps);
    expect(byId(storeBroken, 'api.auth.qwen')).toMatchObject({ verdict: 'unverified' });
    expect(byId(storeBroken, 'api.auth.qwen').evidence).toBe('the API key could not be read: SECRETS_UNREADABLE: the secret store is locked');
  });
});

describe('deadlines', () => {
  it('a command or request that never answers is unverified after 10 s; the rest is measured', async () => {
    const f = fake({
      exec: { 'sshd -T': never },
      services: { qwen: upstream('vllm', KEY, { '/health': () => new Promise<LiveHttpResponse>(() => undefined) }), gemma: upstream('llama-server', LLAMA_KEY) },
    });
    const p = runLiveChecks(host(), f.deps);
    await advanceAfterSettling(f.clock, 9_999);
    await advanceAfterSettling(f.clock, 1);
    const r = await p;
    for (const id of ['sshd.password-auth', 'sshd.root-login']) expect(byId(r, id)).toMatchObject({ verdict: 'unverified', evidence: 'sshd -T: no answer within 10 s', at: null });
    expect(byId(r, 'api.health.qwen')).toMatchObject({ verdict: 'unverified', evidence: 'GET /health: no answer within 10 s' });
    expect(r.inventory.services[0]!.health).toBe('unknown');
    expect(byId(r, 'gpu.visible').verdict).toBe('pass');
    expect(byId(r, 'api.auth.qwen').verdict).toBe('pass');
    expect(r.inventory.liveError).toBeNull();
    // The work behind an expired deadline is told to stop (the SSH channel closes).
    expect(f.signals.filter((s) => s.aborted).length).toBeGreaterThanOrEqual(2);
    expect(f.clock.pending).toBe(0);
  });

  it('honours checkTimeoutMs and hands it to exec; SSH_EXEC_TIMEOUT reads as a timeout', async () => {
    const seen: number[] = [];
    const f = fake({ exec: { [SMI]: () => Promise.reject(new AppError('SSH_EXEC_TIMEOUT', 'command did not finish within 2500 ms')) } });
    const exec = f.deps.exec;
    const r = await runLiveChecks(host(), {
      ...f.deps,
      checkTimeoutMs: 2_500,
      exec: (c, o) => {
        seen.push(o.timeoutMs);
        return exec(c, o);
      },
    });
    expect(new Set(seen)).toEqual(new Set([2_500]));
    expect(byId(r, 'gpu.visible')).toMatchObject({ verdict: 'unverified', evidence: 'nvidia-smi: no answer within 2500 ms' });
  });
});

describe('a host that is down', () => {
  it('runs nothing: liveError says why and every check is unverified with the reason', async () => {
    const f = fake({ connection: 'reconnecting' });
    const r = await runLiveChecks(host(), f.deps);
    expect(f.commands).toEqual([]);
    expect(f.requests).toEqual([]);
    expect(r.inventory.liveError).toBe('host not connected (SSH reconnecting); live checks were not run');
    expect(r.inventory).toMatchObject({ connection: 'reconnecting', gpus: [], hostKeyFingerprint: 'SHA256:abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG' });
    expect(r.inventory.services.map((s) => [s.id, s.health, s.serverVersion])).toEqual([
      ['qwen', 'unknown', null],
      ['gemma', 'unknown', null],
    ]);
    expect(r.security.checks).toHaveLength(10);
    for (const c of r.security.checks) {
      expect(c.verdict, c.id).toBe('unverified');
      expect(c.at).toBeNull();
    }
    expect(byId(r, 'ssh.host-key').evidence).toBe('not connected (SSH reconnecting); last key seen SHA256:abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG');
    expect(byId(r, 'gpu.visible').evidence).toBe(r.inventory.liveError);
    expect(JSON.stringify(r)).not.toContain(KEY);
    expect(InventoryHostSchema.parse(r.inventory)).toEqual(r.inventory);
  });

  it('a session that drops during the checks sets liveError', async () => {
    const gone = () => Promise.reject(new AppError('SSH_NOT_CONNECTED', 'the SSH session is not open'));
    const f = fake({ exec: { [SMI]: gone, 'ss -ltnH': gone, 'sshd -T': gone } });
    const r = await runLiveChecks(host(), f.deps);
    expect(r.inventory.liveError).toBe('no SSH command answered during the checks (SSH_NOT_CONNECTED: the SSH session is not open)');
    expect(byId(r, 'gpu.visible')).toMatchObject({ verdict: 'unverified', evidence: 'nvidia-smi: SSH_NOT_CONNECTED: the SSH session is not open' });
  });

  it('connected without a fingerprint: the host key is unverified', async () => {
    const r = await runLiveChecks(host(), fake({ fingerprint: null }).deps);
    expect(byId(r, 'ssh.host-key')).toMatchObject({ verdict: 'unverified', at: null });
  });
});

describe('redactServiceConfig', () => {
  it('hides secret-named fields at any depth and secrets written inline in commands', () => {
    expect(
      redactServiceConfig({
        id: 'x',
        apiKey: 'a',
        nested: { hfToken: 'b', list: [{ password: 'c', passphrase: 'd', clientSecret: 'e', keep: 1 }] },
        restartCommand: `docker run -e HF_TOKEN=hf_abc -e MODE=fast vllm --api-key 'sk 1' --token=t0k --port 8000`,
        slots: 4,
      }),
    ).toEqual({
      id: 'x',
      apiKey: '[redacted]',
      nested: { hfToken: '[redacted]', list: [{ password: '[redacted]', passphrase: '[redacted]', clientSecret: '[redacted]', keep: 1 }] },
      restartCommand: 'docker run -e HF_TOKEN=[redacted] -e MODE=fast vllm --api-key [redacted] --token=[redacted] --port 8000',
      slots: 4,
    });
  });
});

describe('the on-prem guard', () => {
  // The checks reach each service through its upstream client: a tunnel's is on this machine by
  // construction, and a client of a URL off it is refused (and counted) where it is made.
  it('a service whose client the guard refused gets no request; its API checks are unverified with the refusal', async () => {
    const f = fake({ offPrem: true });
    const r = await runLiveChecks(host(), f.deps);
    expect(f.requests).toEqual([]);
    for (const id of ['api.health.qwen', 'api.auth.qwen', 'api.health.gemma', 'api.auth.gemma']) {
      expect(byId(r, id)).toMatchObject({ verdict: 'unverified', evidence: expect.stringContaining('only through its SSH tunnels or on this machine') });
    }
    expect(byId(r, 'api.health.qwen').evidence).toContain('http://qwen.example:8000');
    expect(byId(r, 'port.loopback.qwen').verdict).toBe('pass'); // SSH facts are not HTTP calls
  });

  it("asks for every service's own client and goes ahead with it", async () => {
    const f = fake({});
    const asked: string[] = [];
    const r = await runLiveChecks(host(), { ...f.deps, upstream: (id) => (asked.push(id), f.deps.upstream(id)) });
    expect(asked).toEqual(['qwen', 'gemma']);
    expect(byId(r, 'api.health.qwen').verdict).toBe('pass');
    expect(f.requests.length).toBeGreaterThan(0);
  });
});

