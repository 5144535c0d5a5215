import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppError, FakeClock } from '../../../../src-main/core/base/index.js';
import {
  AmdGpuSource,
  NvidiaSmiSource,
  gpuReadingsFromNvidiaSmi,
  parseAmdSmiMetricJson,
  parseAmdSysfs,
  parseComputeApps,
  parseHelpQueryGpu,
  parseRocmSmiJson,
  selectGpuFields,
  type ExecRunner,
} from '../../../../src-main/core/telemetry/index.js';

const fixture = (name: string) => readFileSync(join(import.meta.dirname, '../../../fixtures/nvidia-smi', name), 'utf8');

type Reply = { exitCode: number | null; stdout: string; stderr: string } | Error;
function fakeExec(reply: (command: string) => Reply): ExecRunner & { commands: string[] } {
  const commands: string[] = [];
  const run = (async (command: string) => {
    commands.push(command);
    const r = reply(command);
    if (r instanceof Error) throw r;
    return r;
  }) as unknown as ExecRunner & { commands: string[] };
  run.commands = commands;
  return run;
}

describe('nvidia-smi field probing', () => {
  it('reads every field name and alias from --help-query-gpu', () => {
    const fields = parseHelpQueryGpu(fixture('help-query-gpu.drv590.48.01.txt'));
    for (const f of ['index', 'uuid', 'gpu_uuid', 'name', 'gpu_name', 'memory.used', 'power.draw', 'mig.mode.current', 'temperature.gpu']) {
      expect(fields.has(f), f).toBe(true);
    }
    expect(fields.has('Section')).toBe(false);
  });

  it('drops wanted fields the driver does not list, keeps index and name', () => {
    expect(selectGpuFields(new Set(['uuid', 'memory.used']), ['index', 'name', 'uuid', 'memory.used', 'power.draw'])).toEqual(['index', 'name', 'uuid', 'memory.used']);
    expect(selectGpuFields(null, ['index', 'x'])).toEqual(['index', 'x']);
  });
});

describe('compute apps', () => {
  it('reads the real capture and joins processes to GPUs by uuid', () => {
    const { apps, errors } = parseComputeApps(fixture('h100-80gb-hbm3_drv590.48.01.query-compute-apps.load.csv'), [
      'timestamp',
      'gpu_name',
      'gpu_bus_id',
      'gpu_serial',
      'gpu_uuid',
      'pid',
      'process_name',
      'used_memory',
    ]);
    expect(errors).toBe(0);
    expect(apps.map((a) => [a.pid, a.name, a.usedMemoryMiB])).toEqual([
      [11327, '/root/tools/memhog', 2566],
      [11328, '/root/tools/memhog', 1542],
      [11345, './gpu_burn', 15690],
    ]);
    const idle = parseComputeApps(fixture('l40s_drv595.80.query-compute-apps.idle.csv'), ['timestamp', 'gpu_name', 'gpu_bus_id', 'gpu_serial', 'gpu_uuid', 'pid', 'process_name', 'used_memory']);
    expect(idle.apps).toEqual([]);

    const gpus = gpuReadingsFromNvidiaSmi(
      '0, GPU-a, NVIDIA H100, 19818, 81559, 100, 631.95, 700.00, 59, Disabled\n1, GPU-b, NVIDIA H100, 11125, 81559, [N/A], 433.78, 700.00, 50, Enabled',
      ['index', 'uuid', 'name', 'memory.used', 'memory.total', 'utilization.gpu', 'power.draw', 'power.limit', 'temperature.gpu', 'mig.mode.current'],
      [
        { gpuUuid: 'GPU-b', pid: 7, name: 'vllm', usedMemoryMiB: 11000 },
        { gpuUuid: 'GPU-a', pid: 8, name: 'python', usedMemoryMiB: 19000 },
      ],
    ).gpus;
    expect(gpus[0]!.processes).toEqual([{ pid: 8, name: 'python', usedMemoryMiB: 19000 }]);
    expect(gpus[1]).toMatchObject({ utilizationPct: null, migEnabled: true, memoryUsedMiB: 11125 });
  });
});

describe('NvidiaSmiSource', () => {
  const help = fixture('help-query-gpu.drv590.48.01.txt');
  const row = '0, GPU-a, NVIDIA L20, 38751, 46068, 100, 254.31, 350.00, 71, Disabled';

  it('probes once, then queries GPUs and every 5th time the compute apps in the same exec', async () => {
    const exec = fakeExec((c) =>
      c.includes('--help-query-gpu')
        ? { exitCode: 0, stdout: help, stderr: '' }
        : { exitCode: 0, stdout: c.includes('compute-apps') ? `${row}\n__GPU_CONSOLE_COMPUTE_APPS__\nGPU-a, 4242, vllm, 38000\n` : row, stderr: '' },
    );
    const src = new NvidiaSmiSource({ id: 'h/gpus', exec, clock: new FakeClock() });
    const first = await src.scrape();
    expect(first.ok && first.gpus![0]).toMatchObject({ memoryUsedMiB: 38751, powerW: 254.31, migEnabled: false, processes: [{ pid: 4242, name: 'vllm', usedMemoryMiB: 38000 }] });
    const second = await src.scrape();
    expect(second.ok && second.gpus![0]!.processes).toBeNull();
    expect(exec.commands.filter((c) => c.includes('--help-query-gpu'))).toHaveLength(1);
    expect(exec.commands[1]).toContain('--query-gpu=index,uuid,name,memory.used,memory.total,utilization.gpu,power.draw,power.limit,temperature.gpu,mig.mode.current');
  });

  it('a driver error, an unknown field, a hang and garbage are coded stale reasons', async () => {
    const cases: [Reply, string, RegExp][] = [
      [
        { exitCode: 9, stdout: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n", stderr: '' },
        'TELEMETRY_EXEC_FAILED',
        /exited 9: NVIDIA-SMI has failed/,
      ],
      [{ exitCode: 2, stdout: '', stderr: 'Field "mig.mode.current" is not a valid field to query.\n' }, 'TELEMETRY_UNKNOWN_FIELD', /mig\.mode\.current/],
      [new AppError('SSH_EXEC_TIMEOUT', 'command did not finish within 5000 ms'), 'SSH_EXEC_TIMEOUT', /5000 ms/],
      [{ exitCode: 0, stdout: 'Segmentation fault\n', stderr: '' }, 'TELEMETRY_UNPARSEABLE', /Segmentation fault/],
    ];
    for (const [reply, code, message] of cases) {
      const exec = fakeExec((c) => (c.includes('--help-query-gpu') ? { exitCode: 0, stdout: help, stderr: '' } : reply));
      const src = new NvidiaSmiSource({ id: 'h/gpus', exec, clock: new FakeClock() });
      const r = await src.scrape();
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.stale.code).toBe(code);
        expect(r.stale.message).toMatch(message);
      }
    }
  });

  it('after an unknown-field error it probes again', async () => {
    let n = 0;
    const exec = fakeExec((c) => {
      if (c.includes('--help-query-gpu')) return { exitCode: 0, stdout: help, stderr: '' };
      return n++ === 0 ? { exitCode: 2, stdout: '', stderr: 'Field "x" is not a valid field to query.' } : { exitCode: 0, stdout: row, stderr: '' };
    });
    const src = new NvidiaSmiSource({ id: 'h/gpus', exec, clock: new FakeClock(), appsEvery: 1000 });
    expect((await src.scrape()).ok).toBe(false);
    expect(src.queryFields).toBeNull();
    expect((await src.scrape()).ok).toBe(true);
    expect(exec.commands.filter((c) => c.includes('--help-query-gpu'))).toHaveLength(2);
  });
});

describe('AMD', () => {
  it('amd-smi JSON: {value, unit} objects, "N/A", and the gpu_data wrapper', () => {
    const body = [
      {
        gpu: 0,
        usage: { gfx_activity: { value: 42, unit: '%' }, umc_activity: { value: 3, unit: '%' } },
        power: { socket_power: { value: 220, unit: 'W' } },
        temperature: { edge: 'N/A', hotspot: { value: 61, unit: 'C' } },
        mem_usage: { total_vram: { value: 196592, unit: 'MB' }, used_vram: { value: 1.5, unit: 'GB' } },
      },
      { gpu: 1, usage: { gfx_activity: 'N/A' }, power: 'N/A' },
      42,
    ];
    for (const text of [JSON.stringify(body), JSON.stringify({ gpu_data: body })]) {
      const r = parseAmdSmiMetricJson(text)!;
      expect(r.errors).toBe(1);
      expect(r.gpus[0]).toMatchObject({ index: 0, utilizationPct: 42, powerW: 220, temperatureC: 61, memoryTotalMiB: 196592, memoryUsedMiB: 1536, vendor: 'amd' });
      expect(r.gpus[1]).toMatchObject({ index: 1, utilizationPct: null, powerW: null });
    }
    expect(parseAmdSmiMetricJson('amd-smi: command not found')).toBeNull();
  });

  it('rocm-smi JSON: string values in bytes', () => {
    const r = parseRocmSmiJson(
      JSON.stringify({
        card0: { 'GPU use (%)': '17', 'VRAM Total Memory (B)': '21458059264', 'VRAM Total Used Memory (B)': '27856896', 'Average Graphics Package Power (W)': '35.0', 'Temperature (Sensor edge) (C)': '44.0' },
        system: { 'Driver version': '6.8' },
      }),
    )!;
    expect(r.errors).toBe(0);
    expect(r.gpus).toHaveLength(1);
    expect(r.gpus[0]!.utilizationPct).toBe(17);
    expect(r.gpus[0]!.memoryTotalMiB).toBeCloseTo(20464, 0);
    expect(r.gpus[0]!.memoryUsedMiB).toBeCloseTo(26.5664, 3);
    expect(r.gpus[0]!.powerW).toBe(35);
    expect(r.gpus[0]!.temperatureC).toBe(44);
  });

  it('sysfs: an APU (Strix Halo-like: 512 MiB carve-out, GTT the model memory) with hwmon power and temperature', () => {
    const text = [
      'card card1',
      'mem_info_vram_used 402653184',
      'mem_info_vram_total 536870912',
      'mem_info_gtt_used 40802189312',
      'mem_info_gtt_total 65498251264',
      'gpu_busy_percent 87',
      'power1_average 71000000',
      'temp1_input 68000',
      '',
    ].join('\n');
    const r = parseAmdSysfs(text);
    expect(r.errors).toBe(0);
    expect(r.issues).toEqual([]);
    expect(r.gpus).toHaveLength(1);
    expect(r.gpus[0]).toMatchObject({ index: 1, vendor: 'amd', memoryUsedMiB: 384, memoryTotalMiB: 512, utilizationPct: 87, powerW: 71, temperatureC: 68 });
    expect(r.gpus[0]!.gttUsedMiB).toBeCloseTo(38912, 0);
    expect(r.gpus[0]!.gttTotalMiB).toBeCloseTo(62464, 0);
  });

  it('sysfs: unreadable files read as unknown; a card with nothing readable and stray lines are errors', () => {
    const r = parseAmdSysfs('card card0\nmem_info_vram_total 17179869184\ngpu_busy_percent 37\ncard card1\nbroken line here?\n');
    expect(r.errors).toBe(2);
    expect(r.gpus).toHaveLength(1);
    expect(r.gpus[0]).toMatchObject({ index: 0, memoryUsedMiB: null, memoryTotalMiB: 16384, utilizationPct: 37, powerW: null, temperatureC: null, gttUsedMiB: null });
    // each unknown figure is named with its file
    expect(r.issues).toEqual([
      'TELEMETRY_UNREADABLE_FILE: card0: mem_info_vram_used, mem_info_gtt_used, mem_info_gtt_total, hwmon power1_average / power1_input, hwmon temp1_input could not be read',
      'TELEMETRY_UNREADABLE_FILE: card1: mem_info_vram_used, mem_info_vram_total, mem_info_gtt_used, mem_info_gtt_total, gpu_busy_percent, hwmon power1_average / power1_input, hwmon temp1_input could not be read',
    ]);
  });

  it('AmdGpuSource: exit codes and unreadable output are stale', async () => {
    const ok = new AmdGpuSource({ id: 'h/gpus', tool: 'amd-sysfs', clock: new FakeClock(), exec: fakeExec(() => ({ exitCode: 0, stdout: 'card card0\nmem_info_vram_total 2\n', stderr: '' })) });
    expect((await ok.scrape()).ok).toBe(true);
    const bad = new AmdGpuSource({ id: 'h/gpus', tool: 'amd-smi', clock: new FakeClock(), exec: fakeExec(() => ({ exitCode: 127, stdout: '', stderr: 'amd-smi: not found' })) });
    const r = await bad.scrape();
    expect(r.ok ? null : r.stale.code).toBe('TELEMETRY_EXEC_FAILED');
  });
});
