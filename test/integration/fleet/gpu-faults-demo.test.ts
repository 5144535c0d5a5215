import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderFleetExposition } from '../../../src-main/core/telemetry/fleet-exposition.js';
import type { FleetService } from '../../../src-main/core/fleet/index.js';
import { startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';
import { startFleet, waitHost } from '../ssh/helpers.js';

// Issue #29 items 4, 8 on the demo fleet through the console's own fleet:
// every GPU shows its fault figures with a source and age, the kernel log is
// read with journalctl, and the knobs (an Xid, a thermal throttle) reach the
// snapshot and /metrics as the operator would see them.

let dir: string;
let demo: DemoFleet;
let fleet: FleetService;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-faults-demo-'));
  demo = await startDemoFleet({ dir, timeScale: 1000 });
  ({ fleet } = startFleet(demo.config.hosts.map((h) => ({ ...h, health: { intervalMs: 5_000 } }))));
}, 30_000);

afterAll(async () => {
  await fleet?.dispose();
  await demo?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('GPU faults on the demo fleet', () => {
  it('every GPU has its fault figures; the kernel log is read with journalctl; NVIDIA hosts read without an issue', async () => {
    for (const h of demo.config.hosts) {
      const view = await waitHost(fleet, h.label, (v) => v.health?.faultsAtMs != null && v.gpus.length > 0 && v.gpus.every((g) => g.faults !== undefined), 20_000);
      expect(view.health!.kernelLog, h.label).toEqual({ source: 'journalctl', why: null, xids: [] });
      for (const g of view.gpus) {
        expect(g.faults!.atMs, h.label).toBe(view.health!.faultsAtMs);
        if (h.label === 'strix') expect(g.faults, h.label).toMatchObject({ temperatureCriticalC: 89.8, rasUncorrected: null, throttleReasons: null });
        else expect(g.faults, `${h.label} GPU ${g.index}`).toMatchObject({ eccEnabled: true, eccUncorrectedVolatile: 0, retiredPages: 0, retiredPagesPending: false, slowdownSinceMs: null, pciBusId: expect.stringMatching(/^00000000:/) });
      }
      if (h.label !== 'strix') expect(view.health!.faultIssues, h.label).toEqual([]);
      else expect(view.health!.faultIssues!.join('\n')).toContain('card1: amdgpu exposes no RAS error counters');
    }
  }, 60_000);

  it('an Xid on tri-gpu GPU 1 is in the host view joined to GPU 1, once, and counted on /metrics', async () => {
    demo.host('tri-gpu').raiseXid({ gpuIndex: 1, xid: 79, process: null });
    const view = await waitHost(fleet, 'tri-gpu', (v) => (v.health?.kernelLog?.xids.length ?? 0) > 0, 20_000);
    expect(view.health!.kernelLog!.xids).toEqual([expect.objectContaining({ xid: 79, gpuIndex: 1, pciBusId: '0000:41:00', pid: null, text: 'NVRM: Xid (PCI:0000:41:00): 79, GPU has fallen off the bus.' })]);
    // Later rounds read the journal from the last read's host time: the event stays one event.
    const at = view.health!.faultsAtMs!;
    const later = await waitHost(fleet, 'tri-gpu', (v) => (v.health?.faultsAtMs ?? 0) > at, 20_000);
    expect(later.health!.kernelLog!.xids).toHaveLength(1);
    expect(renderFleetExposition(fleet.snapshot())).toContain('gpu_console_gpu_xid_events{host="tri-gpu",gpu="1"} 1');
  }, 60_000);

  it('a thermal throttle on l20-poc reads hw_thermal_slowdown with the time it began, kept while it lasts, gone when it ends', async () => {
    const l20 = demo.host('l20-poc');
    l20.setThermalThrottle(0, true);
    try {
      const view = await waitHost(fleet, 'l20-poc', (v) => v.gpus[0]?.faults?.throttleReasons?.includes('hw_thermal_slowdown') ?? false, 20_000);
      const since = view.gpus[0]!.faults!.slowdownSinceMs!;
      expect(since).toBeGreaterThan(0);
      const later = await waitHost(fleet, 'l20-poc', (v) => (v.health?.faultsAtMs ?? 0) > view.health!.faultsAtMs!, 20_000);
      expect(later.gpus[0]!.faults!.slowdownSinceMs).toBe(since);
      expect(renderFleetExposition(fleet.snapshot())).toContain('gpu_console_gpu_throttle_active{host="l20-poc",gpu="0",reason="hw_thermal_slowdown"} 1');
    } finally {
      l20.setThermalThrottle(0, false);
    }
    await waitHost(fleet, 'l20-poc', (v) => v.gpus[0]?.faults?.slowdownSinceMs === null, 20_000);
  }, 60_000);
});
