import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GpuFaultsTracker } from '../../../src-main/core/fleet/gpu-faults.js';
import { parseXidLine } from '../../../src-main/core/fleet/gpu-faults-parse.js';
import { healthCommand } from '../../../src-main/core/fleet/host-health-command.js';
import { parseHealthOutput } from '../../../src-main/core/fleet/host-health-parse.js';
import { parseDemoFleetArgs } from '../../../src-main/cli/extra/demo-fleet.js';
import { demoFaultFlags } from '../../../src-main/cli/serve.js';
import { DEFAULT_DEMO_FAULTS, demoFaultsOf, parseDemoFault, startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';

describe('demo fault specs (serve --demo-fault, demo-fleet --fault)', () => {
  it('reads each form', () => {
    expect(parseDemoFault('tri-gpu:xid=79@gpu1')).toEqual({ host: 'tri-gpu', kind: 'xid', xid: 79, gpuIndex: 1 });
    expect(parseDemoFault('strix:throttle@gpu1')).toEqual({ host: 'strix', kind: 'throttle', gpuIndex: 1 });
    expect(parseDemoFault('l20-poc:disk-full')).toEqual({ host: 'l20-poc', kind: 'disk-full' });
    expect(parseDemoFault('l20-poc:ghost@qwen')).toEqual({ host: 'l20-poc', kind: 'ghost', serviceId: 'qwen', onPort: true });
    expect(parseDemoFault('tri-gpu:ghost=memory@ocr')).toEqual({ host: 'tri-gpu', kind: 'ghost', serviceId: 'ocr', onPort: false });
    expect(parseDemoFault('l20-poc:oom@qwen')).toEqual({ host: 'l20-poc', kind: 'oom', serviceId: 'qwen' });
    expect(parseDemoFault('none')).toBeNull();
  });

  it('refuses a bad one with DEMO_BAD_OPTIONS naming what is wrong; a shell word is never a fault', () => {
    expect(() => parseDemoFault('tri-gpu:xid=99@gpu1')).toThrow(/the demo raises Xid 13, 31, .*got "99"/);
    expect(() => parseDemoFault('tri-gpu:xid=13')).toThrow(/xid needs @gpuI/);
    expect(() => parseDemoFault('tri-gpu:melt@gpu1')).toThrow(/unknown fault "melt"/);
    expect(() => parseDemoFault('tri-gpu:oom@x; rm -rf /')).toThrow(/not of the form HOST:KIND/);
    try {
      parseDemoFault('x');
    } catch (err) {
      expect((err as { code: string }).code).toBe('DEMO_BAD_OPTIONS');
    }
  });

  it('no flag: the defaults; none: no fault; the CLI turns a bad spec into a usage error naming the flag', () => {
    expect(demoFaultsOf(undefined, DEFAULT_DEMO_FAULTS)).toEqual(DEFAULT_DEMO_FAULTS);
    expect(demoFaultsOf(['none'], DEFAULT_DEMO_FAULTS)).toEqual([]);
    expect(demoFaultFlags(undefined)).toBeUndefined();
    expect(demoFaultFlags('l20-poc:disk-full')).toEqual([{ host: 'l20-poc', kind: 'disk-full' }]);
    expect(() => demoFaultFlags(['l20-poc:disk-fll'])).toThrow(/^--demo-fault: demo fault "l20-poc:disk-fll": unknown fault/);
    const args = parseDemoFleetArgs(['--write-config', '/tmp/x.yaml', '--fault', 'tri-gpu:throttle@gpu2', '--fault', 'l20-poc:disk-full']);
    expect(args !== 'help' && args.faults).toEqual([{ host: 'tri-gpu', kind: 'throttle', gpuIndex: 2 }, { host: 'l20-poc', kind: 'disk-full' }]);
    expect(() => parseDemoFleetArgs(['--write-config', '/tmp/x.yaml', '--fault', 'tri-gpu:xid=1@gpu0'])).toThrow(/^--fault: /);
  });
});

describe('the built-in fleet started with its default faults', () => {
  let dir: string;
  let fleet: DemoFleet;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'demo-faults-'));
    fleet = await startDemoFleet({ dir, faults: DEFAULT_DEMO_FAULTS });
  });
  afterAll(async () => {
    await fleet.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  const faultsOf = async (label: string, vendor: 'nvidia' | 'amd') => {
    const cmd = healthCommand({ mode: 'fast', gpuVendor: vendor, cacheSizeTimeoutS: 60, modelCache: ['~/.cache/huggingface'], dockerRoot: null, kernelLog: 'auto', kernelLogSinceS: null });
    const out = parseHealthOutput((await fleet.host(label).run(cmd)).stdout)!;
    return { parsed: out, faults: new GpuFaultsTracker().apply(out.faults, vendor, Date.now()) };
  };

  it("tri-gpu: the kernel log's Xid 13 on GPU 2 names the leftover process that still holds 9.1 GiB there; the other hosts are clean", async () => {
    const tri = await faultsOf('tri-gpu', 'nvidia');
    const xids = tri.faults.kernelLog!.xids;
    expect(xids.map((x) => [x.xid, x.gpuIndex])).toEqual([[13, 2]]);
    expect(xids[0]!.atMs).toBeLessThan(Date.now() - 200_000);
    const ghost = tri.parsed.processes!.find((p) => p.pid === xids[0]!.pid);
    expect(ghost?.comm).toBe('VLLM::EngineCor');
    expect(fleet.host('tri-gpu').gpus()[2]!.sample().processes.find((p) => p.pid === ghost!.pid)?.usedMemoryMiB).toBe(9318);
    for (const [label, vendor] of [['l20-poc', 'nvidia'], ['strix', 'amd']] as const) {
      const f = (await faultsOf(label, vendor)).faults;
      expect(f.kernelLog!.xids, label).toEqual([]);
      expect(f.gpus.every((g) => g.slowdownSinceMs === null), label).toBe(true);
    }
  });

  it('the throttle knob: an NVIDIA GPU reads HW thermal slowdown at 91 °C or more; the Strix APU 98 °C past its 89.8 °C critical as thermal', async () => {
    fleet.host('l20-poc').setThermalThrottle(0, true);
    fleet.host('strix').setThermalThrottle(1, true);
    try {
      expect((await faultsOf('l20-poc', 'nvidia')).faults.gpus[0]!.throttleReasons).toEqual(['hw_slowdown', 'hw_thermal_slowdown']);
      expect(fleet.host('l20-poc').gpus()[0]!.sample().temperatureC).toBeGreaterThanOrEqual(89);
      expect((await faultsOf('strix', 'amd')).faults.gpus[0]).toMatchObject({ throttleReasons: ['thermal'], temperatureCriticalC: 89.8 });
    } finally {
      fleet.host('l20-poc').setThermalThrottle(0, false);
      fleet.host('strix').setThermalThrottle(1, false);
    }
    expect(() => fleet.host('strix').setThermalThrottle(0, true)).toThrow(/has no GPU 0/);
  });

  it('an operator reads the same kernel log: journalctl -k and dmesg --time-format iso as Ubuntu 22.04 prints them, core reads their Xid line alike', async () => {
    const tri = fleet.host('tri-gpu');
    const journal = await tri.run('journalctl -k -b -q --no-pager -o short-iso-precise');
    expect(journal.code).toBe(0);
    const jl = journal.stdout.trimEnd().split('\n');
    expect(jl[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+0000 tri-gpu kernel: Linux version 5\.15\.0-125-generic /);
    expect(jl.some((l) => l.includes('NVRM: loading NVIDIA UNIX x86_64 Kernel Module  570.133.20'))).toBe(true);
    const dmesg = await tri.run('dmesg --time-format iso');
    const dl = dmesg.stdout.trimEnd().split('\n');
    expect(dl.at(-1)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d,\d{6}\+00:00 NVRM: Xid \(PCI:0000:81:00\): 13, /);
    const a = parseXidLine(jl.at(-1)!)!;
    const b = parseXidLine(dl.at(-1)!)!;
    expect(a).toEqual(b);
    expect((await tri.run('journalctl -k -n 1')).stdout.split('\n')).toHaveLength(2);
    expect((await tri.run('dmesg')).stdout).toMatch(/^\[ {4}0\.000000\] Linux version/);
    expect((await fleet.host('strix').run('dmesg --time-format iso')).stdout).not.toContain('NVRM');
    expect((await tri.run('dmesg -w')).code).toBe(1);
  });
  it("an operator's df and free read the same figures the console's health round reads; setDiskFull shows in both; an unknown option is refused as coreutils does", async () => {
    const l20 = fleet.host('l20-poc');
    const read = async () => parseHealthOutput((await l20.run(healthCommand({ mode: 'fast', gpuVendor: 'nvidia', cacheSizeTimeoutS: 5, modelCache: [], dockerRoot: null, kernelLog: 'off', kernelLogSinceS: null }))).stdout)!;
    const bytes = (await l20.run('df -B1 /')).stdout.trimEnd().split('\n');
    expect(bytes[0]).toMatch(/^Filesystem +1B-blocks +Used +Available +Use% +Mounted on$/);
    const [, total, , avail] = bytes[1]!.split(/ +/);
    const root = (await read()).disks.find((d) => d.kind === 'root')!;
    expect(Number(total)).toBe(root.totalBytes);
    expect(Number(avail)).toBe(root.freeBytes);
    l20.setDiskFull(true);
    try {
      expect((await l20.run('df -h /')).stdout).toMatch(/\/dev\/nvme0n1p2 +200G +\d+G +8\.0G +\d+% \/\n$/);
      expect((await read()).disks.find((d) => d.kind === 'root')!.freeBytes).toBe(8 * 1024 ** 3);
    } finally {
      l20.setDiskFull(false);
    }
    const free = (await l20.run('free -b')).stdout.trimEnd().split('\n');
    expect(free[0]).toMatch(/^ +total +used +free +shared +buff\/cache +available$/);
    const mem = free[1]!.trim().split(/ +/);
    const h = await read();
    expect(Number(mem[1])).toBe(h.memTotalBytes);
    expect(Math.abs(Number(mem[6]) - h.memAvailableBytes!)).toBeLessThan(2 * 1024 ** 2);
    expect((await l20.run('free -h')).stdout).toMatch(/^Swap: +8\.0Gi /m);
    expect(await l20.run('df --bogus')).toMatchObject({ code: 1, stdout: '' });
    expect((await l20.run('df /nope')).stderr).toBe('df: /nope: No such file or directory\n');
  });
});
