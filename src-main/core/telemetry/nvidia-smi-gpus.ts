import { GPU_QUERY_FIELDS, parseNvidiaSmiCsv, type NvidiaSmiValue } from './nvidia-smi.js';
import type { GpuProcess, GpuReading } from './readings.js';

// nvidia-smi beyond the basic query: which fields this driver knows
// (`--help-query-gpu`), the compute processes per GPU (`--query-compute-apps`,
// joined by gpu_uuid) and the readings the series store takes (wire-formats §5.1).

/** The fleet's base query plus MIG mode, in order; fields the driver lacks are left out of the query. */
export const WANTED_GPU_FIELDS = [...GPU_QUERY_FIELDS, 'mig.mode.current'] as const;

/** Required for a reading at all; the probe never drops these. */
const REQUIRED_GPU_FIELDS = new Set(['index', 'name']);

export const COMPUTE_APPS_FIELDS = ['gpu_uuid', 'pid', 'process_name', 'used_memory'] as const;

/**
 * `nvidia-smi --help-query-gpu` → every field name it lists, aliases included
 * (`"name" or "gpu_name"`). Lines that are not field headings are ignored.
 */
export function parseHelpQueryGpu(text: string): Set<string> {
  const fields = new Set<string>();
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith('"')) continue;
    for (const m of line.matchAll(/"([A-Za-z0-9_.]+)"/g)) fields.add(m[1]!);
  }
  return fields;
}

/** The wanted fields the driver knows (all wanted ones when the help text could not be read). */
export function selectGpuFields(supported: ReadonlySet<string> | null, wanted: readonly string[] = WANTED_GPU_FIELDS): string[] {
  if (supported === null || supported.size === 0) return [...wanted];
  return wanted.filter((f) => REQUIRED_GPU_FIELDS.has(f) || supported.has(f));
}

/** `Field "<x>" is not a valid field to query.` → x. */
export function unknownFieldInError(text: string): string | null {
  return /Field "([^"]+)" is not a valid field to query/.exec(text)?.[1] ?? null;
}

const num = (v: NvidiaSmiValue | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: NvidiaSmiValue | undefined): string | null => (v === null || v === undefined ? null : String(v));

/** The figures every GPU view and reading takes from one nvidia-smi row (null where it said N/A). */
export function nvidiaGpuFigures(row: Record<string, NvidiaSmiValue>, index: number) {
  return {
    name: str(row['name']) ?? `GPU ${index}`,
    memoryUsedMiB: num(row['memory.used']),
    memoryTotalMiB: num(row['memory.total']),
    utilizationPct: num(row['utilization.gpu']),
    powerW: num(row['power.draw']),
    powerLimitW: num(row['power.limit']),
    temperatureC: num(row['temperature.gpu']),
  };
}

export interface ComputeApp extends GpuProcess {
  gpuUuid: string | null;
}

/** `--query-compute-apps=gpu_uuid,pid,process_name,used_memory` (header or not; header only when idle). */
export function parseComputeApps(text: string, fields: readonly string[] = COMPUTE_APPS_FIELDS): { apps: ComputeApp[]; errors: number } {
  // nvidia-smi prints canonical names in the header; map them back to the aliases we asked for.
  const canonical = text.replace(/\bused_gpu_memory\b/, 'used_memory');
  const { rows, errors } = parseNvidiaSmiCsv(canonical, fields);
  return {
    apps: rows.map((r) => ({
      gpuUuid: str(r['gpu_uuid']),
      pid: num(r['pid']),
      name: str(r['process_name']),
      usedMemoryMiB: num(r['used_memory']),
    })),
    errors,
  };
}

/** GPU rows (any subset of WANTED_GPU_FIELDS) → readings; processes joined by uuid when given. */
export function gpuReadingsFromNvidiaSmi(
  stdout: string,
  fields: readonly string[],
  apps: readonly ComputeApp[] | null = null,
): { gpus: GpuReading[]; errors: number } {
  const { rows, errors } = parseNvidiaSmiCsv(stdout, fields);
  const gpus = rows.map((row, i): GpuReading => {
    const index = Math.trunc(num(row['index']) ?? i);
    const uuid = str(row['uuid']);
    const mig = str(row['mig.mode.current']);
    return {
      index,
      uuid,
      vendor: 'nvidia',
      ...nvidiaGpuFigures(row, index),
      migEnabled: mig === null ? null : mig === 'Enabled',
      processes: apps === null ? null : apps.filter((a) => uuid !== null && a.gpuUuid === uuid).map(({ pid, name, usedMemoryMiB }) => ({ pid, name, usedMemoryMiB })),
    };
  });
  return { gpus, errors };
}
