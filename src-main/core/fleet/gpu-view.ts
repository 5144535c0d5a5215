import type { GpuView } from '../../../src-preload/contract/fleet.js';
import { GPU_QUERY_FIELDS, nvidiaGpuFigures, parseNvidiaSmiCsv, type NvidiaSmiValue } from '../telemetry/index.js';

const num = (v: NvidiaSmiValue | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: NvidiaSmiValue | undefined): string | null => (v === null || v === undefined ? null : String(v));

/** nvidia-smi output of GPU_QUERY_FIELDS → contract GPU views (+ lines that could not be read). */
export function gpuViewsFromNvidiaSmi(stdout: string): { gpus: GpuView[]; errors: number } {
  const { rows, errors } = parseNvidiaSmiCsv(stdout, GPU_QUERY_FIELDS);
  const gpus = rows.map((row, i): GpuView => {
    const index = num(row['index']) ?? i;
    return {
      index: Math.trunc(index),
      uuid: str(row['uuid']),
      ...nvidiaGpuFigures(row, index),
    };
  });
  return { gpus, errors };
}
