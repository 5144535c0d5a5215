import { existsSync, writeFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { dirname, join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetService } from '../../../src-main/core/fleet/index.js';
import { upstreamKey, type UpstreamClient } from '../../../src-main/core/upstream/index.js';
import { createNetnsHost, knownHostsLine, preClean, type NetnsHost, type Sshd } from '../../helpers/netns-sshd.js';
import { handleCounts, startFleet, waitHost } from './helpers.js';

// Fault drills against a real OpenSSH sshd in a namespace: kill sshd
// mid-stream and start it again, take the veth link down and up, keep the
// port closed; assert how fast loss is seen, the states shown, the errors
// in-flight and new requests get, the reconnect, and that nothing leaks.

let ns: NetnsHost;
let sshd: Sshd;
let fleet: FleetService;
/** The public port, and the private end the drills stream through (its paths /slow and /hang are not inference). */
let url: string;
/** The service's client (bound to the tunnel's private socket). */
let client: UpstreamClient;
let baseline: Record<string, number>;

const KEEPALIVE_MS = 1_000;
const WAIT_MS = 1_500;

beforeAll(async () => {
  preClean();
  baseline = handleCounts();
  ns = await createNetnsHost();
  sshd = await ns.startSshd({ logLevel: 'INFO' });
  await ns.startModelServer(8000);
  const kh = join(ns.dir, 'known_hosts');
  writeFileSync(kh, knownHostsLine(sshd));
  fleet = startFleet(
    [
      {
        label: 'drill',
        ssh: { host: ns.addr, user: 'root', identityFile: ns.clientKey, keepaliveIntervalMs: KEEPALIVE_MS },
        knownHostsFile: kh,
        services: [{ id: 'm', kind: 'vllm', remotePort: 8000, model: 'test-model' }],
      },
    ],
    { sshOptions: { readyTimeoutMs: 2_000, backoff: { initialMs: 200, maxMs: 800 }, waitForConnectionMs: WAIT_MS } },
  ).fleet;
  await waitHost(fleet, 'drill', (h) => h.services[0]!.tunnel.state === 'up');
  url = fleet.snapshot().hosts[0]!.services[0]!.tunnel.localUrl!;
  client = fleet.upstream(upstreamKey('drill', 'm'));
}, 30_000);

afterAll(async () => {
  await fleet?.dispose();
  await ns?.dispose();
});

/** A streaming request that has its headers; resolves with how it ended and when. */
async function streaming(): Promise<{ done: Promise<{ error: string | null; at: number }> }> {
  // Through the service's client, on a connection of its own: one telemetry's polls had answered on would
  // be closed by the dying tunnel without an answer, and a request on it sent once more (the retry rule).
  const res = await client.stream({ path: '/slow?ms=20000', deadlineMs: 60_000, freshConnection: true });
  expect(res.status).toBe(200);
  // Wrapped: an async function returning a bare promise would wait for it.
  const done = (async () => {
    try {
      for await (const _ of res.body) {
        // keep reading
      }
      return { error: null, at: performance.now() };
    } catch (err) {
      return { error: (err as { code?: string }).code ?? (err as Error).message, at: performance.now() };
    }
  })();
  return { done };
}

/** A request still waiting for its answer: what does it get when the link dies? */
function hanging(): Promise<{ status: number; body: string; at: number }> {
  return client.request({ path: '/hang', deadlineMs: 60_000, maxBodyBytes: 64 * 1024, freshConnection: true }).then((res) => ({ status: res.status, body: res.text, at: performance.now() }));
}

async function restartSshd(): Promise<void> {
  // Same host keys: a restart, not a reinstall.
  sshd = await ns.startSshd({ logLevel: 'INFO', hostKeyDir: dirname(sshd.hostKeyFile) });
}

describe('fault drills', () => {
  it('kill sshd mid-stream: loss seen at once, in-flight requests fail with a clear error, new ones wait then get 503, and it comes back', async () => {
    const stream = await streaming();
    const pending = hanging();
    await new Promise((r) => setTimeout(r, 200));
    const t0 = performance.now();
    await sshd.kill();
    const down = await waitHost(fleet, 'drill', (h) => h.state === 'reconnecting' && h.nextRetryAt !== null, 5_000);
    const detectMs = performance.now() - t0;
    expect(detectMs).toBeLessThan(1_500);
    expect(down.lastError?.code).toMatch(/^SSH_(DISCONNECTED|CONNECT_FAILED)$/);
    expect(down.services[0]!.tunnel).toMatchObject({ state: 'reconnecting', localUrl: url, nextRetryAt: down.nextRetryAt });
    const ended = await stream.done;
    expect(ended.error).not.toBeNull();
    expect(ended.at - t0).toBeLessThan(1_500);
    const hung = await pending;
    expect(hung.status).toBe(502);
    expect(JSON.parse(hung.body).error.code).toMatch(/^SSH_/);
    expect(hung.at - t0).toBeLessThan(1_500);

    // While SSH is down the listener stays bound; a new request waits a bounded time, then a clear 503
    // (through the public port: the gate passes the tunnel's answer on).
    const t1 = performance.now();
    const res = await request(`${url}/v1/models`);
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
    const waited = performance.now() - t1;
    expect(res.statusCode).toBe(503);
    const body = JSON.parse(await res.body.text());
    expect(body.error.code).toBe('SSH_NOT_CONNECTED');
    expect(waited).toBeGreaterThan(WAIT_MS - 200);
    expect(waited).toBeLessThan(WAIT_MS + 1_500);

    await restartSshd();
    await waitHost(fleet, 'drill', (h) => h.state === 'connected' && h.services[0]!.tunnel.state === 'up', 8_000);
    expect(fleet.upstream(upstreamKey('drill', 'm'))).toBe(client);
    expect(fleet.snapshot().hosts[0]!.services[0]!.tunnel.localUrl).toBe(url);
    expect((await request(`${url}/v1/models`)).statusCode).toBe(200);
  });

  it('veth link down: loss seen by keepalive within ~3 intervals; link up: reconnect and tunnel up again', async () => {
    const stream = await streaming();
    const t0 = performance.now();
    ns.linkDown();
    try {
      const down = await waitHost(fleet, 'drill', (h) => h.state === 'reconnecting', 8_000);
      const detectMs = performance.now() - t0;
      expect(detectMs).toBeLessThan(KEEPALIVE_MS * 4 + 1_000);
      expect(down.services[0]!.tunnel.state).toBe('reconnecting');
      const ended = await stream.done;
      expect(ended.error).not.toBeNull();
      expect(ended.at - t0).toBeLessThan(KEEPALIVE_MS * 4 + 1_500);
      // Attempts while the link is down time out and say when the next one is.
      const retry = await waitHost(fleet, 'drill', (h) => h.nextRetryAt !== null && h.lastError?.code !== 'SSH_DISCONNECTED', 8_000);
      expect(retry.lastError?.code).toMatch(/^SSH_(TIMEOUT|CONNECT_FAILED)$/);
    } finally {
      ns.linkUp();
    }
    const t1 = performance.now();
    await waitHost(fleet, 'drill', (h) => h.services[0]!.tunnel.state === 'up', 10_000);
    expect(performance.now() - t1).toBeLessThan(5_000);
    expect((await request(`${url}/v1/models`)).statusCode).toBe(200);
  });

  it('port blocked (sshd stopped): refused attempts back off with a time shown; reconnect-now and disconnect work at any moment', async () => {
    await sshd.kill();
    const first = await waitHost(fleet, 'drill', (h) => h.state === 'reconnecting' && h.lastError?.code === 'SSH_CONNECT_FAILED' && h.nextRetryAt !== null, 5_000);
    expect(first.lastError!.message).toContain('ECONNREFUSED');
    // Reconnect now: tries at once (still refused).
    expect(await fleet.reconnectNow('drill')).toBe('reconnecting');
    // Disconnect during the backoff: stops, listener closed, no further attempts.
    expect(await fleet.disconnect('drill')).toBe('disconnected');
    const off = fleet.snapshot().hosts[0]!;
    expect(off).toMatchObject({ state: 'disconnected', nextRetryAt: null });
    expect(off.services[0]!.tunnel.state).toBe('closed');
    expect(fleet.resourceCounts()).toMatchObject({ connections: 0, listeningForwards: 0, activeStreams: 0 });
    await restartSshd();
    expect(await fleet.connect('drill')).toBe('connected');
    await waitHost(fleet, 'drill', (h) => h.services[0]!.tunnel.state === 'up');
    // Reconnect now on a healthy link: drops and re-opens, tunnel proves itself again.
    expect(await fleet.reconnectNow('drill')).toBe('connected');
    await waitHost(fleet, 'drill', (h) => h.services[0]!.tunnel.state === 'up');
  });

  it('after dispose nothing is left: no SSH socket, listener, stream or timer', async () => {
    const port = Number(new URL(url).port);
    const end = fleet.upstream(upstreamKey('drill', 'm')).endpoint;
    const socketPath = end.kind === 'tunnel' ? end.socketPath : '';
    await fleet.dispose();
    expect(existsSync(socketPath)).toBe(false);
    expect(fleet.resourceCounts()).toEqual({ hosts: 0, connections: 0, listeningForwards: 0, activeStreams: 0 });
    const refused = await new Promise<boolean>((resolve) => {
      const s = netConnect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(false);
      });
      s.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
    // Let undici's and the kernel's closes land, then compare with the start of the file.
    await new Promise((r) => setTimeout(r, 300));
    const now = handleCounts();
    // PipeServerWrap: the private sockets' listeners (PipeWrap also counts the namespace's child processes' stdio).
    for (const kind of ['TCPSocketWrap', 'TCPServerWrap', 'PipeServerWrap', 'Timeout']) {
      expect({ kind, leaked: Math.max(0, (now[kind] ?? 0) - (baseline[kind] ?? 0)) }).toEqual({ kind, leaked: 0 });
    }
  });
});
