import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetSnapshot, HostView } from '../../src-preload/contract/index.js';
import { assertBuilt, bridgeCall, runCliProcess, startConsole, type RunningConsole } from '../helpers/console-process.js';
import { until } from '../helpers/until.js';

// The default demo shows a failure diagnosed end to end (issue #29 item 8):
// the built console, `serve --demo`, with nothing else asked. On tri-gpu the
// kernel log's Xid 13 is joined to GPU 2 and names the process that a crash
// left behind; that process is named as holding GPU memory for no service,
// with the command to end it. Every other host is clean. `--demo-fault none`
// starts clean, and a bad fault spec is a usage error naming the flag.

const snapshotOf = async (ui: string): Promise<FleetSnapshot> => {
  const r = await bridgeCall<FleetSnapshot>(ui, 'fleet.snapshot', {});
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  return r.data;
};
const hostOf = (s: FleetSnapshot, label: string): HostView => s.hosts.find((h) => h.label === label)!;
const diagnosed = (h: HostView | undefined) => (h?.health?.kernelLog?.xids.length ?? 0) > 0 && (h?.gpuProcesses?.flags.length ?? 0) > 0;

describe('the default demo: a failure to diagnose', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-demo-faults-'));
  let running: RunningConsole;

  beforeAll(async () => {
    assertBuilt();
    running = await startConsole(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir, '--ui-port', '0']);
  }, 60_000);

  afterAll(async () => {
    expect(await running?.stop()).toBe(0);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("tri-gpu: Xid 13 on GPU 2 names the pid of the leftover process holding 9.1 GiB there, named with 'kill <pid>'; the other hosts have neither", async () => {
    let snap: FleetSnapshot | null = null;
    await until(async () => {
      snap = await snapshotOf(running.ui);
      return diagnosed(hostOf(snap, 'tri-gpu')) && ['l20-poc', 'strix'].every((l) => hostOf(snap!, l)?.health?.faultsAtMs != null && hostOf(snap!, l)?.gpuProcesses !== undefined);
    }, { timeoutMs: 40_000, intervalMs: 500 });
    const tri = hostOf(snap!, 'tri-gpu');
    const [xid] = tri.health!.kernelLog!.xids;
    expect(tri.health!.kernelLog!.source).toBe('journalctl');
    expect(xid).toMatchObject({ xid: 13, gpuIndex: 2, pid: expect.any(Number) });
    expect(xid!.text).toMatch(/^NVRM: Xid \(PCI:0000:81:00\): 13, pid=\d+, name=VLLM::EngineCor, Graphics SM Warp Exception/);
    expect(tri.gpuProcesses!.flags).toEqual([
      expect.objectContaining({ code: 'FLEET_GPU_PROCESS_UNKNOWN', pid: xid!.pid, gpuIndex: 2, command: `kill ${xid!.pid}`, message: expect.stringContaining('holds 9.1 GiB on GPU2 — not a configured service') }),
    ]);
    expect(tri.gpus.find((g) => g.index === 2)!.faults).toMatchObject({ eccEnabled: true, throttleReasons: expect.any(Array) });
    for (const label of ['l20-poc', 'strix']) {
      const h = hostOf(snap!, label);
      expect(h.health!.kernelLog!.xids, label).toEqual([]);
      expect(h.gpuProcesses!.flags, label).toEqual([]);
    }
  }, 60_000);
});

describe('demo fault flags', () => {
  it('a bad --demo-fault is a usage error (exit 2) naming the flag and the forms, and starts nothing', async () => {
    const r = await runCliProcess(['serve', '--demo', '--demo-fault', 'tri-gpu:xid=7@gpu1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--demo-fault: demo fault "tri-gpu:xid=7@gpu1": the demo raises Xid 13, 31');
    expect(r.stderr).toContain('HOST:throttle@gpuI');
  });

  it('--demo-fault none starts clean; a named fault is set', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-demo-faults-none-'));
    const running = await startConsole(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir, '--ui-port', '0', '--demo-fault', 'none', '--demo-fault', 'l20-poc:throttle@gpu0']);
    try {
      let snap: FleetSnapshot | null = null;
      await until(async () => {
        snap = await snapshotOf(running.ui);
        return snap.hosts.every((h) => h.health?.faultsAtMs != null && h.gpuProcesses !== undefined);
      }, { timeoutMs: 40_000, intervalMs: 500 });
      expect(hostOf(snap!, 'tri-gpu').health!.kernelLog!.xids).toEqual([]);
      expect(hostOf(snap!, 'tri-gpu').gpuProcesses!.flags).toEqual([]);
      expect(hostOf(snap!, 'l20-poc').gpus[0]!.faults!.throttleReasons).toContain('hw_thermal_slowdown');
    } finally {
      expect(await running.stop()).toBe(0);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
