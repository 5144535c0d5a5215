import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetSnapshot, HostView } from '../../../src-preload/contract/index.js';
import { FakeClock } from '../../../src-main/core/base/index.js';
import { ConfigSchema } from '../../../src-main/core/config/index.js';
import { FleetService } from '../../../src-main/core/fleet/index.js';
import { startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';
import { waitForTick } from './helpers/wait.js';

// The same demo hosts read both ways (issue #31 "Done when"): once through
// tunnels and execs (`telemetry.read: tunnels`), once by the collector (one
// exec a poll, the default). The demo's clock stands still and no traffic
// runs, so the simulators answer the same figures to both: every figure of
// every source must come out equal, whichever path read it.

let dir: string;
let demo: DemoFleet;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'collector-demo-'));
  demo = await startDemoFleet({ dir, clock: new FakeClock(1_790_000_000_000) });
});
afterAll(async () => {
  await demo?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

type Read = 'auto' | 'tunnels';

const settled = (s: FleetSnapshot) =>
  s.hosts.length > 0 &&
  s.hosts.every(
    (h) => h.state === 'connected' && h.gpus.length > 0 && h.health?.atMs != null && h.services.every((v) => v.tunnel.state === 'up' && v.source?.atMs != null && (v.health === 'ok' || v.health === 'loading')),
  );

async function readOnce(read: Read): Promise<FleetSnapshot> {
  const config = ConfigSchema.parse({ ...demo.config, hosts: demo.config.hosts.map((h) => ({ ...h, telemetry: { read } })) });
  const fleet = new FleetService({ config, pollIntervalMs: 250 });
  fleet.start();
  try {
    // Two readings after everything settled: rates have a window on both paths.
    await waitForTick(fleet, settled, 15_000);
    let n = 0;
    return await waitForTick(fleet, (s) => settled(s) && ++n >= 3, 15_000);
  } finally {
    await fleet.dispose();
  }
}

/** Drops what differs by when and how it was read (times, latencies, the path itself), keeps every figure. */
function figuresOf(h: HostView): unknown {
  const drop = /^(updatedAt|atMs|at|readingAt|lastTest|probe|tunnel|read|nextRetryAt|detail|lastError|.*At|.*AtMs|ageS|.*LatencyMs)$/;
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).filter(([k]) => !drop.test(k)).map(([k, x]) => [k, strip(x)]));
    return v;
  };
  return strip(h);
}

describe('the collector on the demo fleet', () => {
  let tunnels: FleetSnapshot;
  let collector: FleetSnapshot;

  it('reads every host with one command a poll by default, and through tunnels when told', async () => {
    collector = await readOnce('auto');
    tunnels = await readOnce('tunnels');
    for (const h of collector.hosts) expect(h.read, h.label).toEqual({ mode: 'collector', reason: null, clockSkewS: expect.anything() });
    for (const h of tunnels.hosts) expect(h.read?.mode, h.label).toBe('tunnels');
  });

  it('gives every source the same figures whichever path read them', () => {
    expect(collector.hosts.map((h) => h.label)).toEqual(tunnels.hosts.map((h) => h.label));
    for (const h of collector.hosts) {
      const other = tunnels.hosts.find((t) => t.label === h.label)!;
      expect(figuresOf(h), h.label).toEqual(figuresOf(other));
      // Figures were read at all (not two empty views agreeing).
      expect(h.gpus.every((g) => g.memoryTotalMiB !== null)).toBe(true);
      expect(h.services.every((s) => s.source !== null && !s.stale)).toBe(true);
    }
  });
});
