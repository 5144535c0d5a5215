import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FleetSnapshotSchema, type FleetSnapshot, type ServiceView } from '../../../src-preload/contract/index.js';
import { ConfigSchema } from '../../../src-main/core/config/index.js';
import { startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';
import { FleetService } from '../../../src-main/core/fleet/index.js';
import { waitForTick } from './helpers/wait.js';

// The demo's `strix` host end to end, as a real Strix Halo llama-server host
// is read: ssh2 → demo sshd → GPU detection (amdgpu sysfs, no nvidia-smi) and
// the sysfs read over exec; the llama-server simulator (b10573's answers)
// through the tunnel: /health, /slots, /props, /metrics. Polls at 1 s, like
// the console's default, with four streams on its two slots — the run the
// issue measured: generation tok/s must be above zero in every sample while
// requests generate.

let dir: string;
let demo: DemoFleet;
let fleet: FleetService;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fleet-strix-'));
  demo = await startDemoFleet({ dir, timeScale: 1000 });
  const config = ConfigSchema.parse({ hosts: demo.config.hosts.filter((h) => h.label === 'strix') });
  fleet = new FleetService({ config, pollIntervalMs: 1000 });
  fleet.start();
});
afterAll(async () => {
  await fleet?.dispose();
  await demo?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const coder = (s: FleetSnapshot): ServiceView => s.hosts[0]!.services[0]!;

describe('the demo AMD APU host with llama-server', () => {
  it('shows the AMD GPU from sysfs with GTT, and the llama-server figures with their source', async () => {
    const snap = await waitForTick(fleet, (s) => s.hosts[0]!.gpus.length > 0 && coder(s).health === 'ok' && coder(s).source?.atMs != null, 20_000);
    expect(FleetSnapshotSchema.parse(snap)).toEqual(snap);
    const host = snap.hosts[0]!;
    expect(host.gpuVendor).toBe('amd');
    expect(host.gpuSource).toMatchObject({ kind: 'amd-sysfs', atMs: expect.any(Number) });
    const gpu = host.gpus[0]!;
    expect(gpu.vendor).toBe('amd');
    // an APU: a small carve-out, the model in GTT
    expect(gpu.memoryTotalMiB!).toBeLessThan(4096);
    expect(gpu.gttTotalMiB!).toBeGreaterThan(32 * 1024);
    expect(gpu.gttUsedMiB!).toBeGreaterThan(10 * 1024);
    expect(gpu.temperatureC).not.toBeNull();
    const s = coder(snap);
    expect(s).toMatchObject({ kind: 'llama-server', sleep: 'awake', sleepControl: 'automatic', kvCacheEstimated: true, stale: false });
    expect(s.source).toMatchObject({ kind: 'llama-server' });
    expect(s.version).toMatch(/^b\d+-[0-9a-f]+$/);
    expect(s.slotsReported).toBe(s.slots);
    expect(s.kvCachePct).not.toBeNull();
  });

  it('four streams on two slots: generation tok/s above zero in every 1 s sample while they generate', async () => {
    const url = fleet.snapshot().hosts.find((h) => h.label === 'strix')!.services.find((s) => s.id === 'coder')!.tunnel.localUrl!;
    const samples: { running: number | null; gen: number | null; kv: number | null }[] = [];
    let recording = false;
    const sub = fleet.onDidTick((s) => {
      if (!recording) return;
      const v = coder(s);
      samples.push({ running: v.requestsRunning, gen: v.generationTokensPerS, kv: v.kvCachePct });
    });
    recording = true;
    const streams = Array.from({ length: 4 }, async (_, i) => {
      const res = await request(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'Qwen3-Coder-30B-A3B', max_tokens: 360, ignore_eos: true, stream: true, messages: [{ role: 'user', content: `Write a long story about GPU ${i}.` }] }),
      });
      expect(res.statusCode).toBe(200);
      await res.body.text();
    });
    await Promise.all(streams);
    recording = false;
    void sub.dispose();
    // samples while something ran (the first after the start has no previous reading to diff against)
    const busy = samples.filter((x) => (x.running ?? 0) > 0).slice(1);
    expect(busy.length).toBeGreaterThanOrEqual(5);
    for (const x of busy) expect(x.gen, JSON.stringify(samples)).toBeGreaterThan(0);
    expect(Math.max(...busy.map((x) => x.kv ?? 0))).toBeGreaterThan(0);
  }, 60_000);
});
