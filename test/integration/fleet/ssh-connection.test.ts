import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, connect as netConnect, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SshConnection, LocalForward, sha256Fingerprint, type SshStateChange } from '../../../src-main/core/ssh/index.js';
import type { AppError } from '../../../src-main/core/base/index.js';
import { startTestSshServer, type TestSshServer } from './helpers/test-ssh-server.js';
import { generateEd25519 } from '../../../src-main/demo/keys.js';
import { startSshAgent } from '../../helpers/ssh-tools.js';

let sshd: TestSshServer;
let echo: Server;
let echoPort: number;
const open: SshConnection[] = [];

beforeAll(async () => {
  sshd = await startTestSshServer({
    exec: (command) => {
      if (command === 'hang') return 'hang';
      if (command === 'big') return { stdout: 'x'.repeat(100_000), code: 0 };
      if (command === 'fail') return { stderr: 'boom\n', code: 3 };
      return { stdout: `ran: ${command}\n`, code: 0 };
    },
  });
  echo = createServer((s) => s.pipe(s));
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  echoPort = (echo.address() as AddressInfo).port;
});
afterAll(async () => {
  await sshd.close();
  await new Promise<void>((r) => echo.close(() => r()));
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.dispose()));
  sshd.authAttempts.length = 0;
});

function session(
  knownHosts: string,
  extra: { identityFile?: string; agent?: boolean; port?: number; env?: Record<string, string> } = {},
): SshConnection {
  const c = new SshConnection(
    {
      label: 'test',
      ssh: { host: '127.0.0.1', port: extra.port ?? sshd.port, user: 'ops', identityFile: extra.identityFile ?? sshd.clientKeyFile, agent: extra.agent },
      knownHostsFile: sshd.writeKnownHosts(knownHosts),
    },
    { backoff: { initialMs: 50, maxMs: 200, random: () => 0.5 }, readyTimeoutMs: 3_000, env: extra.env ?? {} },
  );
  open.push(c);
  return c;
}

const states = (c: SshConnection): SshStateChange[] => {
  const seen: SshStateChange[] = [];
  c.onDidChangeState((s) => seen.push(s));
  return seen;
};

function waitForState(c: SshConnection, state: string, timeoutMs = 5_000): Promise<SshStateChange> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out waiting for ${state}, now ${c.state}`)), timeoutMs);
    const sub = c.onDidChangeState((s) => {
      if (s.state === state) {
        clearTimeout(t);
        void sub.dispose();
        resolve(s);
      }
    });
  });
}

describe('SshConnection against a loopback ssh2 server', () => {
  it('connects with a trusted key, runs commands, caps output and times out', async () => {
    const c = session(sshd.knownHostsLine());
    const seen = states(c);
    await c.connect();
    expect(c.state).toBe('connected');
    expect(seen.map((s) => s.state)).toEqual(['connecting', 'connected']);
    expect(c.hostKeyFingerprint).toBe(sha256Fingerprint(sshd.hostKeyBlob));
    expect(sshd.authAttempts).toContain('publickey');

    expect(await c.exec('nvidia-smi')).toEqual({ exitCode: 0, signal: null, stdout: 'ran: nvidia-smi\n', stderr: '', truncated: false });
    expect(await c.exec('fail')).toMatchObject({ exitCode: 3, stderr: 'boom\n' });
    const big = await c.exec('big', { maxOutputBytes: 1_000 });
    expect(big.stdout).toHaveLength(1_000);
    expect(big.truncated).toBe(true);
    await expect(c.exec('hang', { timeoutMs: 200 })).rejects.toMatchObject({ code: 'SSH_EXEC_TIMEOUT' });
    const ac = new AbortController();
    const pending = c.exec('hang', { timeoutMs: 5_000, signal: ac.signal });
    ac.abort();
    await expect(pending).rejects.toMatchObject({ code: 'SSH_CANCELLED' });
  });

  it('unknown host key → awaiting-trust with the fingerprint, and no authentication attempted', async () => {
    const c = session('# empty known_hosts\n');
    const err = (await c.connect().catch((e: unknown) => e)) as AppError;
    expect(err.code).toBe('SSH_HOST_KEY_UNKNOWN');
    expect(err.details['fingerprint']).toBe(sha256Fingerprint(sshd.hostKeyBlob));
    expect(c.state).toBe('awaiting-trust');
    expect(c.hostKeyFingerprint).toBe(sha256Fingerprint(sshd.hostKeyBlob));
    expect(sshd.authAttempts).toEqual([]);
    // No retry loop: it stays put.
    await new Promise((r) => setTimeout(r, 300));
    expect(c.state).toBe('awaiting-trust');
    expect(sshd.authAttempts).toEqual([]);

    await c.trustFingerprint(sha256Fingerprint(sshd.hostKeyBlob));
    expect(c.state).toBe('connected');
    await expect(c.trustFingerprint('not-a-fingerprint')).rejects.toMatchObject({ code: 'SSH_INVALID_FINGERPRINT' });
  });

  it('changed host key → failed with SSH_HOST_KEY_CHANGED, old and new fingerprints, no auth, no retry', async () => {
    const other = 'AAAAC3NzaC1lZDI1NTE5AAAAIJmJ0kI1q0y5d2m5mP0mQwWcQ1Wl8bC1m8+QxqS0bQ8x';
    const c = session(`[127.0.0.1]:${sshd.port} ssh-ed25519 ${other}\n`);
    const err = (await c.connect().catch((e: unknown) => e)) as AppError;
    expect(err.code).toBe('SSH_HOST_KEY_CHANGED');
    expect(err.details).toMatchObject({
      fingerprint: sha256Fingerprint(sshd.hostKeyBlob),
      knownFingerprints: [sha256Fingerprint(Buffer.from(other, 'base64'))],
      knownSource: 'known_hosts',
      endpoint: `[127.0.0.1]:${sshd.port}`,
    });
    expect(c.state).toBe('failed');
    expect(c.nextRetryAt).toBeNull();
    expect(sshd.authAttempts).toEqual([]);
    // Operator trust does not override a known_hosts entry.
    await c.trustFingerprint(sha256Fingerprint(sshd.hostKeyBlob)).catch(() => undefined);
    expect(c.state).toBe('failed');
  });

  it('wrong key → SSH_AUTH_FAILED naming the methods tried, no retry', async () => {
    const wrong = join(sshd.dir, 'wrong_key');
    writeFileSync(wrong, generateEd25519('wrong').pair.private, { mode: 0o600 });
    const c = session(sshd.knownHostsLine(), { identityFile: wrong });
    const err = (await c.connect().catch((e: unknown) => e)) as AppError;
    expect(err.code).toBe('SSH_AUTH_FAILED');
    expect(err.message).toContain('publickey');
    expect(err.details['methodsTried']).toEqual(['publickey']);
    expect(c.state).toBe('failed');
  });

  it('authenticates through ssh-agent (SSH_AUTH_SOCK) and names both methods when both fail', async () => {
    const sock = join(sshd.dir, 'agent.sock');
    const agent = await startSshAgent(sock, [sshd.clientKeyFile]);
    try {
      const c = session(sshd.knownHostsLine(), { identityFile: '', agent: true, env: { SSH_AUTH_SOCK: sock } });
      await c.connect();
      expect(c.state).toBe('connected');
      expect(sshd.authAttempts).toContain('publickey');

      execFileSync('ssh-add', ['-q', '-D'], { env: { ...process.env, SSH_AUTH_SOCK: sock }, stdio: 'ignore' });
      const wrong = join(sshd.dir, 'wrong_for_agent');
      writeFileSync(wrong, generateEd25519('wrong').pair.private, { mode: 0o600 });
      const d = session(sshd.knownHostsLine(), { identityFile: wrong, agent: true, env: { SSH_AUTH_SOCK: sock } });
      const err = (await d.connect().catch((e: unknown) => e)) as AppError;
      expect(err.code).toBe('SSH_AUTH_FAILED');
      expect(err.details['methodsTried']).toEqual(['publickey', 'agent']);
      expect(err.message).toMatch(/publickey \(.*wrong_for_agent\), ssh-agent/);
    } finally {
      agent.kill();
    }
  });

  it('key problems are coded before any connection is made', async () => {
    const c = session(sshd.knownHostsLine(), { identityFile: '/nonexistent/key' });
    await expect(c.connect()).rejects.toMatchObject({ code: 'SSH_KEY_UNREADABLE' });
    expect(c.state).toBe('failed');
    const d = session(sshd.knownHostsLine(), { identityFile: '', agent: true }); // agent without SSH_AUTH_SOCK
    await expect(d.connect()).rejects.toMatchObject({ code: 'SSH_NO_AUTH_METHOD' });
    expect(sshd.authAttempts).toEqual([]);
  });

  it('refused port → SSH_CONNECT_FAILED and retries with backoff (nextRetryAt set)', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const deadPort = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const c = session(sshd.knownHostsLine(), { port: deadPort });
    const seen = states(c);
    await expect(c.connect()).rejects.toMatchObject({ code: 'SSH_CONNECT_FAILED' });
    expect(c.state).toBe('reconnecting');
    expect(c.nextRetryAt).toBeGreaterThan(Date.now() - 1_000);
    await new Promise((r) => setTimeout(r, 400));
    expect(seen.filter((s) => s.state === 'reconnecting' && s.nextRetryAt !== undefined).length).toBeGreaterThanOrEqual(2);
    await c.disconnect();
    expect(c.state).toBe('disconnected');
  });

  it('a peer that accepts TCP but never speaks SSH → SSH_TIMEOUT after readyTimeout, then retries', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const c = new SshConnection(
        {
          label: 'silent',
          ssh: { host: '127.0.0.1', port: (silent.address() as AddressInfo).port, user: 'ops', identityFile: sshd.clientKeyFile },
          knownHostsFile: sshd.writeKnownHosts(''),
        },
        { readyTimeoutMs: 300, backoff: { initialMs: 5_000 } },
      );
      open.push(c);
      await expect(c.connect()).rejects.toMatchObject({ code: 'SSH_TIMEOUT', retryable: true });
      expect(c.state).toBe('reconnecting');
      expect(c.nextRetryAt).not.toBeNull();
    } finally {
      silent.close();
    }
  });

  it('unexpected close → reconnecting with nextRetryAt, then connected again; forwards survive the gap', async () => {
    const c = session(sshd.knownHostsLine());
    await c.connect();
    const forward = await LocalForward.open(c, { remoteHost: '127.0.0.1', remotePort: echoPort });
    expect(forward.url).toBe(`http://127.0.0.1:${forward.localPort}`);
    const roundTrip = (text: string) =>
      new Promise<string>((resolve, reject) => {
        const s = netConnect(forward.localPort, '127.0.0.1');
        let got = '';
        s.on('data', (d) => {
          got += d.toString();
          if (got.length >= text.length) s.end();
        });
        s.on('close', () => resolve(got));
        s.on('error', reject);
        s.write(text);
      });
    expect(await roundTrip('hello through the tunnel')).toBe('hello through the tunnel');

    const reconnecting = waitForState(c, 'reconnecting');
    sshd.dropClients();
    const change = await reconnecting;
    expect(change.error?.code).toBe('SSH_DISCONNECTED');
    expect(change.nextRetryAt).toBeTypeOf('number');
    expect(forward.listening).toBe(true);
    // A connection made while SSH is down waits for the reconnect.
    const duringGap = roundTrip('queued while reconnecting');
    await waitForState(c, 'connected');
    expect(await duringGap).toBe('queued while reconnecting');
    await forward.close();
    expect(forward.listening).toBe(false);
    expect(forward.activeStreams).toBe(0);
  });

  it('a tunnel to a closed remote port closes the local socket cleanly', async () => {
    const c = session(sshd.knownHostsLine());
    await c.connect();
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const deadPort = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const forward = await LocalForward.open(c, { remoteHost: '127.0.0.1', remotePort: deadPort });
    const closed = await new Promise<boolean>((resolve) => {
      const s = netConnect(forward.localPort, '127.0.0.1');
      s.on('error', () => undefined);
      s.on('close', () => resolve(true));
    });
    expect(closed).toBe(true);
    expect(forward.stats.failed).toBe(1);
    expect(forward.stats.lastError?.code).toBe('SSH_FORWARD_FAILED');
    await forward.close();
  });

  it('disconnect and dispose leave no live client', async () => {
    const c = session(sshd.knownHostsLine());
    await c.connect();
    expect(c.hasLiveClient).toBe(true);
    await c.disconnect();
    expect(c.hasLiveClient).toBe(false);
    expect(c.state).toBe('disconnected');
    await c.connect();
    await c.dispose();
    await c.dispose();
    expect(c.hasLiveClient).toBe(false);
    await new Promise((r) => setTimeout(r, 100));
    expect(sshd.connections).toBe(0);
  });
});
