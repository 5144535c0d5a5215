import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FAULT_QUERIES } from '../../../../src-main/core/fleet/gpu-faults-command.js';
import { emptyRawFaults, parseNvidiaFaultCsv, parseXidLine, readAmdFaults, readKernelLog, type RawFaults } from '../../../../src-main/core/fleet/gpu-faults-parse.js';
import { GpuFaultsTracker } from '../../../../src-main/core/fleet/gpu-faults.js';
import { healthCommand } from '../../../../src-main/core/fleet/host-health-command.js';
import { parseHealthOutput } from '../../../../src-main/core/fleet/host-health-parse.js';

const NV = join(__dirname, '../../../fixtures/nvidia-smi');
const KLOG = join(__dirname, '../../../fixtures/kernel-log');
const lines = (file: string) => readFileSync(file, 'utf8').split('\n');

describe('the nvidia-smi fault figures, read from real captures (--format=csv, with units and the full field set)', () => {
  it('H100 idle: ECC on and all zero, remapped rows 0 (retired_pages [N/A] is the pre-Ampere counter, not an issue), only gpu_idle active', () => {
    const { gpus, issues } = parseNvidiaFaultCsv(lines(join(NV, 'h100-80gb-hbm3_drv590.48.01.query-gpu.idle.csv')));
    expect(gpus).toEqual([
      expect.objectContaining({
        gpuIndex: 0, pciBusId: '00000000:00:09.0', eccEnabled: true,
        eccCorrectedVolatile: 0, eccUncorrectedVolatile: 0, eccCorrectedAggregate: 0, eccUncorrectedAggregate: 0,
        retiredPages: 0, retiredPagesPending: false, throttleReasons: ['gpu_idle'],
      }),
    ]);
    expect(issues).toEqual([]);
  });

  it('L40S under load: no reason active ([] — known, none), the software power cap counter aside', () => {
    const { gpus } = parseNvidiaFaultCsv(lines(join(NV, 'l40s_drv595.80.query-gpu.load.csv')));
    expect(gpus[0]).toMatchObject({ pciBusId: '00000000:01:00.0', throttleReasons: [], retiredPages: 0 });
  });

  it('H100 with MIG: remapped rows and retired pages both [N/A] → null with the reason, never 0', () => {
    const { gpus, issues } = parseNvidiaFaultCsv(lines(join(NV, 'h100-mig_drv590.48.01.query-gpu.idle.csv')));
    expect(gpus[0]!.retiredPages).toBeNull();
    expect(gpus[0]!.retiredPagesPending).toBeNull();
    expect(gpus[0]!.eccUncorrectedVolatile).toBe(0);
    expect(issues).toEqual([{ code: 'FLEET_FAULTS_NOT_SUPPORTED', message: 'retired_pages / remapped_rows is not reported on GPU 0' }]);
  });

  it('[N/A] and [Not Supported] counters are null (with one issue per field), not 0; ECC off says so once', () => {
    const csv = [
      'index, pci.bus_id, ecc.mode.current, ecc.errors.corrected.volatile.total, ecc.errors.uncorrected.volatile.total, clocks_event_reasons.gpu_idle',
      '0, 00000000:41:00.0, Enabled, [Not Supported], [N/A], Not Active',
      '1, 00000000:81:00.0, Disabled, [N/A], [N/A], Active',
    ];
    const { gpus, issues } = parseNvidiaFaultCsv(csv);
    expect(gpus.map((g) => [g.eccEnabled, g.eccCorrectedVolatile, g.eccUncorrectedVolatile])).toEqual([[true, null, null], [false, null, null]]);
    expect(issues.map((i) => i.message)).toEqual(['retired_pages / remapped_rows is not reported on GPU 0, 1', 'ecc.errors.corrected.volatile.total is [Not Supported] on GPU 0', 'ecc.errors.uncorrected.volatile.total is [N/A] on GPU 0']);
    // Only some reason fields asked: the set is not known whole.
    expect(gpus[0]!.throttleReasons).toBeNull();
  });
});

describe('Xid lines from the kernel log (recorded real messages, test/fixtures/kernel-log/SOURCE.txt)', () => {
  it('journalctl -k -o short-iso-precise: the kernel timestamp, Xid, PCI address and pid of each line', () => {
    const xids = lines(join(KLOG, 'xid.journalctl.txt')).map(parseXidLine).filter((x) => x !== null);
    expect(xids.map((x) => [x.atMs, x.xid, x.pciBusId, x.pid])).toEqual([
      [Date.parse('2024-08-30T11:43:09.512Z'), 13, '0000:cb:00', null],
      [Date.parse('2024-08-30T11:43:14.020Z'), 109, '0000:cb:00', 1797828],
      [Date.parse('2025-10-25T08:12:40.101Z'), 79, '0000:44:00', null],
      [Date.parse('2026-05-18T02:00:01.000Z'), 45, '0000:dc:00', 1818990],
      [Date.parse('2025-07-06T18:02:59.400Z'), 13, '0000:01:00', 1773],
    ]);
    expect(xids[2]!.text).toBe('NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus');
  });

  it('dmesg --time-format iso (comma before the microseconds); a line that is no Xid is none', () => {
    const xids = lines(join(KLOG, 'xid.dmesg.txt')).map(parseXidLine).filter((x) => x !== null);
    expect(xids.map((x) => [x.atMs, x.xid, x.pciBusId])).toEqual([[Date.parse('2024-08-23T10:01:02.027Z'), 13, '0000:43:00'], [Date.parse('2024-08-30T11:43:14.020Z'), 109, '0000:cb:00']]);
    expect(parseXidLine('2024-08-30T11:43:14,020311+00:00 NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.129.03')).toBeNull();
  });

  it('masks a secret in the line', () => {
    const x = parseXidLine("2024-08-30T11:43:14,020311+00:00 NVRM: Xid (PCI:0000:cb:00): 13, pid=1, name=x, HF_TOKEN=hf_abcdefgh")!;
    expect(x.text).not.toContain('hf_abcdefgh');
    expect(x.text).toContain('HF_TOKEN=[redacted]');
  });

  it('joins each event to the GPU whose pci.bus_id is its PCI address (none: null), kept across rounds, deduped, newest 32', () => {
    const t = new GpuFaultsTracker();
    const csv = ['index, pci.bus_id', '0, 00000000:01:00.0', '1, 00000000:41:00.0', '2, 00000000:81:00.0'];
    const xid = (s: number, bus: string) => `2026-12-05T04:00:${String(s).padStart(2, '0')}.000000+0000 tri-gpu kernel: NVRM: Xid (PCI:0000:${bus}:00): 13, pid=7, name=python3, Graphics Exception`;
    const raw = (klogLines: string[]): RawFaults => ({ ...emptyRawFaults(), nvq: [{ code: 0, query: 'index,pci.bus_id', lines: csv }], klogNowS: 1_796_000_000, klog: [{ head: 'journalctl', lines: klogLines }] });
    let f = t.apply(raw([xid(1, '41'), xid(2, '3b')]), 'nvidia', 1);
    expect(f.kernelLog!.xids.map((x) => [x.pciBusId, x.gpuIndex])).toEqual([['0000:41:00', 1], ['0000:3b:00', null]]);
    expect(t.kernelLogSinceS).toBe(1_796_000_000 - 60);
    // The overlap reads xid(2) again: one event, not two.
    f = t.apply(raw([xid(2, '3b'), xid(3, '81')]), 'nvidia', 2);
    expect(f.kernelLog!.xids.map((x) => x.gpuIndex)).toEqual([1, null, 2]);
    f = t.apply(raw(Array.from({ length: 40 }, (_, i) => xid(10 + i, '01'))), 'nvidia', 3);
    expect(f.kernelLog!.xids).toHaveLength(32);
    expect(f.kernelLog!.xids.at(-1)!.atMs).toBe(Date.parse('2026-12-05T04:00:49Z'));
  });
});

describe('how the kernel log is read', () => {
  it('neither journalctl -k nor dmesg permitted: no source, and why names the group and the sysctl that would allow it', () => {
    const raw: RawFaults = { ...emptyRawFaults(), klogNowS: 1, klog: [{ head: 'journalctl denied ops ops docker', lines: [] }, { head: 'dmesg', lines: lines(join(KLOG, 'denied.dmesg.txt')) }] };
    const k = readKernelLog(raw)!;
    expect(k.source).toBeNull();
    expect(k.why).toContain('journalctl -k shows no kernel messages to ops (groups: ops docker)');
    expect(k.why).toContain('sudo usermod -aG systemd-journal ops');
    expect(k.why).toContain('dmesg: read kernel buffer failed: Operation not permitted (kernel.dmesg_restrict=1');
    // It fits the contract's KernelLogView.why (400) whole, even with many groups.
    const many = readKernelLog({ ...raw, klog: [{ head: `journalctl denied deploy-bot ${Array.from({ length: 40 }, (_, i) => `group-${i}`).join(' ')}`, lines: [] }, raw.klog[1]!] })!;
    expect(many.why!.length).toBeLessThanOrEqual(400);
    expect(many.why).toContain('sudo usermod -aG systemd-journal deploy-bot');
    const f = new GpuFaultsTracker().apply(raw, 'nvidia', 1);
    expect(f.kernelLog).toMatchObject({ source: null, xids: [] });
    expect(f.issues.some((i) => i.startsWith('FLEET_KERNEL_LOG_DENIED: journalctl -k shows no kernel messages to ops'))).toBe(true);
  });

  it('off: not read, no issue', () => {
    expect(readKernelLog(emptyRawFaults())).toBeNull();
  });
});

describe('the health script on a real sh with stand-in tools on PATH', () => {
  const bin = mkdtempSync(join(tmpdir(), 'faults-bin-'));
  afterAll(() => rmSync(bin, { recursive: true, force: true }));
  const tool = (name: string, body: string) => {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  const run = (kernelLog: 'auto' | 'off', sinceS: number | null) => {
    const cmd = healthCommand({ mode: 'fast', gpuVendor: 'nvidia', cacheSizeTimeoutS: 5, modelCache: ['/tmp'], dockerRoot: null, kernelLog, kernelLogSinceS: sinceS });
    return parseHealthOutput(execFileSync('sh', ['-c', cmd], { encoding: 'utf8', env: { ...process.env, PATH: `${bin}:/usr/bin:/bin` } }))!;
  };
  // An older driver: the clocks_event_reasons names are unknown to it (it exits 2, naming the field).
  const oldRow = ['0', 'GPU-1', '00000000:41:00.0', 'Enabled', '0', '0', '2', '0', '[N/A]', '[N/A]', '[N/A]', '0', '1', 'No', 'Not Active', 'Not Active', 'Not Active', 'Active', 'Active', 'Not Active', 'Not Active', 'Not Active'];
  tool(
    'nvidia-smi',
    [
      'case "$*" in *clocks_event_reasons*) echo \'Field "clocks_event_reasons.gpu_idle" is not a valid field to query.\'; echo; exit 2;; esac',
      'q=${1#--query-gpu=}; echo "$q" | sed "s/,/, /g"',
      `echo "${oldRow.join(', ')}"`,
    ].join('\n'),
  );
  tool('journalctl', 'echo "journalctl $*" >> "$(dirname "$0")/journal.calls"; exit 0');
  tool('dmesg', 'echo "dmesg: read kernel buffer failed: Operation not permitted" >&2; exit 1');

  it('falls back to clocks_throttle_reasons when the driver rejects the new names, and says so', () => {
    const raw = run('auto', null).faults;
    expect(raw.nvq.map((q) => [q.code, q.query])).toEqual([[2, FAULT_QUERIES[0]], [0, FAULT_QUERIES[1]]]);
    const f = new GpuFaultsTracker().apply(raw, 'nvidia', 5);
    expect(f.gpus[0]).toMatchObject({ pciBusId: '00000000:41:00.0', eccCorrectedAggregate: 2, retiredPages: 1, throttleReasons: ['hw_slowdown', 'hw_thermal_slowdown'], slowdownSinceMs: 5 });
    expect(f.issues[0]).toMatch(/^FLEET_FAULTS_OLD_FIELD_NAMES: .*clocks_event_reasons\.gpu_idle/);
  });

  it('a journal with no kernel line for the user and a restricted dmesg: the coded why, with the user the host names', () => {
    const f = new GpuFaultsTracker().apply(run('auto', null).faults, 'nvidia', 5);
    expect(f.kernelLog!.source).toBeNull();
    expect(f.kernelLog!.why).toMatch(/journalctl -k shows no kernel messages .* \(groups: /);
    expect(f.kernelLog!.why).toContain('kernel.dmesg_restrict=1');
  });

  it('reads the journal from the host time it is given (journalctl --since @s), and off reads nothing', () => {
    rmSync(join(bin, 'journal.calls'), { force: true });
    tool('journalctl', 'echo "journalctl $*" >> "$(dirname "$0")/journal.calls"; echo "2026-12-05T04:00:01.000000+0000 h kernel: NVRM: Xid (PCI:0000:41:00): 79, GPU has fallen off the bus."');
    const raw = run('auto', 1_796_000_000).faults;
    expect(readFileSync(join(bin, 'journal.calls'), 'utf8')).toContain('--since @1796000000');
    expect(readKernelLog(raw)).toMatchObject({ source: 'journalctl', why: null, xids: [{ xid: 79, pciBusId: '0000:41:00' }] });
    expect(run('off', null).faults).toMatchObject({ klogNowS: null, klog: [] });
  });
});

describe('AMD hwmon and RAS', () => {
  it('the junction critical limit, RAS counts summed over blocks, bad VRAM pages; past a critical limit is thermal throttling', () => {
    const { gpus, issues } = readAmdFaults([
      'temp card0 temp1 edge 61000 100000',
      'temp card0 temp2 junction 112000 110000',
      'temp card0 temp3 mem 70000 105000',
      'ras card0 umc_err_count ue: 2 ce: 5 ',
      'ras card0 gfx_err_count ue: 0 ce: 1 ',
      'badpages card0 3 1',
      'temp card1 temp1 edge 52000 89800',
      'noras card1',
    ]);
    expect(gpus[0]).toMatchObject({ gpuIndex: 0, temperatureCriticalC: 110, throttleReasons: ['thermal'], rasUncorrected: 2, rasCorrected: 6, retiredPages: 3, retiredPagesPending: true });
    expect(gpus[1]).toMatchObject({ gpuIndex: 1, temperatureCriticalC: 89.8, throttleReasons: null, rasUncorrected: null, retiredPages: null });
    expect(issues.map((i) => i.message)).toEqual([
      'card1: amdgpu exposes no RAS error counters (no device/ras; consumer and APU parts have none)',
      'card1: amdgpu sysfs has no throttle state; thermal throttling shows when a temperature reaches its critical limit',
    ]);
  });
});

describe('slowdownSinceMs', () => {
  const round = (t: GpuFaultsTracker, reasons: string | null, atMs: number) => {
    const names = ['gpu_idle', 'applications_clocks_setting', 'sw_power_cap', 'hw_slowdown', 'hw_thermal_slowdown', 'hw_power_brake_slowdown', 'sw_thermal_slowdown', 'sync_boost'];
    const header = ['index', ...names.map((n) => `clocks_event_reasons.${n}`)].join(', ');
    const row = ['0', ...names.map((n) => (reasons === null ? '[N/A]' : reasons.split(',').includes(n) ? 'Active' : 'Not Active'))].join(', ');
    return t.apply({ ...emptyRawFaults(), nvq: [{ code: 0, query: 'q', lines: [header, row] }] }, 'nvidia', atMs).gpus[0]!.slowdownSinceMs;
  };

  it('is the first read of a run of reads that all show a slowdown reason; sw_power_cap is none; an unknown read ends the run', () => {
    const t = new GpuFaultsTracker();
    expect(round(t, 'sw_power_cap', 1000)).toBeNull();
    expect(round(t, 'hw_thermal_slowdown', 2000)).toBe(2000);
    expect(round(t, 'hw_slowdown,hw_thermal_slowdown', 3000)).toBe(2000);
    expect(round(t, null, 4000)).toBeNull();
    expect(round(t, 'sw_thermal_slowdown', 5000)).toBe(5000);
    expect(round(t, '', 6000)).toBeNull();
  });
});
