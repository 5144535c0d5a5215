import { describe, expect, it } from 'vitest';
import type { GpuSample } from '../../../src-main/demo/gpu-model.js';
import { formatTimestamp, runNvidiaSmi } from '../../../src-main/demo/nvidia-smi.js';

function sample(index: number, over: Partial<GpuSample> = {}): GpuSample {
  return {
    timestampMs: new Date(2026, 6, 3, 8, 33, 53, 415).getTime(),
    index,
    name: 'NVIDIA L40S',
    uuid: `GPU-0000000${index}-0000-0000-0000-000000000000`,
    busId: `00000000:0${index + 1}:00.0`,
    serial: '1320000000001',
    driverVersion: '570.133.20',
    computeCap: '8.9',
    memoryTotalMiB: 46068,
    memoryUsedMiB: 19818,
    memoryFreeMiB: 25641,
    memoryReservedMiB: 609,
    utilizationGpuPct: 100,
    utilizationMemoryPct: 45,
    powerDrawW: 250.134,
    powerLimitW: 350,
    temperatureC: 59,
    fanSpeedPct: null,
    pstate: 'P0',
    smClockMHz: 2520,
    maxSmClockMHz: 2520,
    memClockMHz: 9001,
    maxMemClockMHz: 9001,
    processes: [],
    throttleReasons: [],
    ecc: { correctedVolatile: 0, uncorrectedVolatile: 0, correctedAggregate: 0, uncorrectedAggregate: 0 },
    remappedRowsUncorrectable: 0,
    remapPending: false,
    ...over,
  };
}

describe('nvidia-smi --query-gpu', () => {
  it('prints the fields in the order asked, canonical header names with units', () => {
    const r = runNvidiaSmi(['--query-gpu=power.draw,index,gpu_name,memory.used,utilization.gpu,temperature.gpu,clocks.sm', '--format=csv'], [sample(0), sample(1)]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      'power.draw [W], index, name, memory.used [MiB], utilization.gpu [%], temperature.gpu, clocks.current.sm [MHz]',
      '250.13 W, 0, NVIDIA L40S, 19818 MiB, 100 %, 59, 2520 MHz',
      '250.13 W, 1, NVIDIA L40S, 19818 MiB, 100 %, 59, 2520 MHz',
      '',
    ]);
  });

  it('drops the header with noheader and units with nounits (both places)', () => {
    expect(runNvidiaSmi(['--query-gpu=index,memory.used', '--format=csv,noheader'], [sample(0)]).stdout).toBe('0, 19818 MiB\n');
    expect(runNvidiaSmi(['--query-gpu=index,memory.used', '--format=csv,nounits'], [sample(0)]).stdout).toBe('index, memory.used\n0, 19818\n');
    expect(runNvidiaSmi(['--query-gpu', 'memory.used,power.draw', '--format', 'csv,noheader,nounits'], [sample(0)]).stdout).toBe('19818, 250.13\n');
  });

  it('prints [N/A] for values the board does not have, with or without units', () => {
    const q = ['--query-gpu=fan.speed,mig.mode.current,compute_mode', '--format=csv,noheader'];
    expect(runNvidiaSmi(q, [sample(0)]).stdout).toBe('[N/A], [N/A], Default\n');
    expect(runNvidiaSmi(['--query-gpu=fan.speed', '--format=csv'], [sample(0)]).stdout).toBe('fan.speed [%]\n[N/A]\n');
  });

  it('formats the timestamp like the driver', () => {
    expect(formatTimestamp(new Date(2026, 6, 3, 8, 3, 5, 7).getTime())).toBe('2026/07/03 08:03:05.007');
    expect(runNvidiaSmi(['--query-gpu=timestamp,pstate', '--format=csv,noheader'], [sample(0)]).stdout).toBe('2026/07/03 08:33:53.415, P0\n');
  });

  it('rejects an unknown field with exit 2 and the driver message', () => {
    const r = runNvidiaSmi(['--query-gpu=index,memory.usedd', '--format=csv'], [sample(0)]);
    expect(r.code).toBe(2);
    expect(r.stdout.split('\n')[0]).toBe('Field "memory.usedd" is not a valid field to query.');
    expect(r.stdout).toContain('--help-query-gpu');
  });

  it('supports -i to select GPUs and refuses a bad format', () => {
    expect(runNvidiaSmi(['--query-gpu=index', '--format=csv,noheader', '-i', '1'], [sample(0), sample(1)]).stdout).toBe('1\n');
    expect(runNvidiaSmi(['--query-gpu=index', '--format=json'], [sample(0)]).code).toBe(2);
  });

  it('lists the supported fields in --help-query-gpu', () => {
    const r = runNvidiaSmi(['--help-query-gpu'], [sample(0)]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('"memory.used"');
    expect(r.stdout).toContain('"name" or "gpu_name"');
    expect(r.stdout).toContain('"clocks.current.sm" or "clocks.sm"');
  });
});

describe('nvidia-smi --query-compute-apps', () => {
  it('prints one row per process and GPU; header only when idle', () => {
    const busy = [
      sample(0, { processes: [{ pid: 4242, processName: 'VLLM::Worker_TP0', usedMemoryMiB: 38770 }] }),
      sample(1, { processes: [{ pid: 4243, processName: 'VLLM::Worker_TP1', usedMemoryMiB: 38770 }] }),
    ];
    const q = ['--query-compute-apps=pid,name,used_memory,gpu_uuid', '--format=csv'];
    expect(runNvidiaSmi(q, busy).stdout.split('\n')).toEqual([
      'pid, process_name, used_gpu_memory [MiB], gpu_uuid',
      '4242, VLLM::Worker_TP0, 38770 MiB, GPU-00000000-0000-0000-0000-000000000000',
      '4243, VLLM::Worker_TP1, 38770 MiB, GPU-00000001-0000-0000-0000-000000000000',
      '',
    ]);
    expect(runNvidiaSmi(q, [sample(0)]).stdout).toBe('pid, process_name, used_gpu_memory [MiB], gpu_uuid\n');
    expect(runNvidiaSmi(['--query-compute-apps=pid,bogus', '--format=csv'], busy).code).toBe(2);
  });
});
