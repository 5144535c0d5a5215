import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GPU_QUERY_FIELDS, nvidiaSmiQueryCommand, parseNvidiaSmiCsv, parseNvidiaSmiValue } from '../../../../src-main/core/telemetry/index.js';

const fixture = (name: string) => readFileSync(join(import.meta.dirname, '../../../fixtures/nvidia-smi', name), 'utf8');

describe('parseNvidiaSmiValue', () => {
  it('turns sentinels into null and strips units', () => {
    for (const s of ['[N/A]', 'N/A', '[Not Supported]', '[Unknown Error]', '[Requested functionality has been deprecated]', '']) {
      expect(parseNvidiaSmiValue(s)).toBeNull();
    }
    expect(parseNvidiaSmiValue('19818 MiB')).toBe(19818);
    expect(parseNvidiaSmiValue('100 %')).toBe(100);
    expect(parseNvidiaSmiValue('631.95 W')).toBe(631.95);
    expect(parseNvidiaSmiValue('1980 MHz')).toBe(1980);
    expect(parseNvidiaSmiValue('NVIDIA L40S')).toBe('NVIDIA L40S');
    expect(parseNvidiaSmiValue('GPU-00000000-0000-0000-0000-000000000000')).toBe('GPU-00000000-0000-0000-0000-000000000000');
  });
});

describe('parseNvidiaSmiCsv', () => {
  it('reads noheader,nounits output in the order of the fields asked', () => {
    const text = [
      '0, GPU-aaaa, NVIDIA L20, 38751, 46068, 100, 254.31, 350.00, 71',
      '1, GPU-bbbb, NVIDIA L20, [N/A], 46068, [N/A], [Not Supported], 350.00, 40',
    ].join('\n');
    const { rows, errors } = parseNvidiaSmiCsv(text, GPU_QUERY_FIELDS);
    expect(errors).toBe(0);
    expect(rows[0]).toEqual({
      index: 0,
      uuid: 'GPU-aaaa',
      name: 'NVIDIA L20',
      'memory.used': 38751,
      'memory.total': 46068,
      'utilization.gpu': 100,
      'power.draw': 254.31,
      'power.limit': 350,
      'temperature.gpu': 71,
    });
    expect(rows[1]!['memory.used']).toBeNull();
    expect(rows[1]!['utilization.gpu']).toBeNull();
    expect(rows[1]!['power.draw']).toBeNull();
  });

  it('counts lines with the wrong number of columns and keeps the rest', () => {
    const text = ['0, GPU-a, X, 1, 2, 3, 4, 5, 6', 'garbage', '1, GPU-b, X, 1, 2', '', '2, GPU-c, X, 1, 2, 3, 4, 5, 6'].join('\n');
    const { rows, errors } = parseNvidiaSmiCsv(text, GPU_QUERY_FIELDS);
    expect(errors).toBe(2);
    expect(rows.map((r) => r['index'])).toEqual([0, 2]);
  });

  it('reads the real H100 capture (csv with header and units)', () => {
    const load = parseNvidiaSmiCsv(fixture('h100-80gb-hbm3_drv590.48.01.query-gpu.load.csv'), GPU_QUERY_FIELDS);
    expect(load.errors).toBe(0);
    expect(load.rows).toEqual([
      {
        index: 0,
        uuid: 'GPU-00000000-0000-0000-0000-000000000000',
        name: 'NVIDIA H100 80GB HBM3',
        'memory.used': 19818,
        'memory.total': 81559,
        'utilization.gpu': 100,
        'power.draw': 631.95,
        'power.limit': 700,
        'temperature.gpu': 59,
      },
    ]);
    const idle = parseNvidiaSmiCsv(fixture('h100-80gb-hbm3_drv590.48.01.query-gpu.idle.csv'), GPU_QUERY_FIELDS);
    expect(idle.rows[0]!['memory.used']).toBe(0);
    expect(idle.rows[0]!['power.draw']).toBe(69.85);
  });

  it('reads the MIG capture: utilization is [N/A] → null, the rest is there', () => {
    for (const [file, used, power] of [
      ['h100-mig_drv590.48.01.query-gpu.idle.csv', 59, 71.15],
      ['h100-mig_drv590.48.01.query-gpu.load.csv', 11125, 433.78],
    ] as const) {
      const { rows, errors } = parseNvidiaSmiCsv(fixture(file), GPU_QUERY_FIELDS);
      expect(errors).toBe(0);
      expect(rows[0]!['utilization.gpu']).toBeNull();
      expect(rows[0]!['memory.used']).toBe(used);
      expect(rows[0]!['power.draw']).toBe(power);
    }
  });

  it('reads the L40S capture, including bare N/A and every column when no fields are given', () => {
    const { rows, errors } = parseNvidiaSmiCsv(fixture('l40s_drv595.80.query-gpu.load.csv'));
    expect(errors).toBe(0);
    const row = rows[0]!;
    expect(Object.keys(row)).toHaveLength(202);
    expect(row['name']).toBe('NVIDIA L40S');
    expect(row['memory.total']).toBe(46068);
    expect(row['memory.used']).toBe(1235);
    expect(row['utilization.gpu']).toBe(9);
    expect(row['temperature.memory']).toBeNull(); // bare N/A
    expect(row['clocks.current.sm']).toBe(2520);
    expect(row['display_mode']).toBeNull(); // [Requested functionality has been deprecated]
    expect(row['timestamp']).toBe('2026/07/03 08:33:53.415');
    expect(row['hostname']).toBeNull(); // empty cell
  });

  it('returns nulls for requested fields the header lacks', () => {
    const { rows } = parseNvidiaSmiCsv('index, name\n0, NVIDIA A10', ['index', 'name', 'power.draw']);
    expect(rows).toEqual([{ index: 0, name: 'NVIDIA A10', 'power.draw': null }]);
  });

  it('builds the exact query command', () => {
    expect(nvidiaSmiQueryCommand()).toBe(
      'nvidia-smi --query-gpu=index,uuid,name,memory.used,memory.total,utilization.gpu,power.draw,power.limit,temperature.gpu --format=csv,noheader,nounits',
    );
  });
});
