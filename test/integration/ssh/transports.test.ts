import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Pool, request } from 'undici';
import { upstreamKey } from '../../../src-main/core/upstream/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { HostView } from '../../../src-preload/contract/index.js';
import type { FleetService, FleetServiceOptions } from '../../../src-main/core/fleet/index.js';
import { MemoryPassphraseCache } from '../../../src-main/core/ssh/index.js';
import { createNetnsHost, fingerprintOf, keygen, knownHostsLine, preClean, type NetnsHost, type Sshd } from '../../helpers/netns-sshd.js';
import { certAuthorityLine, createCa, describeCertificate, signHostKey, signUserKey } from '../../helpers/ssh-pki.js';
import { startFleet, waitHost } from './helpers.js';
import { startSshAgent } from '../../helpers/ssh-tools.js';

// One suite, both SSH transports (issue #17): the builtin one (ssh2 in the
// console) and the openssh one (the system `ssh` with a ControlMaster), each
// against Debian's sshd in its own network namespace. Where both can do a
// thing they must show the same states, codes and tunnels; what only OpenSSH
// can do (certificates, ProxyCommand, jump chains) the builtin transport
// refuses with SSH_NEEDS_OPENSSH.
//
// Topology inside each namespace (all reach the model server on 127.0.0.1:8000):
//   addr:22    main sshd (DEBUG1: the log is the witness for "no auth before trust")
//   addr:2201  jump-1, may forward only to jump-2 (PermitOpen)
//   127.0.0.2:2202  jump-2, may forward only to the target (PermitOpen)
//   127.0.0.3:2203  the loopback-only target of the chain and of the ProxyCommand
//   addr:2204  user-certificate sshd (TrustedUserCAKeys, no authorized_keys at all)
//   addr:2205  host-certificate sshd (HostCertificate); others are started by their cases

const TRANSPORTS = ['builtin', 'openssh'] as const;
type Transport = (typeof TRANSPORTS)[number];

const authLinesOf = (sshd: Sshd) => sshd.log().split('\n').filter((l) => /userauth-request|Accepted publickey|Failed publickey|Postponed publickey/.test(l));
const connectionsOf = (sshd: Sshd) => (sshd.log().match(/Connection from /g) ?? []).length;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(TRANSPORTS)('%s transport against OpenSSH sshd', (transport: Transport) => {
  let ns: NetnsHost;
  let main: Sshd;
  let jump1: Sshd;
  let jump2: Sshd;
  let target: Sshd;
  let certSshd: Sshd;
  let hostCertSshd: Sshd;
  let kh: string;
  let hostCaKh: string;
  let controlDir: string;
  let userCert: { key: string; cert: string; expiredKey: string; expiredCert: string; otherKey: string; otherCert: string; rogueKey: string; rogueCert: string };
  const fleets: FleetService[] = [];

  beforeAll(async () => {
    preClean();
    ns = await createNetnsHost();
    // ControlPath is a unix socket (at most 107 bytes): keep the folder short.
    controlDir = mkdtempSync('/tmp/gcos-');
    main = await ns.startSshd({ logLevel: 'DEBUG1' });
    jump1 = await ns.startSshd({ port: 2201, extraConfig: ['PermitOpen 127.0.0.2:2202'] });
    jump2 = await ns.startSshd({ listen: '127.0.0.2', port: 2202, extraConfig: ['PermitOpen 127.0.0.3:2203'] });
    target = await ns.startSshd({ listen: '127.0.0.3', port: 2203 });

    const userCa = createCa(ns.dir, 'user_ca');
    const key = join(ns.dir, 'user_cert_key');
    const expiredKey = join(ns.dir, 'user_cert_expired_key');
    const otherKey = join(ns.dir, 'user_cert_other_key');
    const rogueKey = join(ns.dir, 'user_cert_rogue_key');
    for (const k of [key, expiredKey, otherKey, rogueKey]) keygen(k, 'ed25519');
    // Valid in every way the client can check, but from a CA this sshd does not trust: only sshd can say no.
    const rogueCa = createCa(ns.dir, 'rogue_ca');
    userCert = {
      key,
      cert: signUserKey(userCa, `${key}.pub`, { identity: 'cert-ok', principals: ['root'], validity: '+1h' }),
      expiredKey,
      expiredCert: signUserKey(userCa, `${expiredKey}.pub`, { identity: 'cert-expired', principals: ['root'], validity: '-2h:-1h' }),
      otherKey,
      otherCert: signUserKey(userCa, `${otherKey}.pub`, { identity: 'cert-other', principals: ['someoneelse'], validity: '+1h' }),
      rogueKey,
      rogueCert: signUserKey(rogueCa, `${rogueKey}.pub`, { identity: 'cert-rogue', principals: ['root'], validity: '+1h' }),
    };
    certSshd = await ns.startSshd({ port: 2204, logLevel: 'VERBOSE', extraConfig: [`TrustedUserCAKeys ${userCa.publicKeyFile}`, 'AuthorizedKeysFile none'] });

    const hostCa = createCa(ns.dir, 'host_ca');
    const hostKeyDir = join(ns.dir, 'host_cert_keys');
    mkdirSync(hostKeyDir);
    keygen(join(hostKeyDir, 'ssh_host_ed25519_key'), 'ed25519');
    const hostCert = signHostKey(hostCa, join(hostKeyDir, 'ssh_host_ed25519_key.pub'), { identity: 'gpu-host', principals: [ns.addr] });
    hostCertSshd = await ns.startSshd({ port: 2205, hostKeyDir, extraConfig: [`HostCertificate ${hostCert}`] });
    hostCaKh = join(ns.dir, 'known_hosts_ca');
    // Only the CA: the host's own key is known to nobody.
    writeFileSync(hostCaKh, certAuthorityLine(hostCa, ns.addr, 2205));

    await ns.startModelServer(8000);
    kh = join(ns.dir, 'known_hosts');
    writeFileSync(kh, [main, jump1, certSshd].map((s) => knownHostsLine(s)).join('') + knownHostsLine(jump2, '127.0.0.2') + knownHostsLine(target, '127.0.0.3'));
  }, 60_000);

  afterEach(async () => {
    await Promise.all(fleets.splice(0).map((f) => f.dispose()));
  });

  afterAll(async () => {
    await ns?.dispose();
    if (controlDir) rmSync(controlDir, { recursive: true, force: true });
  });

  function host(label: string, ssh: Record<string, unknown>, extra: Record<string, unknown> = {}) {
    return {
      label,
      ssh: { host: ns.addr, port: 22, user: 'root', transport, ...ssh },
      knownHostsFile: kh,
      services: [{ id: 'm', kind: 'vllm' as const, remotePort: 8000, model: `test-model-${label}` }],
      ...extra,
    };
  }

  function fleetOf(hosts: ReturnType<typeof host>[], options: Partial<FleetServiceOptions> = {}) {
    // Both transports get it: the builtin one has no use for it.
    const r = startFleet(hosts, { openssh: { controlDir }, ...options });
    fleets.push(r.fleet);
    return r;
  }

  const tunnelUp = (h: HostView) => h.services[0]!.tunnel.state === 'up';

  /** The tunnel answers with the model server's list (not just "a port is open"): on its public port, and on the console's private end. */
  async function expectTunnelAnswers(fleet: FleetService, label: string): Promise<string> {
    const url = fleet.snapshot().hosts.find((h) => h.label === label)!.services[0]!.tunnel.localUrl!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await request(`${url}/v1/models`);
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(await res.body.text())).toMatchObject({ data: [{ id: 'test-model' }] });
    // The console's own path: the service's client, bound to the tunnel's private socket.
    const own = await fleet.upstream(upstreamKey(label, 'm')).request({ path: '/v1/models', deadlineMs: 10_000, maxBodyBytes: 1 << 20 });
    expect(own.status).toBe(200);
    return url;
  }

  /** Exec lands on the sshd we meant: SSH_CONNECTION ends with that server's address and port. */
  async function expectExecOn(fleet: FleetService, label: string, sshd: Sshd, listen = sshd.listen): Promise<void> {
    const r = await fleet.exec(label, 'echo "$SSH_CONNECTION"; echo $((6 * 7))', { timeoutMs: 5_000 });
    expect(r.exitCode).toBe(0);
    const [conn, answer] = r.stdout.trim().split('\n');
    expect(conn).toMatch(new RegExp(` ${listen.replace(/\./g, '\\.')} ${sshd.port}$`));
    expect(answer).toBe('42');
  }

  function newAuthorizedKey(name: string, passphrase = ''): string {
    const file = join(ns.dir, name);
    keygen(file, 'ed25519');
    if (passphrase) execFileSync('ssh-keygen', ['-q', '-p', '-N', passphrase, '-P', '', '-f', file]);
    ns.authorize(readFileSync(`${file}.pub`, 'utf8'));
    return file;
  }

  function expectNeedsOpenssh(h: HostView): void {
    expect(h.state).toBe('failed');
    expect(h.lastError).toMatchObject({ code: 'SSH_NEEDS_OPENSSH', message: expect.stringContaining('needs the openssh transport') });
    expect(h.nextRetryAt).toBeNull();
  }

  it('1. key file: connected, tunnel answers, exec runs on the host, exec-based GPU detection answered', async () => {
    const { fleet } = fleetOf([host('key', { identityFile: ns.clientKey })]);
    const h = await waitHost(fleet, 'key', tunnelUp);
    expect(h).toMatchObject({ state: 'connected', lastError: null, hostKeyFingerprint: main.fingerprint });
    expect(h.services[0]!.tunnel.lastProbe).toMatchObject({ ok: true, error: null });
    await expectTunnelAnswers(fleet, 'key');
    await expectExecOn(fleet, 'key', main);
    // Telemetry over exec: GPU detection ran on the host and answered (readings, or TELEMETRY_NO_GPU_TOOL on a
    // machine without one: the namespace shares the test machine's files), not an SSH_* error.
    const t = await waitHost(fleet, 'key', (x) => x.gpus.length > 0 || /^TELEMETRY_/.test(x.gpuStaleReason ?? ''), 8_000);
    expect(t.gpuStaleReason ?? '').not.toMatch(/SSH_/);
    expect(main.log()).toMatch(new RegExp(`Accepted publickey for root from ${ns.peerAddr.replace(/\./g, '\\.')}`));
  });

  it('2. ssh-agent through ssh.identityAgent (SSH_AUTH_SOCK unset): the agent key is the one sshd accepts', async () => {
    const agentKey = newAuthorizedKey('id_agent');
    const sock = join(ns.dir, 'agent.sock');
    const agent = await startSshAgent(sock, [agentKey]);
    const saved = process.env['SSH_AUTH_SOCK'];
    delete process.env['SSH_AUTH_SOCK'];
    try {
      const { fleet } = fleetOf([host('agent', { identityAgent: sock })]);
      const h = await waitHost(fleet, 'agent', tunnelUp);
      expect(h.state).toBe('connected');
      await expectTunnelAnswers(fleet, 'agent');
      expect(main.log()).toContain(`Accepted publickey for root from ${ns.peerAddr}`);
      expect(main.log()).toMatch(new RegExp(`Accepted publickey for root .*ED25519 ${fingerprintOf(`${agentKey}.pub`).replace(/[+/]/g, '\\$&')}`));
    } finally {
      if (saved !== undefined) process.env['SSH_AUTH_SOCK'] = saved;
      agent.kill();
    }
  });

  it('3. encrypted key: a passphrase preset in fleet.ssh.passphrases unlocks it; without one the host asks (SSH_PASSPHRASE_REQUIRED)', async () => {
    const pass = 'correct horse battery';
    const enc = newAuthorizedKey('id_enc', pass);
    const asks = newAuthorizedKey('id_enc_ask', 'another one');
    expect(readFileSync(enc, 'utf8')).toContain('BEGIN OPENSSH PRIVATE KEY');
    expect(() => execFileSync('ssh-keygen', ['-y', '-P', '', '-f', enc], { stdio: 'pipe' })).toThrow(); // really encrypted
    const passphrases = new MemoryPassphraseCache();
    passphrases.set(enc, pass); // before start: the shared cache is what fleet.ssh.passphrases returns
    const { fleet, changes } = fleetOf([host('enc', { identityFile: enc }), host('ask', { identityFile: asks })], { sshServices: { passphrases } });
    expect(fleet.ssh.passphrases).toBe(passphrases);
    const h = await waitHost(fleet, 'enc', tunnelUp);
    expect(h).toMatchObject({ state: 'connected', credentialPrompt: null, lastError: null });
    await expectTunnelAnswers(fleet, 'enc');
    const ask = await waitHost(fleet, 'ask', (x) => x.state === 'failed');
    expect(ask.lastError).toMatchObject({ code: 'SSH_PASSPHRASE_REQUIRED' });
    expect(ask.credentialPrompt).toEqual({ kind: 'passphrase', keyFile: asks, reason: 'required' });
    expect(ask.nextRetryAt).toBeNull();
    expect(JSON.stringify(fleet.snapshot())).not.toContain(pass);
    expect(changes.some((c) => JSON.stringify(c.error?.toJSON() ?? {}).includes(pass))).toBe(false);
  });

  it('4. user certificate (sshd trusts the CA, no authorized_keys): openssh connects; expired, wrong-principal and untrusted-CA certificates fail clearly; ssh2 refuses', async () => {
    // The fixture itself: what ssh-keygen says the certificates are.
    expect(describeCertificate(userCert.cert)).toMatch(/Type: ssh-ed25519-cert-v01@openssh.com user certificate[\s\S]*Key ID: "cert-ok"[\s\S]*Principals: \n\s+root\n/);
    expect(describeCertificate(userCert.otherCert)).toMatch(/Principals: \n\s+someoneelse\n/);
    const { fleet } = fleetOf([
      host('plain', { identityFile: ns.clientKey }),
      host('cert', { port: 2204, identityFile: userCert.key, certificateFile: userCert.cert }),
      host('cert-expired', { port: 2204, identityFile: userCert.expiredKey, certificateFile: userCert.expiredCert }),
      host('cert-other', { port: 2204, identityFile: userCert.otherKey, certificateFile: userCert.otherCert }),
      host('cert-rogue', { port: 2204, identityFile: userCert.rogueKey, certificateFile: userCert.rogueCert }),
      // The key the main sshd accepts is refused here: this sshd reads no authorized_keys at all.
      host('no-cert', { port: 2204, identityFile: ns.clientKey }),
    ]);
    const noCert = await waitHost(fleet, 'no-cert', (x) => x.state === 'failed');
    expect(noCert.lastError).toMatchObject({ code: 'SSH_AUTH_FAILED' });
    if (transport === 'builtin') {
      for (const label of ['cert', 'cert-expired', 'cert-other', 'cert-rogue']) expectNeedsOpenssh(await waitHost(fleet, label, (x) => x.state === 'failed'));
    } else {
      const ok = await waitHost(fleet, 'cert', tunnelUp);
      expect(ok).toMatchObject({ state: 'connected', lastError: null, hostKeyFingerprint: certSshd.fingerprint });
      await expectTunnelAnswers(fleet, 'cert');
      await expectExecOn(fleet, 'cert', certSshd);
      expect(certSshd.log()).toMatch(/Accepted publickey for root .* ED25519-CERT SHA256:\S+ ID cert-ok/);
      // What the client can read off the certificate it says itself (ssh would only hear
      // "Permission denied (publickey)"); what only sshd knows (the CA) is an auth failure.
      const expected: Record<string, { code: string; message: RegExp }> = {
        'cert-expired': { code: 'SSH_CERTIFICATE_INVALID', message: /expired/ },
        'cert-other': { code: 'SSH_CERTIFICATE_INVALID', message: /someoneelse/ },
        'cert-rogue': { code: 'SSH_AUTH_FAILED', message: /./ },
      };
      for (const [label, want] of Object.entries(expected)) {
        const bad = await waitHost(fleet, label, (x) => x.state === 'failed');
        expect({ label, code: bad.lastError?.code }).toEqual({ label, code: want.code });
        expect(bad.lastError!.message).toMatch(want.message);
        expect(bad.nextRetryAt).toBeNull();
        expect(bad.services[0]!.tunnel.state).not.toBe('up');
      }
      expect(certSshd.log()).toMatch(/Failed publickey for root .* ED25519-CERT SHA256:\S+ ID cert-rogue/);
    }
    // The rest of the fleet is untouched.
    expect(await waitHost(fleet, 'plain', tunnelUp)).toMatchObject({ state: 'connected', lastError: null });
    await expectTunnelAnswers(fleet, 'plain');
  });

  it('5. host certificate, known_hosts holds only `@cert-authority`: openssh connects; ssh2 (negotiates no certificates) sees an unknown plain key', async () => {
    const { fleet } = fleetOf([host('hostcert', { port: 2205, identityFile: ns.clientKey }, { knownHostsFile: hostCaKh })]);
    if (transport === 'openssh') {
      const h = await waitHost(fleet, 'hostcert', tunnelUp);
      expect(h).toMatchObject({ state: 'connected', lastError: null, hostKey: null });
      await expectTunnelAnswers(fleet, 'hostcert');
      expect(hostCertSshd.log()).toMatch(/Accepted publickey for root/);
    } else {
      // ssh2 offers no *-cert-v01 host key algorithms, so sshd presents its plain key, which no line
      // trusts (the console skips @cert-authority lines): the operator is asked, nothing is sent.
      const h = await waitHost(fleet, 'hostcert', (x) => x.state === 'awaiting-trust');
      expect(h.hostKey).toMatchObject({ status: 'unknown', role: 'host', keyType: 'ssh-ed25519', fingerprint: hostCertSshd.fingerprint });
      expect(h.hostKey!.endpoint).toContain(ns.addr);
      expect(authLinesOf(hostCertSshd)).toEqual([]);
    }
  });

  it('6. two jump hops in order (jump-1 may forward only to jump-2, jump-2 only to the target): openssh connects; ssh2 refuses', async () => {
    const chain = `root@${ns.addr}:2201,root@127.0.0.2:2202`;
    const { fleet } = fleetOf([
      host('chain', { host: '127.0.0.3', port: 2203, identityFile: ns.clientKey, jumpHost: chain }),
      // The fixture: jump-1 alone cannot reach the target (PermitOpen), so a connected chain went through jump-2.
      host('one-hop', { host: '127.0.0.3', port: 2203, identityFile: ns.clientKey, jumpHost: `root@${ns.addr}:2201` }),
    ]);
    const oneHop = await waitHost(fleet, 'one-hop', (x) => x.lastError !== null, 10_000);
    expect(oneHop.state).not.toBe('connected');
    // The same code as ssh2's: OpenSSH says "channel 0: open failed: administratively prohibited: open failed" and "stdio forwarding failed".
    expect.soft(oneHop.lastError).toMatchObject({ code: 'SSH_JUMP_FAILED' });
    // sshd may write its log line a moment after the client saw the refusal.
    await expect.poll(() => jump1.log(), { timeout: 5_000, interval: 50 }).toMatch(/to connect to host 127\.0\.0\.3 port 2203, but the request was denied/);
    if (transport === 'builtin') {
      expectNeedsOpenssh(await waitHost(fleet, 'chain', (x) => x.state === 'failed'));
      return;
    }
    const h = await waitHost(fleet, 'chain', tunnelUp, 10_000);
    expect(h).toMatchObject({ state: 'connected', lastError: null, hostKeyFingerprint: target.fingerprint, jumpHost: chain });
    await expectTunnelAnswers(fleet, 'chain');
    await expectExecOn(fleet, 'chain', target, '127.0.0.3');
    expect(jump1.log()).toMatch(new RegExp(`Accepted publickey for root from ${ns.peerAddr.replace(/\./g, '\\.')}`));
    expect(jump2.log()).toMatch(/Accepted publickey for root from 127\.0\.0\.1/);
    expect(target.log()).toMatch(/Accepted publickey for root from 127\.0\.0\.1/);
  });

  it('7. ProxyCommand (`ssh -W %h:%p` through the main sshd): openssh connects; one that exits at once is a clear error, not a hang; ssh2 refuses', async () => {
    const viaMain = [
      'ssh -F /dev/null -o BatchMode=yes -o IdentitiesOnly=yes',
      `-i ${ns.clientKey} -o UserKnownHostsFile=${kh} -o StrictHostKeyChecking=yes`,
      `-W %h:%p root@${ns.addr}`,
    ].join(' ');
    const startedAt = Date.now();
    const { fleet } = fleetOf([
      host('proxied', { host: '127.0.0.3', port: 2203, identityFile: ns.clientKey, proxyCommand: viaMain }),
      host('proxy-false', { host: '127.0.0.3', port: 2203, identityFile: ns.clientKey, proxyCommand: 'false' }),
    ]);
    if (transport === 'builtin') {
      expectNeedsOpenssh(await waitHost(fleet, 'proxied', (x) => x.state === 'failed'));
      expectNeedsOpenssh(await waitHost(fleet, 'proxy-false', (x) => x.state === 'failed'));
      return;
    }
    const h = await waitHost(fleet, 'proxied', tunnelUp, 10_000);
    expect(h).toMatchObject({ state: 'connected', lastError: null, hostKeyFingerprint: target.fingerprint });
    await expectTunnelAnswers(fleet, 'proxied');
    await expectExecOn(fleet, 'proxied', target, '127.0.0.3');
    // OpenSSH says "kex_exchange_identification: Connection closed by remote host" and exits 255 at once.
    const dead = await waitHost(fleet, 'proxy-false', (x) => x.lastError !== null, 5_000);
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    expect(['failed', 'reconnecting']).toContain(dead.state);
    expect(dead.lastError!.code).toMatch(/^SSH_[A-Z_]+$/);
    expect(dead.lastError!.message.length).toBeGreaterThan(0);
    expect(dead.services[0]!.tunnel.state).not.toBe('up');
  });

  it('8. unknown host key: awaiting-trust with the fingerprint and no auth attempt at sshd; trusting it connects', async () => {
    const emptyKh = join(ns.dir, 'known_hosts_empty');
    writeFileSync(emptyKh, '# nothing known\n');
    const authBefore = authLinesOf(main).length;
    const connsBefore = connectionsOf(main);
    const { fleet } = fleetOf([host('unknown', { identityFile: ns.clientKey }, { knownHostsFile: emptyKh })]);
    const waiting = await waitHost(fleet, 'unknown', (x) => x.state === 'awaiting-trust');
    expect(waiting.hostKey).toMatchObject({ status: 'unknown', role: 'host', endpoint: ns.addr, keyType: 'ssh-ed25519', fingerprint: main.fingerprint });
    expect(waiting.hostKeyFingerprint).toBe(main.fingerprint);
    expect(waiting.services[0]!.tunnel.state).toBe('idle');
    // The key came off the wire (sshd saw us), yet no credential was offered.
    expect(connectionsOf(main)).toBeGreaterThan(connsBefore);
    await sleep(500); // a late auth attempt would show up here
    expect(authLinesOf(main).slice(authBefore)).toEqual([]);
    expect(await fleet.trustHostKey('unknown', main.fingerprint)).toBe('connected');
    await waitHost(fleet, 'unknown', tunnelUp);
    await expectTunnelAnswers(fleet, 'unknown');
    expect(authLinesOf(main).slice(authBefore).some((l) => l.includes('Accepted publickey'))).toBe(true);
  });

  it('9. changed host key (sshd reinstalled while the fleet runs): failed with SSH_HOST_KEY_CHANGED naming both keys, nothing sent, no retry', async () => {
    const before = await ns.startSshd({ port: 2206 });
    const changedKh = join(ns.dir, 'known_hosts_2206');
    writeFileSync(changedKh, knownHostsLine(before));
    const { fleet } = fleetOf([host('changed', { port: 2206, identityFile: ns.clientKey }, { knownHostsFile: changedKh })]);
    await waitHost(fleet, 'changed', tunnelUp);
    await before.kill();
    const after = await ns.startSshd({ port: 2206 }); // fresh host keys: a reinstall
    expect(after.fingerprint).not.toBe(before.fingerprint);
    const h = await waitHost(fleet, 'changed', (x) => x.state === 'failed', 15_000);
    expect(h.lastError!.code).toBe('SSH_HOST_KEY_CHANGED');
    expect(h.lastError!.message).toContain(after.fingerprint);
    expect(h.lastError!.message).toContain(before.fingerprint);
    expect(h.hostKey).toMatchObject({ status: 'changed', role: 'host', fingerprint: after.fingerprint, knownFingerprints: [before.fingerprint], knownSource: 'known_hosts' });
    expect(h.hostKey!.endpoint).toContain(ns.addr);
    expect(h.nextRetryAt).toBeNull();
    expect(h.services[0]!.tunnel.state).not.toBe('up');
    const conns = connectionsOf(after);
    await sleep(1_500);
    expect(connectionsOf(after)).toBe(conns); // no automatic retry
    expect(authLinesOf(after)).toEqual([]);
  }, 30_000);

  it('10. link cut for 20 s: reconnecting while down, connected and the same tunnel URL answering after', async () => {
    const { fleet, changes } = fleetOf([host('cut', { identityFile: ns.clientKey, keepaliveIntervalMs: 1_000 })]);
    await waitHost(fleet, 'cut', tunnelUp);
    const url = await expectTunnelAnswers(fleet, 'cut');
    const cutAt = Date.now();
    ns.linkDown();
    try {
      const down = await waitHost(fleet, 'cut', (x) => x.state === 'reconnecting', 8_000);
      expect(Date.now() - cutAt).toBeLessThan(6_000); // keepalive sees it, not TCP's minutes
      expect(down.services[0]!.tunnel.state).toBe('reconnecting');
      await sleep(20_000 - (Date.now() - cutAt));
      // Still down after 20 s: retried and said so, never "connected" on a dead link.
      const still = fleet.snapshot().hosts[0]!;
      expect(['reconnecting', 'connecting']).toContain(still.state); // 'connecting' if a retry is under way right now
      expect(still.lastError).not.toBeNull();
      expect(changes.slice(changes.findIndex((c) => c.state === 'reconnecting')).some((c) => c.state === 'connected')).toBe(false);
    } finally {
      ns.linkUp();
    }
    const upAt = Date.now();
    await waitHost(fleet, 'cut', (x) => x.state === 'connected' && tunnelUp(x), 15_000);
    expect(Date.now() - upAt).toBeLessThan(12_000);
    expect(await expectTunnelAnswers(fleet, 'cut')).toBe(url);
    expect(changes.map((c) => c.state)).toEqual(expect.arrayContaining(['connected', 'reconnecting']));
  }, 60_000);

  it('11. sshd restart (killed, started again with the same host keys): reconnecting, then connected with the tunnel up', async () => {
    let sshd = await ns.startSshd({ port: 2207 });
    const restartKh = join(ns.dir, 'known_hosts_2207');
    writeFileSync(restartKh, knownHostsLine(sshd));
    const { fleet } = fleetOf([host('restart', { port: 2207, identityFile: ns.clientKey, keepaliveIntervalMs: 1_000 }, { knownHostsFile: restartKh })]);
    await waitHost(fleet, 'restart', tunnelUp);
    const url = await expectTunnelAnswers(fleet, 'restart');
    await sshd.kill();
    const down = await waitHost(fleet, 'restart', (x) => x.state === 'reconnecting', 5_000);
    expect(down.lastError).not.toBeNull();
    sshd = await ns.startSshd({ port: 2207, hostKeyDir: dirname(sshd.hostKeyFile) });
    const h = await waitHost(fleet, 'restart', (x) => x.state === 'connected' && tunnelUp(x), 10_000);
    expect(h).toMatchObject({ lastError: null, hostKeyFingerprint: sshd.fingerprint });
    expect(await expectTunnelAnswers(fleet, 'restart')).toBe(url);
    await expectExecOn(fleet, 'restart', sshd);
  }, 30_000);

  it('12. 2,000 HTTP requests at concurrency 16 through one tunnel: no failures, one SSH connection', async () => {
    const { fleet } = fleetOf([host('load', { identityFile: ns.clientKey })]);
    await waitHost(fleet, 'load', tunnelUp);
    const url = await expectTunnelAnswers(fleet, 'load');
    const pool = new Pool(url, { connections: 16, pipelining: 1 });
    const failures: string[] = [];
    let ok = 0;
    try {
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          for (let i = 0; i < 125; i++) {
            try {
              const res = await pool.request({ path: '/v1/models', method: 'GET' });
              const body = await res.body.text();
              if (res.statusCode === 200 && body.includes('"test-model"')) ok++;
              else failures.push(`${res.statusCode}: ${body.slice(0, 200)}`);
            } catch (err) {
              failures.push((err as { code?: string }).code ?? (err as Error).message);
            }
          }
        }),
      );
    } finally {
      await pool.close();
    }
    expect(failures.slice(0, 5)).toEqual([]);
    expect(ok).toBe(2_000);
    expect(fleet.resourceCounts().connections).toBe(1);
    expect(fleet.snapshot().hosts[0]!.state).toBe('connected');
  }, 60_000);

  it("13. the tunnel's public port refuses engine admin paths (403, the server never sees them); the console's private end passes them", async () => {
    const { fleet } = fleetOf([host('gate', { identityFile: ns.clientKey })]);
    await waitHost(fleet, 'gate', tunnelUp);
    const url = await expectTunnelAnswers(fleet, 'gate');
    const marker = `gate-${transport}-${Date.now()}`;
    for (const path of ['/sleep?level=1', '/collective_rpc', '/%73leep', '//sleep', '/slots/0?action=erase', '/models/unload']) {
      const res = await request(`${url}${path}${path.includes('?') ? '&' : '?'}${marker}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(res.statusCode, path).toBe(403);
      expect(((await res.body.json()) as { error: { code: string } }).error.code).toBe('TUNNEL_ADMIN_PATH_REFUSED');
    }
    const client = fleet.upstream(upstreamKey('gate', 'm'));
    const seen = async () => JSON.parse((await client.request({ path: '/_requests', deadlineMs: 10_000, maxBodyBytes: 1 << 20 })).text) as string[];
    expect((await seen()).filter((r) => r.includes(marker))).toEqual([]);
    // The console's own path reaches the same endpoint (the stand-in answers 404: it has no /sleep).
    const own = await client.request({ method: 'POST', path: `/sleep?${marker}`, body: '{}', deadlineMs: 10_000, maxBodyBytes: 1 << 20 });
    expect(own.status).toBe(404);
    expect((await seen()).filter((r) => r.includes(marker))).toEqual([`POST /sleep?${marker}`]);
  }, 30_000);
});
