import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { FleetSnapshot, GpuFaultsView, HostHealthView, HostView } from '../../../../src-preload/contract/index.js';
import { HostViewSchema } from '../../../../src-preload/contract/index.js';
import { renderFleetExposition } from '../../../../src-main/core/telemetry/fleet-exposition.js';

// GPU faults on /metrics (issue #29 item 4): ECC counts as counters by kind
// and scope, retired pages, each throttle reason 1/0 when the set is known,
// the Xid events held per GPU; every unknown figure (and a stale health round)
// left out, never 0; promtool's linter is clean.

const havePromtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' }).status === 0;

const faults = (over: Partial<GpuFaultsView> = {}): GpuFaultsView => ({
  atMs: 1, pciBusId: '00000000:41:00.0', eccEnabled: true,
  eccCorrectedVolatile: 2, eccUncorrectedVolatile: 1, eccCorrectedAggregate: 7, eccUncorrectedAggregate: null,
  retiredPages: null, retiredPagesPending: true, throttleReasons: ['hw_slowdown', 'hw_thermal_slowdown'], slowdownSinceMs: 1,
  temperatureCriticalC: null, rasUncorrected: null, rasCorrected: null, source: 'nvidia-smi',
  ...over,
});

const health = (over: Partial<HostHealthView> = {}): HostHealthView => ({
  atMs: 1, staleReason: null, source: 'df', intervalMs: 15_000, bootId: null, uptimeS: null, rebootedAtMs: null,
  load1: null, load5: null, load15: null, cpuCount: null, memTotalBytes: null, memAvailableBytes: null, swapTotalBytes: null, swapFreeBytes: null,
  disks: [], cacheSizes: [], cacheSizesAtMs: null, docker: null, issues: [],
  faultsAtMs: 1,
  faultIssues: [],
  kernelLog: { source: 'journalctl', why: null, xids: [1, 2].map((i) => ({ atMs: i, xid: 13, pciBusId: '0000:41:00', gpuIndex: 1, pid: null, text: 'NVRM: Xid' })) },
  ...over,
});

const gpu = (index: number, f: GpuFaultsView | undefined) => ({
  index, uuid: `GPU-${index}`, name: 'NVIDIA L40S', memoryUsedMiB: 1, memoryTotalMiB: 46068, utilizationPct: 0, powerW: 30, powerLimitW: 350, temperatureC: 40, vendor: 'nvidia',
  ...(f ? { faults: f } : {}),
});

const host = (over: Partial<HostView> & { gpus?: unknown[] } = {}): HostView =>
  HostViewSchema.parse({
    label: 'tri', address: 'ops@10.0.0.5:22', state: 'connected', lastError: null, nextRetryAt: null, hostKeyFingerprint: null, gpuModel: 'L40S', pricePerHourUsd: null,
    gpus: [gpu(0, faults({ throttleReasons: null, eccEnabled: false, eccCorrectedVolatile: null, eccUncorrectedVolatile: null, eccCorrectedAggregate: null, retiredPagesPending: null })), gpu(1, faults())],
    services: [], gpuVendor: 'nvidia', gpuStale: false, gpuStaleReason: null, health: health(), updatedAt: 1,
    ...over,
  });

const render = (hosts: HostView[]) => renderFleetExposition({ at: 0, hosts } satisfies FleetSnapshot);
const samples = (text: string) => text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));

describe('GPU faults on /metrics', () => {
  it('known figures by GPU; unknown ones (ECC off, reasons not read, no retired count) absent, never 0', () => {
    const text = render([host()]);
    const s = samples(text).filter((l) => /^gpu_console_gpu_(ecc|retired|throttle|xid|ras|temperature_critical)/.test(l));
    expect(s).toEqual([
      'gpu_console_gpu_ecc_errors_total{host="tri",gpu="1",kind="corrected",scope="volatile"} 2',
      'gpu_console_gpu_ecc_errors_total{host="tri",gpu="1",kind="uncorrected",scope="volatile"} 1',
      'gpu_console_gpu_ecc_errors_total{host="tri",gpu="1",kind="corrected",scope="aggregate"} 7',
      'gpu_console_gpu_retired_pages_pending{host="tri",gpu="1"} 1',
      ...['gpu_idle', 'applications_clocks_setting', 'sw_power_cap', 'hw_slowdown', 'hw_thermal_slowdown', 'hw_power_brake_slowdown', 'sw_thermal_slowdown', 'sync_boost'].map(
        (r) => `gpu_console_gpu_throttle_active{host="tri",gpu="1",reason="${r}"} ${r.startsWith('hw_') && r !== 'hw_power_brake_slowdown' ? 1 : 0}`,
      ),
      'gpu_console_gpu_xid_events{host="tri",gpu="0"} 0',
      'gpu_console_gpu_xid_events{host="tri",gpu="1"} 2',
    ]);
    expect(text).toContain('# TYPE gpu_console_gpu_ecc_errors_total counter');
  });

  it('a stale health round, or a kernel log that cannot be read, leaves them out', () => {
    expect(samples(render([host({ health: health({ staleReason: 'SSH_DOWN: gone' }) })])).filter((l) => l.startsWith('gpu_console_gpu_ecc'))).toEqual([]);
    const denied = render([host({ health: health({ kernelLog: { source: null, why: 'not permitted', xids: [] } }) })]);
    expect(samples(denied).filter((l) => l.startsWith('gpu_console_gpu_xid_events'))).toEqual([]);
  });

  it.skipIf(!havePromtool)('passes `promtool check metrics`', () => {
    const check = spawnSync('promtool', ['check', 'metrics'], { input: render([host()]), encoding: 'utf8' });
    expect(check.stdout + check.stderr).toBe('');
    expect(check.status).toBe(0);
  });
});
