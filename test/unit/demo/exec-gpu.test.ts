import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src-main/core/base/index.js';
import { SimAmdGpu } from '../../../src-main/demo/amd-gpu-model.js';
import { runCommand, type ExecHost } from '../../../src-main/demo/exec.js';
import { SimGpu, type GpuShare } from '../../../src-main/demo/gpu-model.js';
import { DEMO_HOSTS } from '../../../src-main/demo/profiles.js';
import { parseSsListeners } from '../../../src-main/core/report/host-facts.js';
import {
  AMD_SYSFS_COMMAND,
  AmdGpuSource,
  GPU_DETECT_COMMAND,
  NvidiaSmiSource,
  parseAmdSysfs,
  parseGpuDetect,
  type ExecRunner,
} from '../../../src-main/core/telemetry/index.js';

const L20 = DEMO_HOSTS.find((h) => h.label === 'l20-poc')!.gpu;
const STRIX = DEMO_HOSTS.find((h) => h.label === 'strix')!.gpu;
const MIB = 1048576;

function hosts() {
  const clock = new FakeClock();
  let share: GpuShare = { process: { pid: 4242, processName: 'llama-server', usedMemoryMiB: 20_000 }, busy: 0, resident: true };
  const source = { gpuShare: () => share };
  const nvidia = new SimGpu('n', 0, L20, clock);
  nvidia.attach(source);
  const amd = new SimAmdGpu('a', 0, STRIX, clock);
  amd.attach(source);
  const base = { bootMs: 0, nowMs: () => clock.now(), loadAverage: (): [number, number, number] => [0, 0, 0], restartCommands: [] };
  const nvidiaHost: ExecHost = { ...base, hostname: 'n', samples: () => [nvidia.sample()] };
  const amdHost: ExecHost = {
    ...base,
    hostname: 'a',
    gpuVendor: 'amd',
    samples: () => [],
    amdSamples: () => [amd.sample()],
    serviceListeners: () => [{ address: '127.0.0.1', port: 8080, backlog: 5, process: { name: 'llama-server', pid: 4242, fd: 3 } }],
  };
  const setShare = (s: Partial<GpuShare>) => (share = { ...share, ...s });
  return { clock, nvidiaHost, amdHost, setShare };
}

const runnerFor = (host: ExecHost): ExecRunner => async (command) => {
  const r = await runCommand(command, host);
  return { exitCode: r.code, stdout: r.stdout, stderr: r.stderr };
};

describe('demo exec: && lists and echo', () => {
  it('runs left to right and stops at the first non-zero exit', async () => {
    const { nvidiaHost } = hosts();
    expect(await runCommand('echo a && echo "b  c"', nvidiaHost)).toEqual({ stdout: 'a\nb  c\n', stderr: '', code: 0 });
    expect(await runCommand("echo 'x && y'", nvidiaHost)).toEqual({ stdout: 'x && y\n', stderr: '', code: 0 });
    const stopped = await runCommand('echo one && nope && echo never', nvidiaHost);
    expect(stopped).toEqual({ stdout: 'one\n', stderr: 'bash: nope: command not found\n', code: 127 });
    expect((await runCommand('nvidia-smi --query-gpu=bogus --format=csv && echo x', nvidiaHost)).stdout).not.toContain('x\n');
  });

  it('refuses an empty side and the other operators like bash', async () => {
    const { nvidiaHost } = hosts();
    expect(await runCommand('echo a && && echo b', nvidiaHost)).toMatchObject({ code: 2, stderr: expect.stringContaining('syntax error') });
    expect((await runCommand('echo a &&', nvidiaHost)).code).toBe(2);
    expect((await runCommand('echo a & echo b', nvidiaHost)).code).toBe(2);
    expect((await runCommand('echo a; echo b', nvidiaHost)).code).toBe(2);
  });
});

describe('demo exec: GPU tools per vendor', () => {
  it('answers the console GPU detection verbatim: nvidia-smi on NVIDIA hosts, the amdgpu card on the AMD host', async () => {
    const { nvidiaHost, amdHost } = hosts();
    const n = await runCommand(GPU_DETECT_COMMAND, nvidiaHost);
    expect(n).toEqual({ stdout: 'tool nvidia-smi\n', stderr: '', code: 0 });
    expect(parseGpuDetect(n.stdout)).toEqual({ tool: 'nvidia-smi', found: ['nvidia-smi'] });
    const a = await runCommand(GPU_DETECT_COMMAND, amdHost);
    expect(a).toEqual({ stdout: 'sysfs /sys/class/drm/card1/device\n', stderr: '', code: 0 });
    expect(parseGpuDetect(a.stdout)).toEqual({ tool: 'amd-sysfs', found: ['amd-sysfs'] });
    for (const tool of ['nvidia-smi', 'amd-smi', 'rocm-smi']) {
      expect(await runCommand(`${tool} --help`, amdHost)).toEqual({ stdout: '', stderr: `bash: ${tool}: command not found\n`, code: 127 });
    }
  });

  it('answers the amdgpu sysfs read with an APU: model in GTT, small carve-out, busy, power and temperature', async () => {
    const { clock, amdHost, nvidiaHost, setShare } = hosts();
    const idle = await runCommand(AMD_SYSFS_COMMAND, amdHost);
    expect(idle.code).toBe(0);
    expect(idle.stdout.split('\n')[0]).toBe('card card1');
    expect(idle.stdout).not.toContain('power1_average');
    const read = parseAmdSysfs(idle.stdout);
    expect(read.errors).toBe(0);
    const g = read.gpus[0]!;
    expect(g).toMatchObject({ index: 1, name: 'AMD Radeon 8060S', vendor: 'amd', memoryTotalMiB: 512, gttTotalMiB: 62 * 1024, utilizationPct: 0, powerLimitW: 120 });
    expect(g.memoryUsedMiB!).toBeLessThan(512);
    expect(g.gttUsedMiB!).toBeGreaterThan(20_000);
    expect(g.powerW!).toBeGreaterThan(5);
    expect(g.powerW!).toBeLessThan(25);
    setShare({ busy: 1, process: { pid: 4242, processName: 'llama-server', usedMemoryMiB: 26_000 } });
    clock.advance(120_000);
    const busy = parseAmdSysfs((await runCommand(AMD_SYSFS_COMMAND, amdHost)).stdout).gpus[0]!;
    expect(busy.utilizationPct!).toBeGreaterThanOrEqual(95);
    expect(busy.gttUsedMiB! - g.gttUsedMiB!).toBeCloseTo(6000, 0);
    expect(busy.powerW!).toBeGreaterThan(80);
    expect(busy.powerW!).toBeLessThanOrEqual(120);
    expect(busy.temperatureC!).toBeGreaterThan(g.temperatureC! + 20);
    expect(busy.temperatureC!).toBeLessThan(95);
    // An NVIDIA host has no amdgpu card: the loop prints nothing.
    expect(await runCommand(AMD_SYSFS_COMMAND, nvidiaHost)).toEqual({ stdout: '', stderr: '', code: 0 });
    const gtt = await runCommand('cat /sys/class/drm/card1/device/mem_info_gtt_used', amdHost);
    expect(Number(gtt.stdout) / MIB).toBeCloseTo(busy.gttUsedMiB!, 0);
    expect((await runCommand('cat /sys/class/drm/card1/device/hwmon/hwmon4/power1_cap', amdHost)).stdout).toBe('120000000\n');
    expect((await runCommand('cat /sys/class/drm/card1/device/nope', amdHost)).code).toBe(1);
  });

  it('serves the console GPU sources: AmdGpuSource (amd-sysfs) and NvidiaSmiSource with its probe and && compound', async () => {
    const { clock, amdHost, nvidiaHost } = hosts();
    const amd = await new AmdGpuSource({ id: 'a', exec: runnerFor(amdHost), clock, tool: 'amd-sysfs' }).scrape();
    expect(amd).toMatchObject({ ok: true, unreadable: 0, gpus: [{ name: 'AMD Radeon 8060S', memoryTotalMiB: 512 }] });
    const seen: string[] = [];
    const exec: ExecRunner = (command, o) => {
      seen.push(command);
      return runnerFor(nvidiaHost)(command, o);
    };
    const nvidia = new NvidiaSmiSource({ id: 'n', exec, clock });
    const first = await nvidia.scrape();
    expect(seen[0]).toBe('nvidia-smi --help-query-gpu');
    expect(seen[1]).toContain(' && echo __GPU_CONSOLE_COMPUTE_APPS__ && nvidia-smi --query-compute-apps=');
    expect(nvidia.queryFields).toEqual(['index', 'uuid', 'name', 'memory.used', 'memory.total', 'utilization.gpu', 'power.draw', 'power.limit', 'temperature.gpu', 'mig.mode.current']);
    expect(first).toMatchObject({ ok: true, unreadable: 0, gpus: [{ index: 0, name: 'NVIDIA L20', memoryUsedMiB: 20_000, memoryTotalMiB: 46068 }] });
    if (!first.ok) throw new Error('unreachable');
    expect(first.gpus?.[0]?.processes).toEqual([{ pid: 4242, name: 'llama-server', usedMemoryMiB: 20_000 }]);
    const second = await nvidia.scrape();
    expect(seen[2]).not.toContain('&&');
    expect(second).toMatchObject({ ok: true, gpus: [{ processes: null }] });
  });
});

describe('demo exec: ss -p', () => {
  it('shows the service processes to ops and every process under sudo, and the report parser still reads the sockets', async () => {
    const { amdHost } = hosts();
    const plain = await runCommand('ss -ltn', amdHost);
    expect(plain.stdout).not.toContain('users:');
    const withP = (await runCommand('ss -ltnp', amdHost)).stdout.split('\n');
    expect(withP[0]).toBe('State  Recv-Q Send-Q Local Address:Port Peer Address:PortProcess');
    expect(withP.find((l) => l.includes(':8080'))).toBe('LISTEN 0      5          127.0.0.1:8080      0.0.0.0:*   users:(("llama-server",pid=4242,fd=3))');
    expect(withP.find((l) => l.includes(':22 '))).not.toContain('users:');
    const bare = (await runCommand('ss -ltnpH', amdHost)).stdout;
    expect(bare).toContain('127.0.0.1:8080 0.0.0.0:*   users:(("llama-server",pid=4242,fd=3))\n');
    const root = (await runCommand('sudo -n ss -ltnp', amdHost)).stdout;
    expect(root).toContain('users:(("sshd",pid=1024,fd=3))');
    expect(parseSsListeners(bare).map((l) => `${l.address}:${l.port}`)).toEqual(['127.0.0.53:53', '127.0.0.54:53', '0.0.0.0:22', ':::22', '127.0.0.1:8080']);
  });
});
