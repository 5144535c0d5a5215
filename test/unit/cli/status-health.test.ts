import { describe, expect, it } from 'vitest';
import { renderFaults, renderGpuProcesses, renderHostHealth } from '../../../src-main/cli/status-health.js';
import type { GpuFaultsView, HostHealthView } from '../../../src-preload/contract/index.js';
import { host } from '../renderer/fixtures/fleet.js';

// `gpu-console status`'s health lines from constructed views: unknown prints
// "—" (never 0), a disk df could not read says why, a figure only the percent
// bound catches is LOW, a reboot is said, faults and an unreadable kernel log
// print only when the host reports them, and a hostile process name cannot
// forge a line.

const GIB = 1024 ** 3;
const NOW = Date.UTC(2026, 11, 5, 4, 0, 0);

function health(over: Partial<HostHealthView> = {}): HostHealthView {
  return {
    atMs: NOW - 5_000,
    staleReason: null,
    source: 'df, /proc',
    intervalMs: 15_000,
    bootId: 'b',
    uptimeS: null,
    rebootedAtMs: null,
    load1: null,
    load5: null,
    load15: null,
    cpuCount: null,
    memTotalBytes: null,
    memAvailableBytes: null,
    swapTotalBytes: null,
    swapFreeBytes: null,
    disks: [],
    cacheSizes: [],
    cacheSizesAtMs: null,
    docker: null,
    issues: [],
    ...over,
  };
}

const faults = (over: Partial<GpuFaultsView> = {}): GpuFaultsView => ({
  atMs: NOW,
  pciBusId: '0000:3B:00.0',
  eccEnabled: true,
  eccCorrectedVolatile: 0,
  eccUncorrectedVolatile: 2,
  eccCorrectedAggregate: null,
  eccUncorrectedAggregate: 5,
  retiredPages: 1,
  retiredPagesPending: true,
  throttleReasons: ['hw_thermal_slowdown'],
  slowdownSinceMs: NOW - 90_000,
  temperatureCriticalC: null,
  rasUncorrected: null,
  rasCorrected: null,
  source: 'nvidia-smi',
  ...over,
});

describe('status host health lines', () => {
  it('unknown figures print — and never 0; a disk df could not read says why', () => {
    const lines = renderHostHealth(host('a', { health: health({ disks: [{ kind: 'cache', path: '/models', mount: null, totalBytes: null, usedBytes: null, freeBytes: null, error: 'FLEET_HEALTH_DISK: No such file' }] }) }), NOW);
    expect(lines).toContain('  ram — used of —  swap — used of —');
    expect(lines).toContain('  load — — — on — CPUs  up —');
    expect(lines).toContain('  disk cache  /models  — (FLEET_HEALTH_DISK: No such file)');
    expect(lines.join('\n')).not.toMatch(/\b0(\.0)? ?(B|GiB)\b/);
  });

  it('LOW by either bound: 8 GiB of 1 TiB (bytes), 50 GiB of 1 TiB (percent); 200 GiB of 1 TiB is not', () => {
    const disk = (free: number) => ({ kind: 'root' as const, path: '/', mount: '/', totalBytes: 1024 * GIB, usedBytes: 1024 * GIB - free, freeBytes: free, error: null });
    const lines = renderHostHealth(host('a', { health: health({ disks: [disk(8 * GIB), disk(50 * GIB), disk(200 * GIB)] }) }), NOW);
    const disks = lines.filter((l) => l.startsWith('  disk'));
    expect(disks[0]).toBe('  disk root   /  free 8.0 GiB of 1.0 TiB (0.8 %)  LOW: below 10 GiB or 10 % free');
    expect(disks[1]).toContain('(4.9 %)  LOW: below 10 GiB or 10 % free');
    expect(disks[2]).not.toContain('LOW');
    // The view's own verdict against the host's own threshold (core's one rule) is what prints.
    const own = renderHostHealth(host('a', { health: health({ disks: [{ ...disk(200 * GIB), margin: 'low' }], diskThreshold: { freeGiB: 300, freePct: 10 } }) }), NOW);
    expect(own.find((l) => l.startsWith('  disk'))).toContain('LOW: below 300 GiB or 10 % free');
  });

  it('says a reboot, stale figures, and a host without health polling', () => {
    const lines = renderHostHealth(host('a', { health: health({ uptimeS: 300, rebootedAtMs: NOW - 300_000, staleReason: 'SSH_NOT_CONNECTED: link down' }) }), NOW);
    expect(lines[0]).toContain('STALE (SSH_NOT_CONNECTED: link down): last good figures');
    expect(lines.find((l) => l.startsWith('  load'))).toContain('up 5m  REBOOTED 5m ago (2026-12-05T03:55:00.000Z)');
    expect(renderHostHealth(host('a'), NOW)).toEqual(['  health: not read (host health polling is off for this host)']);
  });

  it('a process name with a newline stays on its line', () => {
    const h = host('a');
    h.gpus[0]!.processes = [{ pid: 7, name: 'evil\nFLAG forged', user: null, usedMemoryMiB: null, serviceId: null, why: 'no listener' }];
    h.gpuProcesses = { atMs: NOW, matchedAtMs: NOW, flags: [] };
    const lines = renderGpuProcesses(h);
    expect(lines).toEqual(['  gpu0 pid 7 evil\\nFLAG forged  user —  —  not a configured service (no listener)']);
  });

  it('faults print only when reported: ECC, pending retirement, throttling since, an unreadable kernel log with its fix', () => {
    expect(renderFaults(host('a', { health: health() }))).toEqual([]);
    const h = host('a', { health: health({ kernelLog: { source: null, why: 'journalctl -k: not permitted; add ops to the systemd-journal group', xids: [] }, faultIssues: ['FLEET_FAULTS_PARTIAL: ecc not supported'] }) });
    h.gpus[0]!.faults = faults();
    const lines = renderFaults(h);
    expect(lines[0]).toBe(
      '  gpu0 faults: ecc on  uncorrected 2 volatile / 5 aggregate  corrected 0 / —  retired pages 1 (pending)  throttle hw_thermal_slowdown since 2026-12-05T03:58:30.000Z  (nvidia-smi, read 2026-12-05T04:00:00.000Z)',
    );
    expect(lines[1]).toBe('  kernel log: not readable — journalctl -k: not permitted; add ops to the systemd-journal group');
    expect(lines[2]).toBe('  fault issue: FLEET_FAULTS_PARTIAL: ecc not supported');
    const xid = host('a', { health: health({ kernelLog: { source: 'journalctl', why: null, xids: [{ atMs: NOW, xid: 79, pciBusId: null, gpuIndex: 1, pid: null, text: 'NVRM: Xid 79, GPU has fallen off the bus' }] } }) });
    expect(renderFaults(xid)).toEqual(['  kernel log: read with journalctl, 1 Xid event(s)', '  Xid 79 at 2026-12-05T04:00:00.000Z on gpu1: NVRM: Xid 79, GPU has fallen off the bus']);
  });
});
