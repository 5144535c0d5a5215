import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tcpDialer } from '../../../src-main/core/ssh/index.js';
import type { FleetService } from '../../../src-main/core/fleet/index.js';
import { createNetnsHost, keygen, knownHostsLine, preClean, type NetnsHost, type Sshd } from '../../helpers/netns-sshd.js';
import { startFleet, waitHost } from './helpers.js';
import { startSshAgent } from '../../helpers/ssh-tools.js';

// Authentication against a real OpenSSH sshd in its own network namespace:
// key files of every kind and format, an encrypted key unlocked by a
// passphrase the operator types, ssh-agent, one ProxyJump hop, and the bad
// inputs that must give coded errors without touching the other hosts.

let ns: NetnsHost;
let sshd: Sshd;
let inner: Sshd;
let kh: string;
const fleets: FleetService[] = [];

beforeAll(async () => {
  preClean();
  ns = await createNetnsHost();
  sshd = await ns.startSshd();
  // Reachable only from inside the namespace: proves a jump really happens.
  inner = await ns.startSshd({ listen: '127.0.0.1', port: 2222, keyType: 'ecdsa' });
  await ns.startModelServer(8000);
  kh = join(ns.dir, 'known_hosts');
  writeFileSync(kh, knownHostsLine(sshd) + knownHostsLine(inner, '127.0.0.1'));
}, 30_000);

afterEach(async () => {
  await Promise.all(fleets.splice(0).map((f) => f.dispose()));
});

afterAll(async () => {
  await ns?.dispose();
});

function host(label: string, ssh: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    label,
    ssh: { host: ns.addr, port: 22, user: 'root', ...ssh },
    knownHostsFile: kh,
    services: [{ id: 'm', kind: 'vllm' as const, remotePort: 8000, model: `test-model-${label}` }],
    ...extra,
  };
}

function fleetOf(...hosts: ReturnType<typeof host>[]) {
  const r = startFleet(hosts);
  fleets.push(r.fleet);
  return r;
}

function newAuthorizedKey(name: string, type: 'ed25519' | 'ecdsa' | 'rsa', format: 'openssh' | 'pem' | 'pkcs8', passphrase = ''): string {
  const file = join(ns.dir, name);
  const formatArgs = format === 'pem' ? ['-m', 'PEM'] : format === 'pkcs8' ? ['-m', 'PKCS8'] : [];
  keygen(file, type, formatArgs);
  if (passphrase) execFileSync('ssh-keygen', ['-q', '-p', '-N', passphrase, '-P', '', ...formatArgs, '-f', file]);
  ns.authorize(readFileSync(`${file}.pub`, 'utf8'));
  return file;
}

describe('authentication against OpenSSH sshd in a network namespace', () => {
  it('key files: ed25519 (OpenSSH), ECDSA (PEM), RSA (PEM), RSA (PKCS#8); the tunnel comes up through a probe', async () => {
    const ecdsa = newAuthorizedKey('id_ecdsa_pem', 'ecdsa', 'pem');
    const rsa = newAuthorizedKey('id_rsa_pem', 'rsa', 'pem');
    const pkcs8 = newAuthorizedKey('id_rsa_pkcs8', 'rsa', 'pkcs8');
    expect(readFileSync(rsa, 'utf8')).toContain('BEGIN RSA PRIVATE KEY');
    expect(readFileSync(ecdsa, 'utf8')).toContain('BEGIN EC PRIVATE KEY');
    expect(readFileSync(pkcs8, 'utf8')).toContain('BEGIN PRIVATE KEY');
    const { fleet } = fleetOf(
      host('ed', { identityFile: ns.clientKey }),
      host('ec', { identityFile: ecdsa }),
      host('rsa', { identityFile: rsa }),
      host('pk8', { identityFile: pkcs8 }),
    );
    for (const label of ['ed', 'ec', 'rsa', 'pk8']) {
      const h = await waitHost(fleet, label, (x) => x.services[0]!.tunnel.state === 'up');
      expect(h.state).toBe('connected');
      expect(h.hostKeyFingerprint).toBe(sshd.fingerprint);
      expect(h.services[0]!.tunnel.lastProbe).toMatchObject({ ok: true, error: null });
    }
    expect(sshd.log()).toMatch(/Accepted publickey for root .* ECDSA/);
    expect(sshd.log()).toMatch(/Accepted publickey for root .* RSA/);
  });

  it('an encrypted key: SSH_PASSPHRASE_REQUIRED → wrong passphrase is SSH_PASSPHRASE_INCORRECT → the right one connects; nothing is retried meanwhile', async () => {
    const enc = newAuthorizedKey('id_enc', 'ed25519', 'openssh', 'correct horse battery');
    const { fleet, changes } = fleetOf(host('enc', { identityFile: enc }));
    const first = await waitHost(fleet, 'enc', (h) => h.state === 'failed');
    expect(first.lastError).toMatchObject({ code: 'SSH_PASSPHRASE_REQUIRED' });
    expect(first.credentialPrompt).toEqual({ kind: 'passphrase', keyFile: enc, reason: 'required' });
    expect(first.nextRetryAt).toBeNull();
    expect(await fleet.providePassphrase('enc', 'wrong one')).toBe('failed');
    const wrong = fleet.snapshot().hosts[0]!;
    expect(wrong.lastError?.code).toBe('SSH_PASSPHRASE_INCORRECT');
    expect(wrong.credentialPrompt).toMatchObject({ kind: 'passphrase', reason: 'incorrect' });
    expect(JSON.stringify(fleet.snapshot())).not.toContain('wrong one');
    expect(await fleet.providePassphrase('enc', 'correct horse battery')).toBe('connected');
    await waitHost(fleet, 'enc', (h) => h.services[0]!.tunnel.state === 'up');
    expect(JSON.stringify(fleet.snapshot())).not.toContain('correct horse');
    expect(changes.some((c) => JSON.stringify(c.error?.toJSON() ?? {}).includes('correct horse'))).toBe(false);
    expect(fleet.snapshot().hosts[0]!.credentialPrompt).toBeNull();
  });

  it('ssh-agent (SSH_AUTH_SOCK) with OpenSSH ssh-agent', async () => {
    const agentKey = newAuthorizedKey('id_agent', 'ed25519', 'openssh');
    const sock = join(ns.dir, 'agent.sock');
    const agent = await startSshAgent(sock, [agentKey]);
    try {
      const saved = process.env['SSH_AUTH_SOCK'];
      process.env['SSH_AUTH_SOCK'] = sock;
      try {
        const { fleet } = fleetOf(host('agent', { agent: true }));
        const h = await waitHost(fleet, 'agent', (x) => x.services[0]!.tunnel.state === 'up');
        expect(h.state).toBe('connected');
      } finally {
        if (saved === undefined) delete process.env['SSH_AUTH_SOCK'];
        else process.env['SSH_AUTH_SOCK'] = saved;
      }
    } finally {
      agent.kill();
    }
  });

  it('one ProxyJump hop: the target sshd listens on the namespace loopback only, so only the jump reaches it', async () => {
    const { fleet } = fleetOf(host('jumped', { host: '127.0.0.1', port: 2222, identityFile: ns.clientKey, jumpHost: `root@${ns.addr}:22` }));
    const h = await waitHost(fleet, 'jumped', (x) => x.services[0]!.tunnel.state === 'up');
    expect(h).toMatchObject({ state: 'connected', jumpHost: `root@${ns.addr}:22`, hostKeyFingerprint: inner.fingerprint });
    expect(inner.log()).toMatch(/Accepted publickey for root from 127\.0\.0\.1/);
    // nvidia-smi (exec) runs on the target, through the jump.
    expect(fleet.snapshot().hosts[0]!.gpuStaleReason ?? '').toMatch(/nvidia-smi|^$/);
  });

  it('bad input gives coded errors and leaves the other hosts untouched', async () => {
    const junk = join(ns.dir, 'junk_key');
    writeFileSync(junk, '-----BEGIN OPENSSH PRIVATE KEY-----\nnot a key\n-----END OPENSSH PRIVATE KEY-----\n', { mode: 0o600 });
    // A peer that accepts TCP and hangs up before SSH says hello.
    const rude: Server = createServer((s) => s.destroy());
    await new Promise<void>((r) => rude.listen(0, '127.0.0.1', r));
    const resolved: string[] = [];
    const dialer = tcpDialer(async (name) => {
      resolved.push(name);
      if (name === 'gpu-does-not-exist.invalid') throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
      return [ns.addr];
    });
    try {
      const { fleet } = startFleet(
        [
          host('good', { host: 'gpu-good.test', identityFile: ns.clientKey }),
          host('nokey', { identityFile: join(ns.dir, 'missing_key') }),
          host('junk', { identityFile: junk }),
          host('nodns', { host: 'gpu-does-not-exist.invalid', identityFile: ns.clientKey }),
          host('refused', { port: 2999, identityFile: ns.clientKey }),
          host('rude', { host: '127.0.0.1', port: (rude.address() as AddressInfo).port, identityFile: ns.clientKey }),
          host('wrongkey', { identityFile: newUnauthorizedKey() }),
        ].map((h) => (h.label === 'good' ? { ...h, knownHostsFile: withAlias(kh, 'gpu-good.test') } : h)),
        { sshServices: { dialer } },
      );
      fleets.push(fleet);
      await waitHost(fleet, 'good', (h) => h.services[0]!.tunnel.state === 'up');
      const codes = async (label: string, pred: (h: { state: string; lastError: { code: string } | null }) => boolean) =>
        (await waitHost(fleet, label, (h) => pred(h))).lastError;
      expect(await codes('nokey', (h) => h.state === 'failed')).toMatchObject({ code: 'SSH_KEY_UNREADABLE' });
      expect(await codes('junk', (h) => h.state === 'failed')).toMatchObject({ code: 'SSH_KEY_UNREADABLE' });
      expect(await codes('nodns', (h) => h.lastError !== null)).toMatchObject({ code: 'SSH_HOST_UNRESOLVED' });
      const refused = await codes('refused', (h) => h.lastError !== null);
      expect(refused).toMatchObject({ code: 'SSH_CONNECT_FAILED' });
      expect(refused!.message).toContain('ECONNREFUSED');
      const rudeErr = await codes('rude', (h) => h.lastError !== null);
      expect(rudeErr!.code).toBe('SSH_CONNECT_FAILED');
      const wrong = await codes('wrongkey', (h) => h.state === 'failed');
      expect(wrong).toMatchObject({ code: 'SSH_AUTH_FAILED' });
      expect(wrong!.message).toMatch(/tried publickey \(.*wrong_key\)/);
      // Network trouble is retried (with a time shown); configuration trouble waits for the operator.
      const retrying = await waitHost(fleet, 'refused', (h) => h.nextRetryAt !== null);
      expect(retrying.state).toBe('reconnecting');
      const snap = fleet.snapshot().hosts;
      expect(snap.find((h) => h.label === 'nokey')!.nextRetryAt).toBeNull();
      expect(snap.find((h) => h.label === 'good')).toMatchObject({ state: 'connected', lastError: null });
      expect(resolved).toContain('gpu-does-not-exist.invalid');
    } finally {
      rude.close();
    }
  });
});

function newUnauthorizedKey(): string {
  const file = join(ns.dir, 'wrong_key');
  keygen(file, 'ed25519');
  return file;
}

/** known_hosts with the sshd's key under an extra name (the injected resolver maps that name to it). */
function withAlias(file: string, name: string): string {
  const out = join(ns.dir, `known_hosts_${name}`);
  writeFileSync(out, readFileSync(file, 'utf8') + knownHostsLine(sshd, name));
  return out;
}
