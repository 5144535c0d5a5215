import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../../../src-main/core/api.js';
import type { App } from '../../../src-main/core/app.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { createNetnsHost, knownHostsLine, preClean, type NetnsHost, type Sshd } from '../../helpers/netns-sshd.js';
import { waitHost } from './helpers.js';

// Host-key trust through the real paths (contract → api → app → fleet →
// ssh2 → OpenSSH sshd in a namespace), with the sshd log at DEBUG1 as the
// witness that no authentication request reaches the server before the key is trusted.

let ns: NetnsHost;
let sshd: Sshd;
let dataDir: string;
let running: TestApp | null = null;

beforeAll(async () => {
  preClean();
  ns = await createNetnsHost();
  sshd = await ns.startSshd({ logLevel: 'DEBUG1' });
  await ns.startModelServer(8000);
}, 30_000);

afterEach(async () => {
  await stop();
});

afterAll(async () => {
  await ns?.dispose();
});

async function stop(): Promise<void> {
  if (!running) return;
  await running.dispose();
  running = null;
}

function writeConfig(knownHostsText: string, port = 22): string {
  const kh = join(dataDir, `known_hosts_${Math.random().toString(36).slice(2)}`);
  writeFileSync(kh, knownHostsText);
  const file = join(dataDir, 'config.yaml');
  writeFileSync(
    file,
    [
      'hosts:',
      '  - label: gpu-ns',
      `    ssh: { host: ${ns.addr}, port: ${port}, user: root, identityFile: ${ns.clientKey}, keepaliveIntervalMs: 1000 }`,
      `    knownHostsFile: ${kh}`,
      '    services:',
      '      - { id: m, kind: vllm, remotePort: 8000, model: test-model }',
      '',
    ].join('\n'),
  );
  return file;
}

async function start(configFile: string): Promise<{ app: App; api: Api }> {
  running = await startTestApp({ dataDir, configFile, pollIntervalMs: 250 });
  return running;
}

async function call<T>(api: Api, channel: string, input: unknown): Promise<T> {
  const r = await api.invoke(channel, input, { caller: 'test' });
  if (!r.ok) throw Object.assign(new Error(r.error.message), r.error);
  return r.data as T;
}

const authLines = () => sshd.log().split('\n').filter((l) => /userauth-request|Accepted publickey|Failed publickey/.test(l));

describe('host-key trust against OpenSSH sshd', () => {
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'gc-trust-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('unknown key → awaiting-trust with the SHA256 fingerprint, no auth reaches sshd; refusal and confirmation are audited; trust persists', async () => {
    const before = authLines().length;
    const { app, api } = await start(writeConfig('# nothing known\n'));
    const waiting = await waitHost(app.fleet, 'gpu-ns', (h) => h.state === 'awaiting-trust');
    expect(waiting.hostKeyFingerprint).toBe(sshd.fingerprint);
    expect(waiting.hostKey).toMatchObject({ status: 'unknown', role: 'host', endpoint: ns.addr, keyType: 'ssh-ed25519', fingerprint: sshd.fingerprint });
    expect(waiting.services[0]!.tunnel.state).toBe('idle');
    // The handshake happened (sshd saw us) but no credential was offered.
    expect(sshd.log()).toMatch(new RegExp(`Connection from ${ns.peerAddr.replace(/\./g, '\\.')}`));
    expect(authLines().length).toBe(before);

    // A wrong fingerprint is refused and audited; nothing is trusted.
    const wrongFp = 'SHA256:' + 'A'.repeat(43);
    await expect(call(api, 'hosts.trust', { label: 'gpu-ns', fingerprint: wrongFp })).rejects.toMatchObject({ code: 'SSH_FINGERPRINT_MISMATCH' });
    // Refuse: the host stops, no retry.
    const refused = await call<{ state: string }>(api, 'hosts.refuseTrust', { label: 'gpu-ns', fingerprint: sshd.fingerprint });
    expect(refused.state).toBe('failed');
    expect(app.fleet.snapshot().hosts[0]!.lastError).toMatchObject({ code: 'SSH_TRUST_REFUSED' });
    expect(authLines().length).toBe(before);

    // Connect again → waits again → confirm → connected, tunnel up.
    await call(api, 'hosts.connect', { label: 'gpu-ns' });
    await waitHost(app.fleet, 'gpu-ns', (h) => h.state === 'awaiting-trust');
    const trusted = await call<{ state: string }>(api, 'hosts.trust', { label: 'gpu-ns', fingerprint: sshd.fingerprint });
    expect(trusted.state).toBe('connected');
    await waitHost(app.fleet, 'gpu-ns', (h) => h.services[0]!.tunnel.state === 'up');
    expect(authLines().length).toBeGreaterThan(before);

    // The Test action over the contract: result with latencies, and an audit row.
    const test = await call<{ ok: boolean; steps: { name: string; latencyMs: number }[] }>(api, 'tunnels.test', { label: 'gpu-ns', serviceId: 'm' });
    expect(test.ok).toBe(true);
    expect(test.steps.map((s) => s.name)).toEqual(['models', 'chat']);
    expect(app.store.audit.list({ type: 'tunnel.test' })[0]).toMatchObject({ target: 'gpu-ns/m', payload: { ok: true } });
    expect((await waitHost(app.fleet, 'gpu-ns', (h) => h.services[0]!.tunnel.lastTest != null)).services[0]!.tunnel.lastTest).toMatchObject({ ok: true });

    const events = app.store.audit.list({ limit: 50 }).map((e) => ({ type: e.type, actor: e.actor, payload: e.payload }));
    expect(events.find((e) => e.type === 'ssh.hostkey.unknown')?.payload).toMatchObject({ fingerprint: sshd.fingerprint, endpoint: ns.addr });
    expect(events.find((e) => e.type === 'ssh.hostkey.trust.rejected')?.payload).toMatchObject({ code: 'SSH_FINGERPRINT_MISMATCH' });
    expect(events.find((e) => e.type === 'ssh.hostkey.refused')).toMatchObject({ actor: expect.stringMatching(/^operator:.*@test$/), payload: { fingerprint: sshd.fingerprint } });
    expect(events.find((e) => e.type === 'ssh.hostkey.trusted')).toMatchObject({ actor: expect.stringMatching(/^operator:/), payload: { fingerprint: sshd.fingerprint, endpoint: ns.addr } });
    expect(app.store.audit.verify().ok).toBe(true);

    // The console's trust store is in the settings table: a restart connects without asking.
    expect(app.store.settings.get('ssh.trustedHostKeys')).toEqual([expect.objectContaining({ endpoint: ns.addr, fingerprint: sshd.fingerprint, keyType: 'ssh-ed25519' })]);
    await stop();
    const again = await start(join(dataDir, 'config.yaml'));
    await waitHost(again.app.fleet, 'gpu-ns', (h) => h.services[0]!.tunnel.state === 'up');
  });

  it('changed key (host reinstalled) → SSH_HOST_KEY_CHANGED naming old and new fingerprints, audited, no automatic retry; known_hosts and console store alike', async () => {
    // known_hosts (hashed) holds the old key; sshd restarts with a new one.
    const oldKh = join(dataDir, 'kh_hashed');
    writeFileSync(oldKh, knownHostsLine(sshd));
    execFileSync('ssh-keygen', ['-H', '-f', oldKh], { stdio: 'ignore' });
    expect(readFileSync(oldKh, 'utf8')).toMatch(/^\|1\|/);
    const oldFp = sshd.fingerprint;
    const { app } = await start(writeConfig(readFileSync(oldKh, 'utf8')));
    await waitHost(app.fleet, 'gpu-ns', (h) => h.services[0]!.tunnel.state === 'up'); // hashed entry matches
    await stop();

    await sshd.kill();
    sshd = await ns.startSshd({ logLevel: 'DEBUG1' }); // fresh host keys: a reinstall
    expect(sshd.fingerprint).not.toBe(oldFp);
    const before = authLines().length;
    const { app: app2, api } = await start(writeConfig(readFileSync(oldKh, 'utf8')));
    const h = await waitHost(app2.fleet, 'gpu-ns', (x) => x.state === 'failed');
    expect(h.lastError!.code).toBe('SSH_HOST_KEY_CHANGED');
    expect(h.lastError!.message).toContain(sshd.fingerprint);
    expect(h.lastError!.message).toContain(oldFp);
    expect(h.hostKey).toMatchObject({ status: 'changed', fingerprint: sshd.fingerprint, knownFingerprints: [oldFp], knownSource: 'known_hosts' });
    expect(h.nextRetryAt).toBeNull();
    // Trusting it from the console is refused: known_hosts is authoritative.
    await expect(call(api, 'hosts.trust', { label: 'gpu-ns', fingerprint: sshd.fingerprint })).rejects.toMatchObject({ code: 'SSH_HOST_KEY_CHANGED' });
    const connectionsBefore = (sshd.log().match(/Connection from/g) ?? []).length;
    await new Promise((r) => setTimeout(r, 1_500));
    expect((sshd.log().match(/Connection from/g) ?? []).length).toBe(connectionsBefore); // no automatic retry
    expect(authLines().length).toBe(before);
    const changed = app2.store.audit.list({ type: 'ssh.hostkey.changed' });
    expect(changed[0]).toMatchObject({ actor: 'system', payload: { presentedFingerprint: sshd.fingerprint, knownFingerprints: [oldFp], outcome: 'refused' } });
    await stop();

    // The console's own store behaves the same: it still holds the first sshd's key from the previous test.
    const { app: app3 } = await start(writeConfig('# nothing\n'));
    const h3 = await waitHost(app3.fleet, 'gpu-ns', (x) => x.state === 'failed');
    expect(h3.lastError!.code).toBe('SSH_HOST_KEY_CHANGED');
    expect(h3.hostKey).toMatchObject({ knownSource: 'console', fingerprint: sshd.fingerprint });
    expect(authLines().length).toBe(before);

    // Recovery after a real reinstall: forget the console's old confirmation (old fingerprint named,
    // label typed), then confirm the new key like any unknown one. Mistakes change nothing.
    const api3 = running!.api;
    const consoleOld = h3.hostKey!.knownFingerprints[0]!;
    await expect(call(api3, 'hosts.forgetTrust', { label: 'gpu-ns', fingerprint: consoleOld, typedLabel: 'gpu' })).rejects.toMatchObject({ code: 'SSH_FORGET_MISMATCH' });
    await expect(call(api3, 'hosts.forgetTrust', { label: 'gpu-ns', fingerprint: sshd.fingerprint, typedLabel: 'gpu-ns' })).rejects.toMatchObject({
      code: 'SSH_FORGET_MISMATCH',
      message: expect.stringContaining(consoleOld),
    });
    expect(app3.store.audit.list({ type: 'ssh.hostkey.forgotten' })).toEqual([]);
    await call(api3, 'hosts.forgetTrust', { label: 'gpu-ns', fingerprint: consoleOld, typedLabel: 'gpu-ns' });
    const waiting = await waitHost(app3.fleet, 'gpu-ns', (x) => x.state === 'awaiting-trust');
    expect(waiting.hostKey).toMatchObject({ status: 'unknown', fingerprint: sshd.fingerprint });
    expect(authLines().length).toBe(before); // still nothing sent before the new key is confirmed
    expect(app3.store.audit.list({ type: 'ssh.hostkey.forgotten' })[0]).toMatchObject({ target: 'gpu-ns', payload: { fingerprints: [consoleOld], presentedFingerprint: sshd.fingerprint } });
    await call(api3, 'hosts.trust', { label: 'gpu-ns', fingerprint: sshd.fingerprint });
    await waitHost(app3.fleet, 'gpu-ns', (x) => x.state === 'connected');
  });

  it('[host]:port entries: an sshd on port 2200 is trusted by a `[addr]:2200` known_hosts line', async () => {
    const alt = await ns.startSshd({ port: 2200, logLevel: 'INFO' });
    const { app } = await start(writeConfig(`[${ns.addr}]:2200 ${alt.hostKeyPublic}\n`, 2200));
    const h = await waitHost(app.fleet, 'gpu-ns', (x) => x.services[0]!.tunnel.state === 'up');
    expect(h.hostKeyFingerprint).toBe(alt.fingerprint);
  });
});
