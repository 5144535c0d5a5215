import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { FleetSnapshot, GpuProcessView, HostHealthView, HostView } from '../../../../src-preload/contract/index.js';
import { HostViewSchema } from '../../../../src-preload/contract/index.js';
import { PROCESSES_PER_GPU, renderFleetExposition } from '../../../../src-main/core/telemetry/fleet-exposition.js';
import { healthValues } from '../../../../src-main/core/telemetry/host-values.js';

// Host health and GPU processes on /metrics and in the series store (issue
// #29 items 2, 3): base units, unknown left out (never 0), stale left out,
// processes per GPU capped (a PID label is a series per process), and the
// page passes Prometheus's own linter.

const havePromtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' }).status === 0;
const GIB = 1024 ** 3;

const health = (over: Partial<HostHealthView> = {}): HostHealthView => ({
  atMs: 1,
  staleReason: null,
  source: 'df -PB1, /proc/meminfo',
  intervalMs: 15_000,
  bootId: '7d1c467f-343e-4a6c-bc22-2432f86f0b1e',
  uptimeS: 3600.5,
  rebootedAtMs: null,
  load1: 1.5,
  load5: 1.2,
  load15: 1,
  cpuCount: 8,
  memTotalBytes: 64 * GIB,
  memAvailableBytes: 40 * GIB,
  swapTotalBytes: 8 * GIB,
  swapFreeBytes: 7 * GIB,
  disks: [
    { kind: 'root', path: '/', mount: '/', totalBytes: 200 * GIB, usedBytes: 182 * GIB, freeBytes: 8 * GIB, error: null },
    { kind: 'cache', path: '/srv/hf "cache"', mount: '/', totalBytes: null, usedBytes: null, freeBytes: null, error: 'FLEET_HEALTH_PATH_MISSING: no such file' },
  ],
  cacheSizes: [{ path: '/home/ops/.cache/huggingface', bytes: 30 * GIB, error: null }],
  cacheSizesAtMs: 1,
  docker: null,
  issues: [],
  ...over,
});

const proc = (pid: number, mib: number, serviceId: string | null): GpuProcessView => ({ pid, name: 'python3', user: 'ops', usedMemoryMiB: mib, serviceId, why: '' });

const host = (over: Partial<HostView> = {}): HostView =>
  HostViewSchema.parse({
    label: 'l20',
    address: 'ops@10.0.0.5:22',
    state: 'connected',
    lastError: null,
    nextRetryAt: null,
    hostKeyFingerprint: null,
    gpuModel: 'L20',
    pricePerHourUsd: null,
    gpus: [
      {
        index: 0, uuid: 'GPU-1', name: 'NVIDIA L20', memoryUsedMiB: 1024, memoryTotalMiB: 46068, utilizationPct: 0, powerW: 30, powerLimitW: 275, temperatureC: 40, vendor: 'nvidia',
        processes: [proc(9001, 9318, null), ...Array.from({ length: 11 }, (_, i) => proc(100 + i, 1000 - i, 'qwen'))],
      },
    ],
    gpuStale: false,
    gpuStaleReason: null,
    health: health(),
    gpuProcesses: {
      atMs: 1,
      matchedAtMs: 1,
      flags: [{ code: 'FLEET_GPU_PROCESS_UNKNOWN', message: 'PID 9001 python3 holds 9.1 GiB on GPU0 — not a configured service', pid: 9001, serviceId: null, gpuIndex: 0, command: 'kill 9001' }],
    },
    services: [],
    updatedAt: 1,
    ...over,
  });

const render = (hosts: HostView[]) => renderFleetExposition({ at: 0, hosts } satisfies FleetSnapshot);
const samples = (text: string) => text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));

describe('host health on /metrics', () => {
  it('writes disk, memory, swap, load, CPUs, uptime and cache size in base units; an unknown figure is left out, not 0', () => {
    const s = samples(render([host({ health: health({ memAvailableBytes: null }) })]));
    expect(s).toEqual(
      expect.arrayContaining([
        'gpu_console_host_health_stale{host="l20"} 0',
        `gpu_console_host_disk_free_bytes{host="l20",kind="root",path="/",mount="/"} ${8 * GIB}`,
        `gpu_console_host_disk_total_bytes{host="l20",kind="root",path="/",mount="/"} ${200 * GIB}`,
        `gpu_console_host_memory_total_bytes{host="l20"} ${64 * GIB}`,
        `gpu_console_host_swap_used_bytes{host="l20"} ${GIB}`,
        'gpu_console_host_load1{host="l20"} 1.5',
        'gpu_console_host_cpus{host="l20"} 8',
        'gpu_console_host_uptime_seconds{host="l20"} 3600.5',
        `gpu_console_host_model_cache_bytes{host="l20",path="/home/ops/.cache/huggingface"} ${30 * GIB}`,
      ]),
    );
    expect(s.filter((l) => l.startsWith('gpu_console_host_memory_available_bytes'))).toEqual([]);
    // The missing cache path has no figures at all.
    expect(s.filter((l) => l.includes('kind="cache"'))).toEqual([]);
  });

  it('a stale round leaves every figure out and says stale', () => {
    const s = samples(render([host({ health: health({ staleReason: 'SSH_EXEC_TIMEOUT: exec timed out' }) })]));
    expect(s).toContain('gpu_console_host_health_stale{host="l20"} 1');
    expect(s.filter((l) => /gpu_console_host_(disk|memory|swap|load1|cpus|uptime)/.test(l))).toEqual([]);
  });

  it(`GPU process memory: the ${PROCESSES_PER_GPU} largest per GPU, an unowned one without a service label; flags counted by code`, () => {
    const s = samples(render([host()]));
    const procs = s.filter((l) => l.startsWith('gpu_console_gpu_process_memory_bytes'));
    expect(procs).toHaveLength(PROCESSES_PER_GPU);
    expect(procs[0]).toBe(`gpu_console_gpu_process_memory_bytes{host="l20",gpu="0",pid="9001",process="python3"} ${9318 * 1024 * 1024}`);
    expect(procs[1]).toBe(`gpu_console_gpu_process_memory_bytes{host="l20",gpu="0",pid="100",process="python3",service="qwen"} ${1000 * 1024 * 1024}`);
    expect(s).toContain('gpu_console_host_gpu_process_flags{host="l20",code="FLEET_GPU_PROCESS_UNKNOWN"} 1');
  });

  it.skipIf(!havePromtool)('passes `promtool check metrics` with health, processes and flags', () => {
    const check = spawnSync('promtool', ['check', 'metrics'], { input: render([host(), host({ label: 'strix', health: health({ staleReason: 'X_Y: z' }) })]), encoding: 'utf8' });
    expect(check.stdout + check.stderr).toBe('');
    expect(check.status).toBe(0);
  });
});

describe('host health in the series store', () => {
  const figures = { memTotalBytes: 64 * GIB, memAvailableBytes: 40 * GIB, swapTotalBytes: 8 * GIB, swapFreeBytes: 7 * GIB, load1: 1.5, disks: [{ kind: 'root', freeBytes: 8 * GIB }] };

  it('disk free, RAM and swap used, RAM available and load, in GiB; the cache disk unknown when not read', () => {
    expect(healthValues({ stale: null, figures })).toEqual({
      'host.disk_root_free_gib': 8,
      'host.disk_cache_free_gib': null,
      'host.mem_used_gib': 24,
      'host.mem_available_gib': 40,
      'host.swap_used_gib': 1,
      'host.load1': 1.5,
    });
  });

  it('a stale reading is a gap (every value null), health off adds no series', () => {
    const stale = healthValues({ stale: { code: 'SSH_EXEC_TIMEOUT', message: 'x' }, figures });
    expect(Object.values(stale).every((v) => v === null)).toBe(true);
    expect(Object.keys(stale)).toHaveLength(6);
    expect(healthValues(null)).toEqual({});
    expect(healthValues({ stale: null, figures: null })['host.mem_used_gib']).toBeNull();
  });
});
