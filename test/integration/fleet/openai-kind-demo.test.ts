import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetSnapshot } from '../../../src-preload/contract/index.js';
import { ConfigSchema } from '../../../src-main/core/config/index.js';
import { startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';
import { FleetService } from '../../../src-main/core/fleet/index.js';
import { waitForTick } from './helpers/wait.js';

// Issue #32 item 3, kind openai: any OpenAI-compatible server the console knows no figures of. The
// demo's l20-poc server configured as `kind: openai` (its healthPath /health): the tunnel comes up,
// health is read at that path through SSH, and every engine figure stays unknown, never 0.

let dir: string;
let demo: DemoFleet;
let fleet: FleetService;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'openai-kind-'));
  demo = await startDemoFleet({ dir, timeScale: 1000, decodeSpeedFactor: 20 });
  const l20 = demo.config.hosts.find((h) => h.label === 'l20-poc')!;
  const config = ConfigSchema.parse({ hosts: [{ ...l20, services: l20.services.map((s) => ({ ...s, kind: 'openai', healthPath: '/health' })) }] });
  fleet = new FleetService({ config, pollIntervalMs: 250 });
  fleet.start();
}, 60_000);
afterAll(async () => {
  await fleet?.dispose();
  await demo?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const read = (s: FleetSnapshot) => s.hosts[0]?.services[0]?.tunnel.state === 'up' && s.hosts[0].services[0].source?.atMs != null;

describe('a kind openai service on the demo', () => {
  it('health through its healthPath, the health-only source named, no engine figure shown as a number', async () => {
    const snap = await waitForTick(fleet, read, 20_000);
    const v = snap.hosts[0]!.services[0]!;
    expect(v).toMatchObject({ kind: 'openai', health: 'ok', stale: false, requestsRunning: null, requestsWaiting: null, kvCachePct: null, generationTokensPerS: null, promptTokensPerS: null });
    expect(v.source).toMatchObject({ kind: 'openai', detail: expect.stringMatching(/^GET \/health \(health only/) });
    expect(v.sleepControl).toBe('none');
    const state = fleet.state().hosts[0]!.services[0]!;
    expect(state.tunnel.probe?.ok).toBe(true);
    expect(state.reading).toMatchObject({ kind: 'openai', health: 'ok', running: null, ttft: null, e2e: null, generationTokensTotal: null });
  });

  it('the server stopped: the reading turns stale with a coded reason naming the health GET', async () => {
    demo.host('l20-poc').stopService('qwen');
    const snap = await waitForTick(fleet, (s) => s.hosts[0]?.services[0]?.stale === true, 20_000);
    // Read by the host's collector or through the tunnel: either way a coded reason naming the health GET.
    expect(snap.hosts[0]!.services[0]!.staleReason).toMatch(/^[A-Z_]+: .*\/health/);
    demo.host('l20-poc').restartService('qwen');
  });
});
