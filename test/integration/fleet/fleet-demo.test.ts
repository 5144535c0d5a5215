import { connect as netConnect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FleetSnapshotSchema, type FleetSnapshot } from '../../../src-preload/contract/index.js';
import { ConfigSchema } from '../../../src-main/core/config/index.js';
import { startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';
import { FleetService } from '../../../src-main/core/fleet/index.js';
import { waitForTick } from './helpers/wait.js';
import { upstreamKey } from '../../../src-main/core/upstream/index.js';

// The real path end to end: ssh2 client → demo sshd → direct-tcpip → vLLM
// simulator, nvidia-smi over exec. decodeSpeedFactor 20 makes a 40-token answer
// take about 0.1 s on l20-poc.

let dir: string;
let demo: DemoFleet;
let fleet: FleetService;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fleet-demo-'));
  demo = await startDemoFleet({ dir, timeScale: 1000, decodeSpeedFactor: 20 });
  fleet = new FleetService({ config: ConfigSchema.parse(demo.config), pollIntervalMs: 250 });
  fleet.start();
});
afterAll(async () => {
  await fleet?.dispose();
  await demo?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const allUp = (s: FleetSnapshot) =>
  s.hosts.length > 0 &&
  s.hosts.every((h) => h.state === 'connected' && h.gpus.length > 0 && h.services.every((v) => v.tunnel.state === 'up' && v.health === 'ok' && v.source?.atMs != null));

describe('FleetService on the demo fleet', () => {
  it('connects both hosts, shows their GPUs and brings every tunnel up on 127.0.0.1', async () => {
    const snap = await waitForTick(fleet, allUp);
    expect(FleetSnapshotSchema.parse(snap)).toEqual(snap);
    const l20 = snap.hosts.find((h) => h.label === 'l20-poc')!;
    const l20Config = demo.config.hosts.find((h) => h.label === 'l20-poc')!;
    expect(l20.address).toBe(`${l20Config.ssh.user}@127.0.0.1:${demo.host('l20-poc').sshPort}`);
    expect(l20.hostKeyFingerprint).toBe(demo.host('l20-poc').hostKeyFingerprint);
    expect(l20.gpus).toHaveLength(1);
    expect(l20.gpus[0]).toMatchObject({ index: 0, memoryTotalMiB: 46068 });
    expect(l20.gpus[0]!.name).toContain('L20');
    const tri = snap.hosts.find((h) => h.label === 'tri-gpu')!;
    expect(tri.gpus).toHaveLength(3);
    expect(tri.gpus.every((g) => g.name.includes('L40S'))).toBe(true);
    for (const h of snap.hosts) {
      for (const s of h.services) {
        expect(s.tunnel.localUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        expect(s.health).toBe('ok');
        expect(s.stale).toBe(false);
      }
    }
    // The console's own callers get the tunnel's private end, not the public port the snapshot shows.
    expect(fleet.upstream(upstreamKey('l20-poc', 'qwen')).endpoint).toMatchObject({ kind: 'tunnel', socketPath: expect.stringMatching(/\.sock$/) });
  });

  it('after chat requests through a tunnel, the snapshots show generation tok/s and a KV figure', async () => {
    const url = fleet.snapshot().hosts.find((h) => h.label === 'l20-poc')!.services[0]!.tunnel.localUrl!;
    let maxGen = 0;
    let kv: number | null = null;
    const sub = fleet.onDidTick((s) => {
      const svc = s.hosts.find((h) => h.label === 'l20-poc')!.services[0]!;
      maxGen = Math.max(maxGen, svc.generationTokensPerS ?? 0);
      if (svc.kvCachePct !== null) kv = svc.kvCachePct;
    });
    const chats = Array.from({ length: 3 }, async (_, i) => {
      const res = await request(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'Qwen3.6-27B-FP8',
          max_tokens: 40,
          messages: [{ role: 'user', content: `Write a short note about GPU number ${i}.` }],
        }),
      });
      const body = (await res.body.json()) as { usage?: { completion_tokens?: number } };
      expect(res.statusCode).toBe(200);
      return body.usage?.completion_tokens ?? 0;
    });
    const tokens = await Promise.all(chats);
    expect(tokens.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    const snap = await waitForTick(fleet, () => maxGen > 0 && kv !== null);
    void sub.dispose();
    const svc = snap.hosts.find((h) => h.label === 'l20-poc')!.services[0]!;
    expect(maxGen).toBeGreaterThan(0);
    expect(svc.kvCachePct).toBeGreaterThanOrEqual(0);
    expect(svc.kvCachePct).toBeLessThanOrEqual(100);
    expect(svc.promptTokensPerS).not.toBeNull();
    expect(svc.sleep).toBe('awake');
  });

  it('when the demo fleet dies, hosts go reconnecting with nextRetryAt and services turn stale', async () => {
    await waitForTick(fleet, allUp);
    await demo.dispose();
    const snap = await waitForTick(fleet, (s) =>
      s.hosts.every((h) => h.state === 'reconnecting' && h.nextRetryAt !== null && h.services.every((v) => v.stale)),
    );
    for (const h of snap.hosts) {
      expect(h.lastError?.code).toMatch(/^SSH_(DISCONNECTED|CONNECT_FAILED)$/);
      expect(h.gpuStale).toBe(true);
      expect(h.gpus.length).toBeGreaterThan(0); // last good figures stay
      for (const s of h.services) {
        expect(s.tunnel.state).toBe('reconnecting');
        expect(s.health).toBe('unknown');
        expect(s.staleReason).toMatch(/^SSH_/);
      }
    }
  });

  it('dispose leaves no SSH client, no listening tunnel and no open stream', async () => {
    const urls = fleet.snapshot().hosts.flatMap((h) => h.services.map((s) => s.tunnel.localUrl)).filter((u): u is string => u !== null);
    expect(urls.length).toBeGreaterThan(0);
    await fleet.dispose();
    expect(fleet.resourceCounts()).toEqual({ hosts: 0, connections: 0, listeningForwards: 0, activeStreams: 0 });
    for (const url of urls) {
      const refused = await new Promise<boolean>((resolve) => {
        const s = netConnect(Number(new URL(url).port), '127.0.0.1');
        s.once('connect', () => {
          s.destroy();
          resolve(false);
        });
        s.once('error', () => resolve(true));
      });
      expect(refused).toBe(true);
    }
  });
});
