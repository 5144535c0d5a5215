import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src-main/core/base/index.js';
import { ConfigSchema } from '../../../src-main/core/config/index.js';
import { FleetService } from '../../../src-main/core/fleet/index.js';
import { MasterForward, MemoryPassphraseCache, MemoryTrustStore, OpenSshHelperServer, OpenSshProbe, OpenSshSession, TunnelSockets } from '../../../src-main/core/ssh/index.js';
import { Agent, request as undiciRequest } from 'undici';
import { HAVE_SSHD, keygen, startLoopbackSshd, type Sshd } from '../../helpers/sshd.js';
import { HAVE_OPENSSH } from '../../helpers/ssh-tools.js';

// The openssh transport's session against a real OpenSSH sshd on loopback:
// trust decided by the console before any credential, commands and forwards
// through the ControlMaster, passphrases through the console's askpass, and
// the bad inputs (no client, a socket path too long, an expired certificate,
// a ProxyCommand that exits at once) as coded errors. The shared suite
// (transports.test.ts) runs both transports through the fleet in a network
// namespace; this one is the session on its own, and needs no namespace.

const HAVE = HAVE_SSHD && HAVE_OPENSSH;

const dir = mkdtempSync(join(tmpdir(), 'gc-os-'));
const ctl = join(dir, 'c');
let sshd: Sshd;
let port = 0;
let hostPub = '';
const clientKey = join(dir, 'client');
const encKey = join(dir, 'enc');
const certKey = join(dir, 'certkey');
const sessions: OpenSshSession[] = [];
const helper = new OpenSshHelperServer(ctl);
const probe = new OpenSshProbe();

beforeAll(async () => {
  if (!HAVE) return;
  keygen(clientKey, 'ed25519');
  keygen(encKey, 'ed25519', ['-N', 'correct horse']);
  keygen(join(dir, 'ca'), 'ed25519');
  keygen(certKey, 'ed25519');
  // Expired an hour ago.
  execFileSync('ssh-keygen', ['-q', '-s', join(dir, 'ca'), '-I', 'ops', '-n', 'root', '-V', '-2h:-1h', `${certKey}.pub`]);
  sshd = await startLoopbackSshd({ parentDir: dir, authorizedKeyFiles: [`${clientKey}.pub`, `${encKey}.pub`] });
  port = sshd.port;
  hostPub = sshd.hostKeyPublic;
}, 30_000);

afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.dispose()));
});

afterAll(async () => {
  await helper.dispose();
  await sshd?.kill();
  rmSync(dir, { recursive: true, force: true });
});

function session(ssh: Record<string, unknown>, options: { knownHosts?: string; trust?: MemoryTrustStore; passphrases?: MemoryPassphraseCache; controlDir?: string; binary?: string } = {}) {
  const kh = join(dir, `kh-${sessions.length}`);
  writeFileSync(kh, options.knownHosts ?? '');
  const target = ConfigSchema.parse({ hosts: [{ label: `os-${sessions.length}`, ssh: { host: '127.0.0.1', port, user: 'root', identityFile: clientKey, transport: 'openssh', ...ssh }, knownHostsFile: kh }] }).hosts[0]!;
  const s = new OpenSshSession(target, {
    controlDir: options.controlDir ?? ctl,
    binary: options.binary,
    helper: options.controlDir ? new OpenSshHelperServer(options.controlDir) : helper,
    probe,
    services: { trustStore: options.trust ?? new MemoryTrustStore(), passphrases: options.passphrases ?? new MemoryPassphraseCache() },
    backoff: { initialMs: 100, maxMs: 300 },
    readyTimeoutMs: 5_000,
  });
  sessions.push(s);
  return s;
}

const known = () => `[127.0.0.1]:${port} ${hostPub}\n`;

describe.skipIf(!HAVE)('openssh transport: one host through the system ssh', () => {
  it('an unknown key waits for the operator, and no credential reached sshd before the decision', async () => {
    const s = session({});
    const before = sshd.log().length;
    await expect(s.connect()).rejects.toMatchObject({ code: 'SSH_HOST_KEY_UNKNOWN' });
    expect(s.state).toBe('awaiting-trust');
    expect(s.hostKeyProblem).toMatchObject({ status: 'unknown', role: 'host', endpoint: `[127.0.0.1]:${port}`, keyType: 'ssh-ed25519' });
    const fingerprint = s.hostKeyProblem!.fingerprint;
    expect(execFileSync('ssh-keygen', ['-lf', `${sshd.hostKeyFile}.pub`]).toString()).toContain(fingerprint);
    // sshd saw the key exchange, and no authentication request of any kind.
    const seen = sshd.log().slice(before);
    expect(seen).toMatch(/Connection from 127\.0\.0\.1|kex/i);
    expect(seen).not.toMatch(/userauth-request|Accepted publickey|Failed publickey|Postponed publickey/);
    await s.trustFingerprint(fingerprint);
    expect(s.state).toBe('connected');
    expect(s.hostKeyFingerprint).toBe(fingerprint);
  });

  it('runs commands and opens forwards through the master; the effective settings come from ssh -G', async () => {
    const s = session({}, { knownHosts: known() });
    await s.connect();
    expect(s.transport).toMatchObject({ kind: 'openssh', client: expect.stringMatching(/^OpenSSH_/) });
    expect(s.transport.effective).toMatchObject({ hostname: '127.0.0.1', port: String(port), user: 'root', identitiesonly: 'yes', stricthostkeychecking: 'true' });
    const r = await s.exec('printf "%s" "$((6*7))"; echo oops >&2; exit 3');
    expect(r).toMatchObject({ exitCode: 3, stdout: '42', truncated: false });
    // (sshd at DEBUG1 adds its own debug lines to a session's stderr)
    expect(r.stderr.split('\n').filter((l) => l && !l.startsWith('debug'))).toEqual(['oops']);
    const big = await s.exec('head -c 300000 /dev/zero | tr "\\0" x', { maxOutputBytes: 1000 });
    expect(big.stdout.length).toBe(1000);
    expect(big.truncated).toBe(true);
    await expect(s.exec('sleep 5', { timeoutMs: 300 })).rejects.toMatchObject({ code: 'SSH_EXEC_TIMEOUT' });
    // A forward to this very sshd: its banner comes back through the master.
    const sock = await s.forwardOut('127.0.0.1', 0, '127.0.0.1', port);
    const banner = await new Promise<string>((resolve) => sock.once('data', (d: Buffer) => resolve(d.toString())));
    sock.destroy();
    expect(banner).toMatch(/^SSH-2\.0-OpenSSH/);
  });

  it('commands run on one remote shell through the master once it is up: the same answers, no ssh process per command', async () => {
    const s = session({}, { knownHosts: known() });
    await s.connect();
    // The first command runs one-shot and starts the shell for the ones after it.
    const first = await s.exec('echo $PPID');
    await expect.poll(() => s.commandShellState, { timeout: 5_000, interval: 20 }).toBe('ready');
    expect(s.transport.commands).toBe('on one remote shell through the master');
    const a = await s.exec('echo $PPID');
    const b = await s.exec('echo $PPID');
    // Both children of the one shell; the one-shot command had a session of its own.
    expect(a.stdout).toBe(b.stdout);
    expect(a.stdout).not.toBe(first.stdout);
    const r = await s.exec('printf "%s" "$((6*7))"; echo oops >&2; exit 3');
    expect(r).toMatchObject({ exitCode: 3, stdout: '42', truncated: false });
    expect(r.stderr.split('\n').filter((l) => l && !l.startsWith('debug'))).toEqual(['oops']);
    const big = await s.exec('head -c 300000 /dev/zero | tr "\\0" x', { maxOutputBytes: 1000 });
    expect(big).toMatchObject({ truncated: true, exitCode: 0 });
    expect(big.stdout).toBe('x'.repeat(1000));
    // While one command holds the shell, another runs one-shot beside it.
    const [slow, quick] = await Promise.all([s.exec('sleep 0.3; echo slow'), s.exec('echo quick')]);
    expect([slow.stdout, quick.stdout]).toEqual(['slow\n', 'quick\n']);
    // A deadline kills the shell (as it kills a one-shot ssh); the next commands bring a new one up.
    await expect(s.exec('sleep 5', { timeoutMs: 300 })).rejects.toMatchObject({ code: 'SSH_EXEC_TIMEOUT' });
    expect((await s.exec('echo after')).stdout).toBe('after\n');
    await expect.poll(() => s.commandShellState, { timeout: 5_000, interval: 20 }).toBe('ready');
    // The master dies under a command on the shell: it fails as not finished (retryable), not as cancelled.
    const check = spawnSync('ssh', ['-S', s.transport.effective!['controlpath']!, '-O', 'check', 'x'], { encoding: 'utf8' });
    const states: string[] = [];
    s.onDidChangeState((c) => states.push(c.state));
    const running = s.exec('sleep 5');
    setTimeout(() => process.kill(Number(/pid=(\d+)/.exec(check.stderr)![1]), 'SIGKILL'), 100);
    await expect(running).rejects.toMatchObject({ code: 'SSH_EXEC_FAILED', retryable: true });
    // (the shell's client can go a moment before the session notices its master went)
    await expect.poll(() => states, { timeout: 5_000, interval: 20 }).toContain('reconnecting');
    await expect.poll(() => s.state, { timeout: 5_000, interval: 50 }).toBe('connected');
    expect((await s.exec('echo back')).stdout).toBe('back\n');
  });

  it('a master that dies is a lost link: reconnecting, then connected again', async () => {
    const s = session({}, { knownHosts: known() });
    await s.connect();
    const states: string[] = [];
    s.onDidChangeState((c) => states.push(c.state));
    const check = spawnSync('ssh', ['-S', s.transport.effective!['controlpath']!, '-O', 'check', 'x'], { encoding: 'utf8' });
    const pid = Number(/pid=(\d+)/.exec(check.stderr)?.[1] ?? 0);
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');
    await expect.poll(() => states, { timeout: 5_000, interval: 20 }).toContain('reconnecting');
    expect(s.lastError).toMatchObject({ code: 'SSH_DISCONNECTED' });
    await expect.poll(() => s.state, { timeout: 5_000, interval: 50 }).toBe('connected');
    expect((await s.exec('echo back')).stdout).toBe('back\n');
  });

  it("a tunnel's private socket belongs to the master while the link is up (0600), and to the console (503 + Retry-After) while it is down", async () => {
    const s = session({}, { knownHosts: known() });
    await s.connect();
    const sockets = new TunnelSockets({ preferredDir: join(dir, 'tun') });
    const path = sockets.allocate();
    const f = await MasterForward.open(s, { socketPath: path, reclaimStale: (p) => sockets.reclaimStale(p), remoteHost: '127.0.0.1', remotePort: port, httpErrors: true, retryAfterS: () => 7 });
    const owner = () => execFileSync('ss', ['-lxpH', 'src', path], { encoding: 'utf8' });
    const banner = () =>
      new Promise<string>((resolve, reject) => {
        const c = netConnect(path);
        c.once('data', (d: Buffer) => (resolve(d.toString()), c.destroy()));
        c.once('error', reject);
      });
    const agent = new Agent({ connect: { socketPath: path } });
    try {
      expect(f.onMasterListener).toBe(true);
      expect(owner()).toMatch(/"ssh"/);
      // The folder keeps other users out; the master's socket is 0600 too (StreamLocalBindMask 0177).
      expect(statSync(join(dir, 'tun')).mode & 0o777).toBe(0o700);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(await banner()).toMatch(/^SSH-2\.0-OpenSSH/);
      // The master dies: the console takes the socket back (the dead master's file is reclaimed), and hands it over again once reconnected.
      const check = spawnSync('ssh', ['-S', s.transport.effective!['controlpath']!, '-O', 'check', 'x'], { encoding: 'utf8' });
      process.kill(Number(/pid=(\d+)/.exec(check.stderr)![1]), 'SIGKILL');
      await expect.poll(() => f.onMasterListener, { timeout: 5_000, interval: 20 }).toBe(false);
      await expect.poll(() => s.state, { timeout: 5_000, interval: 50 }).toBe('connected');
      await expect.poll(() => f.onMasterListener, { timeout: 5_000, interval: 20 }).toBe(true);
      expect(owner()).toMatch(/"ssh"/);
      expect(await banner()).toMatch(/^SSH-2\.0-OpenSSH/);
      expect(f.stats.handovers).toBe(2);
      // Down for good: the console answers on the same socket, naming why and when to retry.
      await s.disconnect();
      await expect.poll(() => f.listening && !f.onMasterListener, { timeout: 5_000, interval: 20 }).toBe(true);
      expect(owner()).toMatch(/"node"|MainThread|pid=/);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      const res = await undiciRequest('http://tunnel/v1/models', { dispatcher: agent });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('7');
      expect(((await res.body.json()) as { error: { code: string } }).error.code).toBe('SSH_NOT_CONNECTED');
    } finally {
      await f.close();
      await agent.close();
      sockets.remove(path);
    }
    expect(existsSync(path)).toBe(false);
  });

  it("an encrypted key asks the console's askpass: no passphrase, a wrong one, the right one", async () => {
    const passphrases = new MemoryPassphraseCache();
    const s = session({ identityFile: encKey }, { knownHosts: known(), passphrases });
    await expect(s.connect()).rejects.toMatchObject({ code: 'SSH_PASSPHRASE_REQUIRED', details: { keyFile: encKey } });
    expect(s.state).toBe('failed');
    passphrases.set(encKey, 'wrong');
    await expect(s.connect()).rejects.toMatchObject({ code: 'SSH_PASSPHRASE_INCORRECT' });
    expect(passphrases.get(encKey)).toBeUndefined();
    passphrases.set(encKey, 'correct horse');
    await s.connect();
    expect(s.state).toBe('connected');
  });

  it('bad input: no client, a socket path too long, an expired certificate, a ProxyCommand that exits at once', async () => {
    await expect(session({}, { binary: join(dir, 'no-such-ssh') }).connect()).rejects.toMatchObject({ code: 'SSH_OPENSSH_MISSING', message: expect.stringMatching(/install openssh-client/) });
    const old = join(dir, 'old-ssh');
    writeFileSync(old, '#!/bin/sh\necho "OpenSSH_7.4p1, OpenSSL 1.0.2k-fips  26 Jan 2017" >&2\n', { mode: 0o755 });
    await expect(session({}, { binary: old }).connect()).rejects.toMatchObject({ code: 'SSH_OPENSSH_TOO_OLD', message: expect.stringMatching(/OpenSSH_7\.4p1.*8\.5 or newer/) });
    const deep = join(dir, 'x'.repeat(110));
    await expect(session({}, { controlDir: deep }).connect()).rejects.toMatchObject({ code: 'SSH_CONTROL_PATH_TOO_LONG' });
    await expect(session({ identityFile: certKey, certificateFile: `${certKey}-cert.pub` }, { knownHosts: known() }).connect()).rejects.toMatchObject({
      code: 'SSH_CERTIFICATE_INVALID',
      message: expect.stringMatching(/expired at/),
    });
    const quick = session({ proxyCommand: 'false' }, { knownHosts: known() });
    const t0 = Date.now();
    await expect(quick.connect()).rejects.toMatchObject({ code: 'SSH_CONNECT_FAILED', message: expect.stringMatching(/ProxyCommand ended before SSH started/) });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(quick.state).toBe('reconnecting');
    // None of it touched a healthy host.
    const ok = session({}, { knownHosts: known() });
    await ok.connect();
    expect(ok.state).toBe('connected');
  });

  it('an OpenSSH config alias is used as written (Include and Match), and a config ssh refuses is named', async () => {
    const cfg = join(dir, 'operator_config');
    writeFileSync(cfg, [`Host gpu-alias`, `  HostName 127.0.0.1`, `  Port ${port}`, `  User root`, `Match host 127.0.0.1 exec "true"`, `  IdentityFile ${clientKey}`, ''].join('\n'));
    const s = session({ configHost: 'gpu-alias', configFile: cfg, identityFile: undefined, agent: true }, { knownHosts: known() });
    await s.connect();
    expect(s.transport.effective).toMatchObject({ hostname: '127.0.0.1', port: String(port) });
    expect(s.transport.effective!['identityfile']).toContain(clientKey);
    // A Match exec whose command fails does not match (as in ssh): the alias then has no HostName, which is named.
    const failing = join(dir, 'failing_match');
    writeFileSync(failing, ['Match exec "/nonexistent/check-vpn"', '  HostName 127.0.0.1', `  Port ${port}`, ''].join('\n'));
    const f = session({ configHost: 'gpu-vpn-only', configFile: failing, identityFile: undefined, agent: true }, { knownHosts: known() });
    await expect(f.connect()).rejects.toMatchObject({ code: 'SSH_HOST_UNRESOLVED', message: expect.stringMatching(/gpu-vpn-only/) });
    const bad = join(dir, 'bad_config');
    writeFileSync(bad, 'Host gpu-bad\n  Frobnicate yes\n');
    const b = session({ configHost: 'gpu-bad', configFile: bad, identityFile: undefined, agent: true }, { knownHosts: known() });
    await expect(b.connect()).rejects.toMatchObject({ code: 'SSH_OPENSSH_CONFIG_INVALID', message: expect.stringMatching(/Frobnicate|Bad configuration option/) });
    expect(b.state).toBe('failed');
  });

  it('a new fleet-wide transport in a reloaded config moves the hosts it changes, and only those', async () => {
    const kh = join(dir, 'kh-fleet');
    writeFileSync(kh, known());
    const hostsOf = () => [
      { label: 'plain', ssh: { host: '127.0.0.1', port, user: 'root', identityFile: clientKey }, knownHostsFile: kh, services: [] },
      { label: 'pinned', ssh: { host: '127.0.0.1', port, user: 'root', identityFile: clientKey, transport: 'builtin' as const }, knownHostsFile: kh, services: [] },
    ];
    const fleet = new FleetService({ config: ConfigSchema.parse({ hosts: hostsOf(), ssh: { transport: 'builtin' } }), logger: silentLogger, pollIntervalMs: 250, openssh: { controlDir: join(dir, 'cf') } });
    try {
      fleet.start();
      const kinds = () => Object.fromEntries(fleet.snapshot().hosts.map((h) => [h.label, `${h.transport?.kind}/${h.state}`]));
      await expect.poll(kinds, { timeout: 10_000, interval: 50 }).toEqual({ plain: 'builtin/connected', pinned: 'builtin/connected' });
      fleet.applyConfig(ConfigSchema.parse({ hosts: hostsOf(), ssh: { transport: 'openssh' } }));
      await expect.poll(kinds, { timeout: 10_000, interval: 50 }).toEqual({ plain: 'openssh/connected', pinned: 'builtin/connected' });
    } finally {
      await fleet.dispose();
    }
  });

  it('the helper answers only its own sessions, with the right token', async () => {
    const env = await helper.register('t-1', () => ({ lines: ['secret-line'] }));
    const ask = (e: Record<string, string>) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const c = spawn(env.program, ['hostkey', 'HOSTNAME', 'h', 'ssh-ed25519', 'AAAA'], { env: { ...process.env, ...e } });
        let out = '';
        c.stdout.on('data', (d: Buffer) => (out += d.toString()));
        c.on('close', (code) => resolve({ code, out }));
      });
    expect(await ask(env.env)).toEqual({ code: 0, out: 'secret-line\n' });
    expect(await ask({ ...env.env, GC_SSH_HELPER_TOKEN: 'guess' })).toEqual({ code: 1, out: '' });
    expect(await ask({ ...env.env, GC_SSH_HELPER_SESSION: 'other' })).toEqual({ code: 1, out: '' });
    helper.unregister('t-1');
    expect(await ask(env.env)).toEqual({ code: 1, out: '' });
  });
});
