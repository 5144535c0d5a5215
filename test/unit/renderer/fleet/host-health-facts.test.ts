import { describe, expect, it } from 'vitest';
import { HostHealthViewSchema, type HostHealthView } from '../../../../src-preload/contract/index.js';
import {
  GIB,
  faultCounts,
  formatBytes,
  healthMissing,
  loadFact,
  lowDiskFlag,
  memoryFact,
  rebootBadge,
  rootDiskFact,
  staleNote,
  swapFact,
  uptimeFact,
} from '../../../../src-renderer/src/features/fleet/host-health-facts.js';
import { issueSummary } from '../../../../src-renderer/src/features/fleet/host-health-summary.js';
import { host } from '../fixtures/fleet.js';

// The host card's health line (issue #29 item 2): the figures in words, a low
// disk flagged in words, unknown as "—" with why, stale with its age.

const NOW = 1_800_000_000_000;

function health(overrides: Partial<HostHealthView> = {}): HostHealthView {
  return HostHealthViewSchema.parse({
    atMs: NOW - 5_000,
    staleReason: null,
    source: 'df -PB1, /proc/meminfo, /proc/loadavg over SSH',
    intervalMs: 15_000,
    bootId: 'b1',
    uptimeS: 3 * 86_400 + 3_600,
    rebootedAtMs: null,
    load1: 2.5,
    load5: 2,
    load15: 1.5,
    cpuCount: 8,
    memTotalBytes: 64 * GIB,
    memAvailableBytes: 40 * GIB,
    swapTotalBytes: 8 * GIB,
    swapFreeBytes: 7 * GIB,
    disks: [{ kind: 'root', path: '/', mount: '/', totalBytes: 200 * GIB, usedBytes: 131 * GIB, freeBytes: 59 * GIB, error: null }],
    cacheSizes: [],
    cacheSizesAtMs: null,
    docker: null,
    issues: [],
    ...overrides,
  });
}

describe('host health facts', () => {
  it('formats sizes for a tight cell', () => {
    expect(formatBytes(8 * GIB)).toBe('8.0 GiB');
    expect(formatBytes(59 * GIB)).toBe('59.0 GiB');
    expect(formatBytes(1788 * GIB)).toBe('1.7 TiB');
    expect(formatBytes(null)).toBe('—');
    expect(formatBytes(0)).toBe('0.0 GiB');
  });

  it('root disk: free / total, no flag when plenty is free', () => {
    const f = rootDiskFact(health());
    expect(f).toMatchObject({ text: '59.0 GiB free / 200 GiB', known: true, flag: null, value: 59 * GIB });
  });

  it('root disk below 10 GiB (field notes §1: 8.0 GiB) is flagged in words; below 10 % of a big disk too', () => {
    const low = rootDiskFact(health({ disks: [{ kind: 'root', path: '/', mount: '/', totalBytes: 200 * GIB, usedBytes: 182 * GIB, freeBytes: 8 * GIB, error: null }] }));
    expect(low.flag).toBe('low: 8.0 GiB free, below 10 GiB');
    expect(low.title).toMatch(/low: 8\.0 GiB free/);
    expect(lowDiskFlag({ freeBytes: 150 * GIB, totalBytes: 1788 * GIB })).toBe('low: 8.4% free, below 10%');
    expect(lowDiskFlag({ freeBytes: 10 * GIB, totalBytes: 20 * GIB })).toBeNull();
    expect(lowDiskFlag({ freeBytes: null, totalBytes: 20 * GIB })).toBeNull();
    // Core's verdict against the host's own thresholds wins; the words name those thresholds.
    expect(lowDiskFlag({ freeBytes: 40 * GIB, totalBytes: 200 * GIB, margin: 'low' }, { freeGiB: 50, freePct: 10 })).toBe('low: 40.0 GiB free, below 50 GiB');
    expect(lowDiskFlag({ freeBytes: 8 * GIB, totalBytes: 200 * GIB, margin: 'ok' }, { freeGiB: 5, freePct: 2 })).toBeNull();
  });

  it('unknown is "—" with the reason, never 0', () => {
    const err = rootDiskFact(health({ disks: [{ kind: 'root', path: '/', mount: null, totalBytes: null, usedBytes: null, freeBytes: null, error: 'FLEET_HEALTH_DF_UNEXPECTED: df printed 3 fields' }] }));
    expect(err).toMatchObject({ text: '—', known: false, value: null, title: 'FLEET_HEALTH_DF_UNEXPECTED: df printed 3 fields' });
    const off = rootDiskFact(undefined);
    expect(off.text).toBe('—');
    expect(off.title).toMatch(/polling is off/);
    const first = memoryFact(health({ atMs: null }));
    expect(first).toMatchObject({ text: '—', known: false });
    expect(first.title).toMatch(/Not read yet/);
    expect(memoryFact(health({ memAvailableBytes: null }))).toMatchObject({ text: '—', known: false });
    expect(loadFact(health({ load1: null })).text).toBe('—');
    expect(uptimeFact(health({ uptimeS: null })).text).toBe('—');
    expect(healthMissing(health())).toBeNull();
  });

  it('RAM, swap, load against CPUs, uptime', () => {
    expect(memoryFact(health()).text).toBe('24.0 GiB / 64.0 GiB');
    expect(swapFact(health()).text).toBe('1.0 GiB / 8.0 GiB');
    expect(swapFact(health({ swapTotalBytes: 0, swapFreeBytes: 0 })).text).toBe('none');
    expect(loadFact(health())).toMatchObject({ text: '2.50 / 8 CPUs', flag: null });
    expect(loadFact(health({ load1: 9.1 })).flag).toBe('above CPU count');
    expect(loadFact(health({ cpuCount: null })).text).toBe('2.50 / — CPUs');
    expect(uptimeFact(health()).text).toBe('3 d 1 h');
  });

  it('a reboot is news for a day; stale and old figures say so with their age', () => {
    expect(rebootBadge(health({ rebootedAtMs: NOW - 4 * 60_000 }), NOW)).toBe('rebooted 4 min ago');
    expect(rebootBadge(health({ rebootedAtMs: NOW - 25 * 3_600_000 }), NOW)).toBeNull();
    expect(rebootBadge(health(), NOW)).toBeNull();
    expect(staleNote(health(), NOW)).toBeNull();
    expect(staleNote(health({ staleReason: 'SSH_DISCONNECTED: link down', atMs: NOW - 120_000 }), NOW)).toMatchObject({ text: 'stale, read 2 min ago' });
    expect(staleNote(health({ atMs: NOW - 300_000 }), NOW)?.text).toBe('old, read 5 min ago');
  });

  it('counts process flags and faults; faults not read yet are null, not 0', () => {
    const h = host('a', {
      health: health(),
      gpuProcesses: { atMs: NOW, matchedAtMs: NOW, flags: [{ code: 'FLEET_GPU_PROCESS_UNKNOWN', message: 'PID 4812 …', pid: 4812, serviceId: null, gpuIndex: 0, command: 'kill 4812' }] },
    });
    expect(faultCounts(h)).toEqual({ processFlags: 1, xid: null, ecc: null, throttling: null });
    expect(issueSummary(faultCounts(h)).text).toBe('1 process flag');
    expect(issueSummary(faultCounts(host('b'))).text).toBe('processes not read yet · GPU faults not read yet');
    expect(issueSummary(faultCounts({ ...h, gpuProcesses: { atMs: NOW, matchedAtMs: NOW, flags: [] } })).text).toBe('no process flag · GPU faults not read yet');
    const faults = { atMs: NOW, pciBusId: null, eccEnabled: true, eccCorrectedVolatile: 0, eccUncorrectedVolatile: 2, eccCorrectedAggregate: 0, eccUncorrectedAggregate: 2, retiredPages: 0, retiredPagesPending: false, throttleReasons: ['hw_thermal_slowdown'], slowdownSinceMs: NOW - 90_000, temperatureCriticalC: null, rasUncorrected: null, rasCorrected: null, source: 'nvidia-smi' };
    const g = host('c', {
      health: health({ kernelLog: { source: 'journalctl', why: null, xids: [{ atMs: NOW, xid: 79, pciBusId: null, gpuIndex: 0, pid: null, text: 'NVRM: Xid 79' }] } }),
      gpuProcesses: { atMs: NOW, matchedAtMs: NOW, flags: [] },
    });
    g.gpus = g.gpus.map((x) => ({ ...x, faults }));
    expect(faultCounts(g)).toEqual({ processFlags: 0, xid: 1, ecc: 1, throttling: 1 });
    expect(issueSummary(faultCounts(g)).text).toBe('1 Xid · 1 GPU with ECC errors · 1 GPU throttling');
    const quiet = host('d', { gpuProcesses: { atMs: NOW, matchedAtMs: NOW, flags: [] }, health: health({ kernelLog: { source: null, why: 'journalctl -k: not in group systemd-journal', xids: [] } }) });
    quiet.gpus = quiet.gpus.map((x) => ({ ...x, faults: { ...faults, eccCorrectedVolatile: 5, eccUncorrectedVolatile: 0, eccUncorrectedAggregate: 0, throttleReasons: ['gpu_idle'], slowdownSinceMs: null } }));
    expect(faultCounts(quiet)).toEqual({ processFlags: 0, xid: null, ecc: 0, throttling: 0 });
    expect(issueSummary(faultCounts(quiet)).text).toBe('no process flag · no GPU fault in what was read');
    expect(issueSummary(faultCounts(quiet)).title).toMatch(/not read yet: kernel log/);
  });
});
