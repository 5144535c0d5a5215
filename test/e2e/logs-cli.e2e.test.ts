import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, assertBuilt, runCliProcess, startConsole, type RunningConsole } from '../helpers/console-process.js';
import { ROOT } from '../helpers/imports.js';
import { HAVE_SSHD, keygen, knownHostsLine, startLoopbackSshd, type Sshd } from '../helpers/sshd.js';
import { until } from '../helpers/until.js';

// `gpu-console logs` as an operator runs it: the built console serving a host
// on a real sshd (loopback, so its sessions' processes are visible here), a
// service whose log is a file, read with the real `tail`.

const SECRET = 'sk-live-logs-cli-5e1b77';
const FIRST = [
  'INFO 12-05 01:00:00 starting vLLM API server',
  `INFO 12-05 01:00:01 args: --model qwen --api-key ${SECRET}`,
  'NCCL WARN NET/Socket : no usable interface found',
  'INFO 12-05 01:00:05 loading weights',
  'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB',
];

/** Remote processes (the sshd runs here) that are `tail` reading `path`. */
function remoteTails(path: string): number {
  let n = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (argv[0] === 'tail' && argv.includes(path)) n++;
    } catch {
      // exited while we looked
    }
  }
  return n;
}

describe.skipIf(!HAVE_SSHD)('gpu-console logs (built console, real sshd)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gc-logs-cli-'));
  const dataDir = join(dir, 'data');
  const log = join(dir, 'vllm.log');
  let sshd: Sshd;
  let console_: RunningConsole;
  const cli = (...args: string[]) => runCliProcess(['logs', ...args, '--data-dir', dataDir]);

  beforeAll(async () => {
    assertBuilt();
    const key = join(dir, 'id');
    keygen(key, 'ed25519');
    sshd = await startLoopbackSshd({ parentDir: dir, authorizedKeyFiles: [`${key}.pub`], logLevel: 'INFO' });
    writeFileSync(join(dir, 'known_hosts'), knownHostsLine(sshd));
    writeFileSync(log, FIRST.join('\n') + '\n');
    const config = join(dir, 'config.yaml');
    writeFileSync(
      config,
      [
        'hosts:',
        '  - label: gpu-a',
        `    ssh: { host: 127.0.0.1, port: ${sshd.port}, user: root, identityFile: ${key}, transport: builtin }`,
        `    knownHostsFile: ${join(dir, 'known_hosts')}`,
        '    services:',
        `      - { id: m, kind: vllm, remotePort: 8000, model: qwen, logs: { file: ${log} } }`,
        '',
      ].join('\n'),
    );
    console_ = await startConsole(['--config', config, '--data-dir', dataDir, '--ui-port', '0']);
    await until(
      async () => {
        const r = await runCliProcess(['status', '--json', '--data-dir', dataDir]);
        return r.code === 0 && (JSON.parse(r.stdout) as { hosts: { label: string; state: string }[] }).hosts.some((h) => h.label === 'gpu-a' && h.state === 'connected');
      },
      { timeoutMs: 20_000, intervalMs: 250, what: 'gpu-a connected' },
    );
  }, 60_000);

  afterAll(async () => {
    if (console_) expect(await console_.stop()).toBe(0);
    await sshd?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('--tail prints the last lines on stdout, the inline secret masked, the failure said on stderr', async () => {
    const r = await cli('gpu-a/m', '--tail', '4');
    expect(r.code, r.stderr).toBe(0);
    const out = r.stdout.trimEnd().split('\n');
    expect(out).toHaveLength(4);
    expect(out[0]).toMatch(/^INFO 12-05 01:00:01 args: --model qwen --api-key /);
    expect(out.slice(1)).toEqual(FIRST.slice(2));
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(r.stderr).toContain('[failure: cuda-oom]');
    // A file has no timestamps: --timestamps says so once and prints the lines bare, never an arrival time.
    const stamped = await cli('gpu-a/m', '--tail', '1', '--timestamps');
    expect(stamped.stdout).toBe(`${FIRST[4]}\n`);
    expect(stamped.stderr).toMatch(/has no timestamps/);
  });

  it('--grep filters (plain text, -i, --regex) and --json prints one entry per line', async () => {
    const plain = await cli('gpu-a/m', '--grep', 'nccl');
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toBe('');
    expect(plain.stderr).toMatch(/no line of the last \d+ matched/);
    const any = await cli('gpu-a/m', '--grep', 'nccl', '-i');
    expect(any.stdout).toBe(`${FIRST[2]}\n`);
    const re = await cli('gpu-a/m', '--grep', '^INFO .* (starting|loading)', '--regex', '--json');
    expect(re.code, re.stderr).toBe(0);
    const entries = re.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { type: string; text: string; ts: number | null });
    expect(entries.map((e) => e.text)).toEqual([FIRST[0], FIRST[3]]);
    expect(entries.every((e) => e.type === 'line' && e.ts === null)).toBe(true);
  });

  it('a bad regex is the console\'s coded error; bad flags are exit 2 naming the flag', async () => {
    const bad = await cli('gpu-a/m', '--grep', '(unclosed', '--regex');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/LOGS_FILTER_INVALID: /);
    // A file carries no timestamps: --since is refused by the console, not answered with every line.
    const since = await cli('gpu-a/m', '--since', '10m');
    expect(since.code).toBe(1);
    expect(since.stderr).toMatch(/LOGS_SINCE_UNSUPPORTED: /);
    expect(since.stdout).toBe('');
    for (const [args, flag] of [
      [['gpu-a/m', '--tail', 'ten'], '--tail'],
      [['gpu-a/m', '--since', 'yesterday'], '--since'],
      [['gpu-a/m', '--bogus'], '--bogus'],
      [['gpu-a/m', '--regex'], '--regex'],
    ] as const) {
      const r = await cli(...args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(flag);
    }
  });

  it('an unknown HOST/SERVICE is the coded error; no running console is refused naming serve', async () => {
    const host = await cli('nohost/m');
    expect(host.code).toBe(1);
    expect(host.stderr).toMatch(/FLEET_UNKNOWN_HOST: .*nohost/);
    const service = await cli('gpu-a/nosvc');
    expect(service.code).toBe(1);
    expect(service.stderr).toMatch(/LOGS_NOT_CONFIGURED: .*nosvc/);
    const none = await runCliProcess(['logs', 'gpu-a/m', '--data-dir', join(dir, 'no-console')]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/CLI_NO_RUNNING_CONSOLE: .*SSH sessions.*gpu-console serve/);
  });

  it('--follow prints appended lines, exits 0 on SIGINT, and the remote tail is gone', async () => {
    expect(remoteTails(log)).toBe(0);
    const child = spawn(process.execPath, [CLI, 'logs', 'gpu-a/m', '--follow', '--tail', '1', '--data-dir', dataDir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      // The backlog line shows once the remote tail runs: what is appended from now on is followed.
      await until(() => stdout.includes(FIRST[4]!) && remoteTails(log) === 1, { timeoutMs: 15_000, what: () => `the backlog line and one remote tail; stdout ${JSON.stringify(stdout)}, stderr ${JSON.stringify(stderr)}` });
      appendFileSync(log, `after 1\nHF_TOKEN=${SECRET} after 2\n`);
      await until(() => stdout.includes('after 2'), { timeoutMs: 10_000, what: () => `the appended lines; stdout ${JSON.stringify(stdout)}` });
      expect(stdout.trimEnd().split('\n')).toEqual([FIRST[4], 'after 1', expect.stringMatching(/^HF_TOKEN=.* after 2$/)]);
      expect(stdout).not.toContain(SECRET);
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      // The console unfollowed: its last follower left, so the remote tail ends.
      await until(() => remoteTails(log) === 0, { timeoutMs: 10_000, what: 'the remote tail to end' });
      expect(stderr).not.toMatch(/unfollow failed/);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 40_000);

  it('--follow whose reader went away (| head) unfollows and exits 0', async () => {
    const child = spawn(process.execPath, [CLI, 'logs', 'gpu-a/m', '-f', '--tail', '1', '--data-dir', dataDir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await until(() => stdout.length > 0 && remoteTails(log) === 1, { timeoutMs: 15_000, what: () => `the backlog line and one remote tail; stderr ${JSON.stringify(stderr)}` });
      child.stdout.destroy();
      appendFileSync(log, 'after the reader left\n');
      expect(await exited, stderr).toBe(0);
      await until(() => remoteTails(log) === 0, { timeoutMs: 10_000, what: 'the remote tail to end' });
      expect(stderr).not.toMatch(/unexpected error|EPIPE/);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 40_000);
});
