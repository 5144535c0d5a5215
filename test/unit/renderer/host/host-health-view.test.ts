import { describe, expect, it } from 'vitest';
import { HostHealthViewSchema, type GpuFaultsView, type HostHealthView } from '../../../../src-preload/contract/index.js';
import { GIB } from '../../../../src-renderer/src/features/fleet/host-health-facts.js';
import { cacheRows, diskRows, dockerText, faultRows, kernelLogStatus, processRows } from '../../../../src-renderer/src/features/host/host-health-view.js';
import { HOST_HEALTH_PANELS, emptyReason, formatValue, seriesLabel } from '../../../../src-renderer/src/features/host/host-panels.js';
import { host } from '../fixtures/fleet.js';

// The host view's health section (issue #29 items 2–4) as rows of text.

const NOW = 1_800_000_000_000;

const base: HostHealthView = HostHealthViewSchema.parse({
  atMs: NOW,
  staleReason: null,
  source: 'health command',
  intervalMs: 15_000,
  bootId: 'b',
  uptimeS: 100,
  rebootedAtMs: null,
  load1: 1,
  load5: 1,
  load15: 1,
  cpuCount: 8,
  memTotalBytes: 64 * GIB,
  memAvailableBytes: 32 * GIB,
  swapTotalBytes: 0,
  swapFreeBytes: 0,
  disks: [
    { kind: 'root', path: '/', mount: '/', totalBytes: 200 * GIB, usedBytes: 182 * GIB, freeBytes: 8 * GIB, error: null },
    { kind: 'cache', path: '~/.cache/huggingface', mount: null, totalBytes: null, usedBytes: null, freeBytes: null, error: 'FLEET_HEALTH_DF_FAILED: No such file or directory' },
  ],
  cacheSizes: [
    { path: '~/.cache/huggingface', bytes: 42 * GIB, error: null },
    { path: '/models', bytes: null, error: 'du: timed out after 60 s' },
  ],
  cacheSizesAtMs: NOW - 120_000,
  docker: { rootDir: null, why: 'permission denied while trying to connect to the Docker daemon socket' },
  issues: [],
});

const faults = (o: Partial<GpuFaultsView> = {}): GpuFaultsView => ({
  atMs: NOW,
  pciBusId: '00000000:3B:00.0',
  eccEnabled: true,
  eccCorrectedVolatile: 3,
  eccUncorrectedVolatile: 0,
  eccCorrectedAggregate: 10,
  eccUncorrectedAggregate: 1,
  retiredPages: 2,
  retiredPagesPending: true,
  throttleReasons: ['sw_power_cap', 'hw_thermal_slowdown'],
  slowdownSinceMs: NOW - 75_000,
  temperatureCriticalC: null,
  rasUncorrected: null,
  rasCorrected: null,
  source: 'nvidia-smi -q',
  ...o,
});

describe('host view health rows', () => {
  it('disks: kind, path, mount, free/total, used %, the low flag, and the error where unknown', () => {
    const [root, cache] = diskRows(base);
    expect(root).toMatchObject({ kind: 'root', path: '/', mount: '/', freeTotal: '8.0 GiB / 200 GiB', used: '91%', error: null, flag: 'low: 8.0 GiB free, below 10 GiB' });
    expect(cache).toMatchObject({ kind: 'model cache', mount: '—', freeTotal: '—', used: '—', usedPct: null, error: 'FLEET_HEALTH_DF_FAILED: No such file or directory', flag: null });
  });

  it('cache sizes carry their age; an unmeasured one says why', () => {
    const rows = cacheRows(base, NOW);
    expect(rows[0]).toMatchObject({ size: '42.0 GiB', title: 'du -sxb, measured 2 min ago' });
    expect(rows[1]).toMatchObject({ size: '—', title: 'du: timed out after 60 s' });
  });

  it("Docker's root, or why it is unknown", () => {
    expect(dockerText(base)).toEqual({ text: 'permission denied while trying to connect to the Docker daemon socket', known: false });
    expect(dockerText({ ...base, docker: { rootDir: '/var/lib/docker', why: null } })).toEqual({ text: '/var/lib/docker', known: true });
    expect(dockerText({ ...base, docker: null })).toBeNull();
  });

  it('processes: matched to a service, or "not a configured service" with why; null before the first list', () => {
    expect(processRows(host('a'))).toBeNull();
    const h = host('a');
    h.gpus = [
      {
        ...h.gpus[0]!,
        processes: [
          { pid: 2211, name: 'python3', user: 'ops', usedMemoryMiB: 40_000, serviceId: 'qwen', why: 'it or its parent listens on :8000' },
          { pid: 4812, name: 'llama-server', user: null, usedMemoryMiB: 9318, serviceId: null, why: "neither it nor a parent listens on a configured service's port" },
        ],
      },
    ];
    const rows = processRows(h)!;
    expect(rows[0]).toMatchObject({ gpu: 0, pid: '2211', name: 'python3', user: 'ops', memory: '39.1 GiB', service: 'qwen', matched: true });
    expect(rows[1]).toMatchObject({ pid: '4812', user: '—', memory: '9.1 GiB', service: 'not a configured service', matched: false });
  });

  it('faults: ECC, retired pending, throttle reasons in words with how long the slowdown lasts; null before the first reading', () => {
    expect(faultRows(host('a'), NOW)).toBeNull();
    const h = host('a');
    h.gpus = [{ ...h.gpus[0]!, faults: faults() }];
    const [r] = faultRows(h, NOW)!;
    expect(r).toMatchObject({
      gpu: 0,
      ecc: '0 uncorr. · 3 corr. (aggregate 1 · 10)',
      eccBad: false,
      retired: '2 · one pending: applies at the next GPU reset or reboot',
      retiredPending: true,
      throttle: 'power cap (software), HW thermal slowdown — slowdown for 1 min 15 s',
      slowdown: true,
    });
    h.gpus = [{ ...h.gpus[0]!, faults: faults({ eccUncorrectedVolatile: 1 }) }];
    expect(faultRows(h, NOW)![0]!.eccBad).toBe(true);
    h.gpus = [{ ...h.gpus[0]!, faults: faults({ eccEnabled: false, throttleReasons: null, retiredPages: null, slowdownSinceMs: null, temperatureCriticalC: 100, rasUncorrected: 0, rasCorrected: 4 }) }];
    expect(faultRows(h, NOW)![0]).toMatchObject({ ecc: 'ECC off', throttle: '—', retired: '— · one pending: applies at the next GPU reset or reboot', slowdown: false, critical: '100 °C', ras: '0 uncorr. · 4 corr.' });
  });

  it("the kernel log: not read yet, read (with the Xid count), or why not and what would allow it", () => {
    expect(kernelLogStatus(undefined)).toEqual({ text: 'Kernel log not read yet.', readable: null });
    expect(kernelLogStatus({ source: null, why: 'journalctl -k: add ops to the systemd-journal group', xids: [] })).toEqual({ text: 'journalctl -k: add ops to the systemd-journal group', readable: false });
    expect(kernelLogStatus({ source: 'dmesg', why: null, xids: [] }).text).toBe('Read with dmesg: no Xid event.');
  });

  it('health charts: GiB figures, readable legend names, an empty panel says why', () => {
    expect(HOST_HEALTH_PANELS.map((p) => p.id)).toEqual(['disk', 'mem', 'load']);
    const disk = HOST_HEALTH_PANELS[0]!;
    expect(disk.match('host.disk_root_free_gib')).toBe(true);
    expect(disk.match('host.gen_tok_s')).toBe(false);
    expect(formatValue(8, 'GiB')).toBe('8.0 GiB');
    expect(seriesLabel('host.disk_root_free_gib')).toBe('free on /');
    expect(seriesLabel('host.load1')).toBe('load 1 min');
    expect(emptyReason(disk, new Map())).toMatch(/no host-health reading/);
  });
});
