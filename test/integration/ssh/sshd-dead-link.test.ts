import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetService } from '../../../src-main/core/fleet/index.js';
import { upstreamKey, type UpstreamClient } from '../../../src-main/core/upstream/index.js';
import { createNetnsHost, knownHostsLine, preClean, type NetnsHost } from '../../helpers/netns-sshd.js';
import { startFleet, waitHost } from './helpers.js';

// A cut link (the veth goes down: no FIN, no RST, packets vanish) with SSH's
// keepalive far away (15 s interval): the console must not wait for it. Every
// poll sends something through the link and a live sshd answers at once, so a
// link silent for longer than a reading may take is dead — dropped then, and
// the stream through it ends with the reason, not at the keepalive timeout.

let ns: NetnsHost;
let fleet: FleetService;
/** The public port; the private end (where /slow, not an inference path, goes) through the service's client. */
let url: string;
let client: UpstreamClient;

const KEEPALIVE_MS = 15_000;
const POLL_MS = 1_000;
const SCRAPE_TIMEOUT_MS = 2_000;

beforeAll(async () => {
  preClean();
  ns = await createNetnsHost();
  const sshd = await ns.startSshd({ logLevel: 'INFO' });
  await ns.startModelServer(8000);
  const kh = join(ns.dir, 'known_hosts');
  writeFileSync(kh, knownHostsLine(sshd));
  fleet = startFleet(
    [
      {
        label: 'cut',
        ssh: { host: ns.addr, user: 'root', identityFile: ns.clientKey, keepaliveIntervalMs: KEEPALIVE_MS },
        knownHostsFile: kh,
        services: [{ id: 'm', kind: 'vllm', remotePort: 8000, model: 'test-model' }],
      },
    ],
    { pollIntervalMs: POLL_MS, scrapeTimeoutMs: SCRAPE_TIMEOUT_MS, sshOptions: { readyTimeoutMs: 2_000, backoff: { initialMs: 200, maxMs: 800 } } },
  ).fleet;
  await waitHost(fleet, 'cut', (h) => h.services[0]!.tunnel.state === 'up', 15_000);
  url = fleet.snapshot().hosts[0]!.services[0]!.tunnel.localUrl!;
  client = fleet.upstream(upstreamKey('cut', 'm'));
}, 30_000);

afterAll(async () => {
  await fleet?.dispose();
  await ns?.dispose();
});

describe('dead link', () => {
  it('a cut link is dropped within a few seconds (not at the 15 s keepalive) and the stream through it ends with the reason', async () => {
    // On a connection of its own (as the drill's own agent had): the service's client, not a reused socket.
    const res = await client.stream({ path: '/slow?ms=30000', deadlineMs: 60_000, freshConnection: true });
    expect(res.status).toBe(200);
    const ended = (async () => {
      try {
        for await (const _ of res.body) {
          // keep reading
        }
        return { error: null as string | null, at: performance.now() };
      } catch (err) {
        return { error: (err as { code?: string }).code ?? (err as Error).message, at: performance.now() };
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    const t0 = performance.now();
    ns.linkDown();
    try {
      const down = await waitHost(fleet, 'cut', (h) => h.state === 'reconnecting', 12_000);
      const detectMs = performance.now() - t0;
      // Silence past max(3 s, scrape timeout + 0.5 s), checked after each poll (a poll waits for its readings).
      expect(detectMs).toBeLessThan(SCRAPE_TIMEOUT_MS + 0.5 * 1000 + POLL_MS + SCRAPE_TIMEOUT_MS + 1_000);
      expect(detectMs).toBeLessThan(KEEPALIVE_MS / 2);
      expect(down.lastError?.message).toMatch(/received nothing for \d+ s/);
      const e = await ended;
      expect(e.error).not.toBeNull();
      expect(e.at - t0).toBeLessThan(KEEPALIVE_MS / 2);
    } finally {
      ns.linkUp();
    }
    await waitHost(fleet, 'cut', (h) => h.state === 'connected' && h.services[0]!.tunnel.state === 'up', 15_000);
    expect((await request(`${url}/v1/models`)).statusCode).toBe(200);
  }, 60_000);

  it('a request through the tunnel (its public port) while SSH reconnects gets 503 with Retry-After and retry-after-ms', async () => {
    ns.linkDown();
    try {
      await waitHost(fleet, 'cut', (h) => h.state === 'reconnecting', 12_000);
      const res = await request(`${url}/v1/models`);
      expect(res.statusCode).toBe(503);
      const s = Number(res.headers['retry-after']);
      expect(Number.isInteger(s) && s >= 1).toBe(true);
      expect(Number(res.headers['retry-after-ms'])).toBe(s * 1000);
      expect(JSON.parse(await res.body.text()).error.code).toMatch(/^SSH_/);
    } finally {
      ns.linkUp();
    }
    await waitHost(fleet, 'cut', (h) => h.services[0]!.tunnel.state === 'up', 15_000);
  }, 60_000);
});
