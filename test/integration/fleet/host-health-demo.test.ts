import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderFleetExposition } from '../../../src-main/core/telemetry/fleet-exposition.js';
import type { FleetService, HostReboot } from '../../../src-main/core/fleet/index.js';
import { hostValuesOf } from '../../../src-main/core/telemetry/index.js';
import { startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';
import { startFleet, waitHost } from '../ssh/helpers.js';

// Issue #29 items 2, 3, 8 on the demo fleet through the console's own fleet:
// every host shows disk, RAM and its GPU processes matched to its services;
// the knobs (a full disk, a ghost process, a reboot) show as the operator
// would see them.

let dir: string;
let demo: DemoFleet;
let fleet: FleetService;
const reboots: HostReboot[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-health-demo-'));
  demo = await startDemoFleet({ dir, timeScale: 1000 });
  // The shortest health interval the config takes; the first round runs at once.
  ({ fleet } = startFleet(demo.config.hosts.map((h) => ({ ...h, health: { intervalMs: 5_000 } }))));
  fleet.onDidReboot((r) => reboots.push(r));
}, 30_000);

afterAll(async () => {
  await fleet?.dispose();
  await demo?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('host health on the demo fleet', () => {
  it('every host shows disk, RAM, swap, load and CPUs; every GPU process is matched to its service; nothing flagged', async () => {
    for (const h of demo.config.hosts) {
      // strix's llama-server names its GGUF under /srv/models: that folder is its model cache. tri-gpu runs
      // vLLM on the host: its /models/<org> folders are watched. l20-poc runs vLLM in Docker, whose /models/…
      // is the container's path, not on the host: the default cache is watched instead.
      const cache = h.label === 'strix' ? '/srv/models' : h.label === 'tri-gpu' ? '/models/google' : '/home/ops/.cache/huggingface';
      const view = await waitHost(fleet, h.label, (v) => v.health?.atMs != null && v.gpuProcesses !== undefined && (v.gpus[0]?.processes?.length ?? 0) > 0 && v.health.disks.some((d) => d.kind === 'cache' && d.path === cache), 20_000);
      const health = view.health!;
      expect(health.staleReason, h.label).toBeNull();
      const root = health.disks.find((d) => d.kind === 'root')!;
      expect(root.totalBytes!, h.label).toBeGreaterThan(root.freeBytes!);
      expect(root.freeBytes!, h.label).toBeGreaterThan(10 * 1024 ** 3);
      expect(health.disks.find((d) => d.kind === 'cache'), h.label).toMatchObject({ path: cache, error: null });
      expect(health.memTotalBytes!).toBeGreaterThan(health.memAvailableBytes!);
      expect(health.cpuCount!).toBeGreaterThan(0);
      expect(health.load1).not.toBeNull();
      expect(health.bootId).toMatch(/^[0-9a-f-]{36}$/);
      expect(health.cacheSizes[0]?.bytes, h.label).toBeGreaterThan(0);
      const processes = view.gpus.flatMap((g) => g.processes ?? []);
      expect(processes.length, h.label).toBeGreaterThan(0);
      expect(processes.every((p) => p.serviceId !== null && h.services.some((s) => s.id === p.serviceId)), JSON.stringify(processes)).toBe(true);
      expect(view.gpuProcesses!.flags, h.label).toEqual([]);
      // The series the host view charts, from the same state.
      const values = hostValuesOf(fleet.state().hosts.find((x) => x.label === h.label)!);
      expect(values['host.disk_root_free_gib']).toBeGreaterThan(10);
      expect(values['host.mem_used_gib']).toBeGreaterThan(0);
    }
    // Docker's root is known where a compose service runs; elsewhere the reason is said.
    const l20 = fleet.snapshot().hosts.find((h) => h.label === 'l20-poc')!;
    expect(l20.health!.docker).toEqual({ rootDir: '/var/lib/docker', why: null });
    expect(fleet.snapshot().hosts.find((h) => h.label === 'strix')!.health!.docker).toEqual({ rootDir: null, why: 'docker is not installed' });
  }, 60_000);

  it('a full disk reads below 10 GiB free, in the view and on /metrics', async () => {
    demo.host('l20-poc').setDiskFull(true);
    const view = await waitHost(fleet, 'l20-poc', (v) => (v.health?.disks.find((d) => d.kind === 'root')?.freeBytes ?? Infinity) < 10 * 1024 ** 3, 15_000);
    expect(view.health!.disks.find((d) => d.kind === 'root')!.freeBytes).toBe(8 * 1024 ** 3);
    expect(renderFleetExposition(fleet.snapshot())).toContain(`gpu_console_host_disk_free_bytes{host="l20-poc",kind="root",path="/",mount="/"} ${8 * 1024 ** 3}`);
    demo.host('l20-poc').setDiskFull(false);
  }, 30_000);

  it('a ghost holding GPU memory is named: on a service port as a second listener, elsewhere as memory held by no service', async () => {
    const strix = demo.host('strix');
    const onPort = strix.setGhostProcess('coder', true)!;
    let view = await waitHost(fleet, 'strix', (v) => (v.gpuProcesses?.flags.length ?? 0) > 0, 15_000);
    expect(view.gpuProcesses!.flags).toEqual([
      expect.objectContaining({ code: 'FLEET_PORT_SECOND_LISTENER', serviceId: 'coder', pid: onPort, message: expect.stringContaining(`PID ${onPort} (llama-server)`) }),
    ]);
    // AMD: the ghost's memory came from the card's DRM fdinfo.
    expect(view.gpus[0]!.processes!.find((p) => p.pid === onPort)).toMatchObject({ name: 'llama-server', usedMemoryMiB: expect.closeTo(9318 + 24, 0) });

    const l20 = demo.host('l20-poc');
    const ghost = l20.setGhostProcess('qwen', true, { onPort: false })!;
    view = await waitHost(fleet, 'l20-poc', (v) => v.gpuProcesses?.flags.some((f) => f.pid === ghost) ?? false, 15_000);
    expect(view.gpuProcesses!.flags).toEqual([
      { code: 'FLEET_GPU_PROCESS_UNKNOWN', message: `PID ${ghost} VLLM::EngineCore holds 9.1 GiB on GPU0 — not a configured service`, pid: ghost, serviceId: null, gpuIndex: 0, command: `kill ${ghost}` },
    ]);
    // The operator runs the named command; the flag goes away on the next reads.
    expect((await l20.run(`kill ${ghost}`)).code).toBe(0);
    await waitHost(fleet, 'l20-poc', (v) => v.gpuProcesses?.flags.length === 0, 15_000);
    strix.setGhostProcess('coder', false);
  }, 60_000);

  it('a reboot is one event with both boot ids', async () => {
    const before = fleet.snapshot().hosts.find((h) => h.label === 'tri-gpu')!.health!.bootId;
    demo.host('tri-gpu').reboot();
    const view = await waitHost(fleet, 'tri-gpu', (v) => v.health?.bootId !== before, 15_000);
    expect(view.health!.rebootedAtMs).not.toBeNull();
    expect(view.health!.uptimeS!).toBeLessThan(3600);
    expect(reboots).toEqual([expect.objectContaining({ label: 'tri-gpu', previousBootId: before, bootId: view.health!.bootId })]);
  }, 30_000);
});
