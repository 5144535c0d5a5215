import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetService } from '../../../src-main/core/fleet/index.js';
import { staleConnectionRetries } from '../../../src-main/core/proxy/upstream-exchange.js';
import { driveRacingLoad } from '../../helpers/httplib-like-upstream.js';
import { createNetnsHost, knownHostsLine, preClean, type NetnsHost } from '../../helpers/netns-sshd.js';
import { startStubProxy, type StubProxy } from '../proxy/helpers.js';
import { startFleet, waitHost } from './helpers.js';
import { upstreamKey } from '../../../src-main/core/upstream/index.js';

// The keep-alive retry through a real tunnel: the proxy → the console's SSH
// forward → Debian's OpenSSH sshd in a network namespace → a model server with
// cpp-httplib's connection handling (test/fixtures/ssh/model-server.mjs with
// MODEL_SERVER_HTTPLIB_IDLE_MS). Its idle closes reach the proxy as an SSH
// channel close: later than on loopback, so they race requests more.

function missing(): string | null {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces)';
  if (!existsSync('/usr/sbin/sshd')) return 'no /usr/sbin/sshd; install openssh-server';
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'ignore' });
  } catch {
    return 'no `ip netns`; install iproute2';
  }
  return null;
}
const why = missing();

const IDLE_MS = 200;
let ns: NetnsHost;
let fleet: FleetService;
let p: StubProxy;

describe.skipIf(why !== null)(`keep-alive closes through OpenSSH sshd${why ? ` (skipped: ${why})` : ''}`, () => {
  beforeAll(async () => {
    preClean();
    ns = await createNetnsHost();
    const sshd = await ns.startSshd({ logLevel: 'INFO' });
    process.env.MODEL_SERVER_HTTPLIB_IDLE_MS = String(IDLE_MS);
    try {
      await ns.startModelServer(8000);
    } finally {
      delete process.env.MODEL_SERVER_HTTPLIB_IDLE_MS;
    }
    const kh = join(ns.dir, 'known_hosts');
    writeFileSync(kh, knownHostsLine(sshd));
    fleet = startFleet([
      {
        label: 'ka',
        ssh: { host: ns.addr, user: 'root', identityFile: ns.clientKey },
        knownHostsFile: kh,
        services: [{ id: 'm', kind: 'llama-server', remotePort: 8000, model: 'test-model', slots: 16 }],
      },
    ]).fleet;
    await waitHost(fleet, 'ka', (h) => h.services[0]!.tunnel.state === 'up');
    // The proxy reaches the service as the app's does: through the fleet's client of its tunnel.
    const client = fleet.upstream(upstreamKey('ka', 'm'));
    p = await startStubProxy([{ label: 'ka', id: 'm', model: 'test-model', url: client.target, slots: 16 }], {}, { resolve: () => ({ ok: true, url: client.target, client }) });
  }, 30_000);

  afterAll(async () => {
    await p?.close();
    await fleet?.dispose();
    await ns?.dispose();
  });

  it('2,000 requests at concurrency 16, half streaming, through the tunnel: no failure, some retried', async () => {
    const client = new Agent({ connections: 32 });
    try {
      const before = staleConnectionRetries();
      const { failures, issued } = await driveRacingLoad(
        { url: `${p.proxy.url}/chat/completions`, headers: { authorization: `Bearer ${p.token('t', 'interactive')}` }, model: 'test-model', dispatcher: client },
        { total: 2_000, concurrency: 16, perRound: 2, idleMs: IDLE_MS },
      );
      const retried = staleConnectionRetries() - before;
      console.log('keepalive through sshd', JSON.stringify({ retried, issued, failures: failures.length }));
      expect(issued).toBe(2_000);
      expect(failures).toEqual([]);
      expect(retried).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  }, 120_000);
});
