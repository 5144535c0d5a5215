import { describe, expect, it } from 'vitest';
import { HostViewSchema, type DiskView, type FleetSnapshot, type HostView, type ServiceHealth, type ServiceView } from '../../../../src-preload/contract/index.js';
import { renderFleetExposition } from '../../../../src-main/core/telemetry/fleet-exposition.js';

// The fleet families the Prometheus alerting rules read (resources/prometheus/):
// the service's health as one series per state (so a server that loads its
// model is not "down"), and the console's own verdict on a disk (the host's
// thresholds, which Prometheus cannot know). Unknown is left out, never 0.

const GIB = 1024 ** 3;

const service = (health: ServiceHealth): ServiceView =>
  ({
    id: 'qwen',
    kind: 'vllm',
    model: 'Qwen3.6-27B-FP8',
    aliases: [],
    slots: 8,
    remotePort: 8000,
    tunnel: { state: 'up', localUrl: 'http://127.0.0.1:41000', lastError: null },
    health,
    sleep: 'awake',
    requestsRunning: 2,
    requestsWaiting: 0,
    kvCachePct: 40,
    generationTokensPerS: 34,
    promptTokensPerS: 100,
    stale: false,
    staleReason: null,
  }) as ServiceView;

const disk = (margin: DiskView['margin'], path: string): DiskView => ({ kind: 'root', path, mount: path, totalBytes: 200 * GIB, usedBytes: 150 * GIB, freeBytes: 50 * GIB, error: null, margin });

const host = (services: ServiceView[], disks: DiskView[]): HostView =>
  HostViewSchema.parse({
    label: 'l20',
    address: 'ops@10.0.0.5:22',
    state: 'connected',
    lastError: null,
    nextRetryAt: null,
    hostKeyFingerprint: null,
    gpuModel: null,
    pricePerHourUsd: null,
    gpus: [],
    gpuStale: false,
    gpuStaleReason: null,
    health: {
      atMs: 1, staleReason: null, source: 'df', intervalMs: 15_000, bootId: null, uptimeS: 1, rebootedAtMs: null, load1: 1, load5: 1, load15: 1, cpuCount: 8,
      memTotalBytes: null, memAvailableBytes: null, swapTotalBytes: null, swapFreeBytes: null, disks, cacheSizes: [], cacheSizesAtMs: null, docker: null, issues: [],
    },
    services,
    updatedAt: 1,
  });

const samples = (hosts: HostView[], name: string) =>
  renderFleetExposition({ at: 0, hosts } satisfies FleetSnapshot)
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`));

describe('fleet families for the alerting rules', () => {
  it('gpu_console_service_health: one series per state, the current one 1 (loading is not down)', () => {
    expect(samples([host([service('loading')], [])], 'gpu_console_service_health')).toEqual([
      'gpu_console_service_health{host="l20",service="qwen",state="ok"} 0',
      'gpu_console_service_health{host="l20",service="qwen",state="loading"} 1',
      'gpu_console_service_health{host="l20",service="qwen",state="down"} 0',
      'gpu_console_service_health{host="l20",service="qwen",state="unknown"} 0',
    ]);
    expect(samples([host([service('down')], [])], 'gpu_console_service_health').filter((l) => l.endsWith(' 1'))).toEqual(['gpu_console_service_health{host="l20",service="qwen",state="down"} 1']);
  });

  it("gpu_console_host_disk_low: the view's margin, 1 low, 0 ok, left out when unknown or not judged", () => {
    const lines = samples([host([], [disk('low', '/'), disk('ok', '/srv'), disk('unknown', '/data'), disk(undefined, '/old')])], 'gpu_console_host_disk_low');
    expect(lines).toEqual(['gpu_console_host_disk_low{host="l20",kind="root",path="/",mount="/"} 1', 'gpu_console_host_disk_low{host="l20",kind="root",path="/srv",mount="/srv"} 0']);
  });
});
