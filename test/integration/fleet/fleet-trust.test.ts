import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger, type Logger } from '../../../src-main/core/base/index.js';
import { ConfigSchema, type Config } from '../../../src-main/core/config/index.js';
import { startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';
import { FleetService, type HostStateChange } from '../../../src-main/core/fleet/index.js';
import { waitForTick } from './helpers/wait.js';
import { generateEd25519 } from '../../../src-main/demo/keys.js';

// Host-key trust against the real demo sshd. The console's client key is
// swapped for one the demo does not accept: had any authentication been tried,
// the demo would log "ssh authentication rejected".

let dir: string;
let demo: DemoFleet;
let fleet: FleetService | null = null;
const demoLog: string[] = [];

function capture(scope = ''): Logger {
  const push = (msg: string) => demoLog.push(`${scope}${msg}`);
  return { debug: () => undefined, info: push, warn: push, error: push, child: (s) => capture(`${scope}${s}/`) };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fleet-trust-'));
  demo = await startDemoFleet({ dir, timeScale: 1000, decodeSpeedFactor: 20, logger: capture() });
});
afterEach(async () => {
  await fleet?.dispose();
  fleet = null;
  demoLog.length = 0;
});
afterAll(async () => {
  await demo?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

function l20Config(knownHostsText: string, identityFile?: string): Config {
  const host = demo.config.hosts.find((h) => h.label === 'l20-poc')!;
  const knownHostsFile = join(dir, `kh-${Math.random().toString(36).slice(2)}`);
  writeFileSync(knownHostsFile, knownHostsText);
  return ConfigSchema.parse({
    hosts: [{ ...host, knownHostsFile, ssh: { ...host.ssh, identityFile: identityFile ?? host.ssh.identityFile } }],
  });
}

function strangerKey(): string {
  const file = join(dir, 'stranger_ed25519');
  writeFileSync(file, generateEd25519('test').pair.private, { mode: 0o600 });
  return file;
}

function start(config: Config): { fleet: FleetService; changes: HostStateChange[] } {
  const f = new FleetService({ config, pollIntervalMs: 250, logger: silentLogger });
  const changes: HostStateChange[] = [];
  f.onDidChangeHostState((c) => changes.push(c));
  fleet = f;
  f.start();
  return { fleet: f, changes };
}

describe('host-key trust on the demo fleet', () => {
  it('unknown host key → awaiting-trust with the SHA256 fingerprint; nothing authenticated, no retries', async () => {
    const { fleet: f, changes } = start(l20Config('# nothing known\n', strangerKey()));
    const snap = await waitForTick(f, (s) => s.hosts[0]!.state === 'awaiting-trust');
    const host = snap.hosts[0]!;
    expect(host.hostKeyFingerprint).toBe(demo.host('l20-poc').hostKeyFingerprint);
    expect(host.lastError).toMatchObject({ code: 'SSH_HOST_KEY_UNKNOWN' });
    expect(host.lastError!.message).toContain(demo.host('l20-poc').hostKeyFingerprint);
    expect(host.nextRetryAt).toBeNull();
    expect(host.services[0]!.tunnel).toMatchObject({ state: 'idle', localUrl: null });
    // A few more rounds: still waiting for the operator, still no authentication.
    await waitForTick(f, () => true);
    await waitForTick(f, () => true);
    expect(changes.map((c) => c.state)).toEqual(['connecting', 'awaiting-trust']);
    expect(demoLog.filter((l) => l.includes('authentication'))).toEqual([]);
  });

  it('confirming the fingerprint connects (trust kept in memory)', async () => {
    const { fleet: f } = start(l20Config('# nothing known\n'));
    await waitForTick(f, (s) => s.hosts[0]!.state === 'awaiting-trust');
    await expect(f.trustHostKey('l20-poc', 'SHA256:nope')).rejects.toMatchObject({ code: 'SSH_INVALID_FINGERPRINT' });
    expect(await f.trustHostKey('l20-poc', demo.host('l20-poc').hostKeyFingerprint)).toBe('connected');
    await waitForTick(f, (s) => s.hosts[0]!.services[0]!.tunnel.state === 'up');
  });

  it('changed host key → failed with SSH_HOST_KEY_CHANGED naming old and new fingerprints; no auth, no retry', async () => {
    const port = demo.host('l20-poc').sshPort;
    const impostor = ssh2.utils.parseKey(generateEd25519('impostor').pair.public);
    if (impostor instanceof Error) throw impostor;
    const blob = (Array.isArray(impostor) ? impostor[0] : impostor).getPublicSSH();
    const { fleet: f, changes } = start(l20Config(`[127.0.0.1]:${port} ssh-ed25519 ${blob.toString('base64')}\n`, strangerKey()));
    const snap = await waitForTick(f, (s) => s.hosts[0]!.state === 'failed');
    const host = snap.hosts[0]!;
    expect(host.lastError?.code).toBe('SSH_HOST_KEY_CHANGED');
    expect(host.lastError?.message).toContain(demo.host('l20-poc').hostKeyFingerprint);
    expect(host.hostKeyFingerprint).toBe(demo.host('l20-poc').hostKeyFingerprint);
    expect(host.nextRetryAt).toBeNull();
    await waitForTick(f, () => true);
    expect(changes.map((c) => c.state)).toEqual(['connecting', 'failed']);
    expect(demoLog.filter((l) => l.includes('authentication'))).toEqual([]);
  });

  it('a key the host does not accept → failed with SSH_AUTH_FAILED (the control for the two tests above)', async () => {
    const { fleet: f } = start(l20Config(await demoKnownHosts(), strangerKey()));
    const snap = await waitForTick(f, (s) => s.hosts[0]!.state === 'failed');
    expect(snap.hosts[0]!.lastError?.code).toBe('SSH_AUTH_FAILED');
    expect(demoLog.some((l) => l.includes('ssh authentication rejected'))).toBe(true);
  });
});

async function demoKnownHosts(): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  return readFile(demo.knownHostsFile, 'utf8');
}
