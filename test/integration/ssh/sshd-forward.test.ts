import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import { statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Dispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetService } from '../../../src-main/core/fleet/index.js';
import { upstreamKey, type UpstreamClient } from '../../../src-main/core/upstream/index.js';
import { createNetnsHost, knownHostsLine, preClean, type NetnsHost } from '../../helpers/netns-sshd.js';
import { startFleet, waitHost } from './helpers.js';

// Forward integrity through a real OpenSSH sshd: one 50 MB download and 200
// concurrent echo streams over ONE SSH connection, checksums equal; a reader
// that stops does not make the console buffer the stream; the Test action.

let ns: NetnsHost;
let fleet: FleetService;
/** The public port (what operators and apps use). */
let url: string;
/** The tunnel's private end (the console's own callers): its client, and its socket. */
let client: UpstreamClient;
let socketPath: string;
let agent: Dispatcher;

/** The same bytes the model server's /blob sends (AES-128-CTR keystream of zeros). */
function expectedBlobSha(bytes: number, seed: string): string {
  const key = createHash('sha256').update(`key:${seed}`).digest().subarray(0, 16);
  const iv = createHash('sha256').update(`iv:${seed}`).digest().subarray(0, 16);
  const cipher = createCipheriv('aes-128-ctr', key, iv);
  const h = createHash('sha256');
  const zero = Buffer.alloc(1024 * 1024);
  for (let left = bytes; left > 0; left -= zero.length) h.update(cipher.update(zero.subarray(0, Math.min(left, zero.length))));
  return h.digest('hex');
}

beforeAll(async () => {
  preClean();
  ns = await createNetnsHost();
  const sshd = await ns.startSshd({ logLevel: 'INFO' });
  await ns.startModelServer(8000);
  const kh = join(ns.dir, 'known_hosts');
  writeFileSync(kh, knownHostsLine(sshd));
  fleet = startFleet([
    {
      label: 'fwd',
      ssh: { host: ns.addr, user: 'root', identityFile: ns.clientKey },
      knownHostsFile: kh,
      services: [{ id: 'm', kind: 'vllm', remotePort: 8000, model: 'test-model' }],
    },
  ]).fleet;
  await waitHost(fleet, 'fwd', (h) => h.services[0]!.tunnel.state === 'up');
  url = fleet.snapshot().hosts[0]!.services[0]!.tunnel.localUrl!;
  client = fleet.upstream(upstreamKey('fwd', 'm'));
  const end = client.endpoint;
  socketPath = end.kind === 'tunnel' ? end.socketPath : '';
  agent = client.dispatcher;
}, 30_000);

afterAll(async () => {
  await fleet?.dispose();
  await ns?.dispose();
});

describe('tunnel integrity through OpenSSH sshd', () => {
  it('listens on 127.0.0.1 only, its private end on a socket in a 0700 folder', () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(statSync(socketPath).isSocket()).toBe(true);
    expect(statSync(dirname(socketPath)).mode & 0o777).toBe(0o700);
  });

  it('a 50 MB download arrives byte-exact', async () => {
    const bytes = 50 * 1024 * 1024;
    const res = await client.stream({ path: `/blob?bytes=${bytes}&seed=fifty`, deadlineMs: 120_000 });
    expect(res.status).toBe(200);
    const h = createHash('sha256');
    let got = 0;
    for await (const chunk of res.body) {
      h.update(chunk as Buffer);
      got += (chunk as Buffer).length;
    }
    expect(got).toBe(bytes);
    expect(h.digest('hex')).toBe(expectedBlobSha(bytes, 'fifty'));
  });

  it('200 concurrent streams over one SSH connection, each echoed byte-exact', async () => {
    // The service's own client: its pool opens connections as the streams need them.
    const pool = agent;
    const bodies = Array.from({ length: 200 }, (_, i) => randomBytes(16 * 1024 + ((i * 7919) % (240 * 1024))));
    let peak = 0;
    const watch = setInterval(() => (peak = Math.max(peak, fleet.resourceCounts().activeStreams)), 5);
    const results = await Promise.all(
      bodies.map(async (body) => {
        const res = await pool.request({ path: '/echo', method: 'POST', body, headers: { 'content-type': 'application/octet-stream' } });
        const back = Buffer.from(await res.body.arrayBuffer());
        return { sent: createHash('sha256').update(body).digest('hex'), got: createHash('sha256').update(back).digest('hex'), len: back.length };
      }),
    );
    clearInterval(watch);
    for (const [i, r] of results.entries()) {
      expect(r.len).toBe(bodies[i]!.length);
      expect(r.got).toBe(r.sent);
    }
    expect(peak).toBeGreaterThan(100); // they really ran side by side
    expect(fleet.resourceCounts().connections).toBe(1);
  });

  it('backpressure: a client that stops reading does not make the console buffer the stream', async () => {
    const bytes = 64 * 1024 * 1024;
    const sock = netConnect(socketPath);
    await new Promise<void>((r) => sock.once('connect', () => r()));
    sock.write(`GET /blob?bytes=${bytes}&seed=slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    const h = createHash('sha256');
    let got = 0;
    let headerDone = false;
    let pending = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      if (!headerDone) {
        pending = Buffer.concat([pending, d]);
        const i = pending.indexOf('\r\n\r\n');
        if (i < 0) return;
        headerDone = true;
        d = pending.subarray(i + 4);
      }
      h.update(d);
      got += d.length;
    };
    sock.on('data', onData);
    await new Promise<void>((r) => {
      const t = setInterval(() => {
        if (got > 4 * 1024 * 1024) {
          clearInterval(t);
          r();
        }
      }, 5);
    });
    sock.pause();
    const before = process.memoryUsage().arrayBuffers;
    await new Promise((r) => setTimeout(r, 1_500));
    const grown = process.memoryUsage().arrayBuffers - before;
    expect(grown).toBeLessThan(16 * 1024 * 1024); // the SSH window holds the rest back at the host
    sock.resume();
    await new Promise<void>((r) => sock.once('close', () => r()));
    expect(got).toBe(bytes);
    expect(h.digest('hex')).toBe(expectedBlobSha(bytes, 'slow'));
  });

  it('Test: GET /v1/models then a 1-token chat, with latencies', async () => {
    const result = await fleet.testTunnel('fwd', 'm');
    expect(result).toMatchObject({ ok: true, error: null, localUrl: url });
    expect(result.steps.map((s) => [s.name, s.ok, s.status])).toEqual([
      ['models', true, 200],
      ['chat', true, 200],
    ]);
    expect(result.steps[0]!.detail).toContain('test-model');
    expect(result.totalMs).toBeGreaterThan(0);
  });
});
