import { FLEET_GPU_SERIES } from './fleet-exposition.js';
import type { PromSample } from './prometheus-api.js';
import type { GpuReading } from './readings.js';

// GPU readings out of Prometheus series of one host: NVIDIA's DCGM exporter
// (DCGM_FI_DEV_*, MiB / % / W / °C, `modelName` and `UUID` labels), or — when
// a host has no DCGM series — the console's own exported GPU series (bytes,
// ratio), so that a console → Prometheus → console loop reads the same figures.
// The GPU index of DCGM series comes from the configured label (default `gpu`).

export const DCGM = {
  fbUsed: 'DCGM_FI_DEV_FB_USED',
  fbFree: 'DCGM_FI_DEV_FB_FREE',
  fbReserved: 'DCGM_FI_DEV_FB_RESERVED',
  util: 'DCGM_FI_DEV_GPU_UTIL',
  power: 'DCGM_FI_DEV_POWER_USAGE',
  powerLimit: 'DCGM_FI_DEV_POWER_MGMT_LIMIT',
  temp: 'DCGM_FI_DEV_GPU_TEMP',
} as const;

/** Every metric name the GPU query asks for. */
export const GPU_SERIES_NAMES: readonly string[] = [...Object.values(DCGM), ...Object.values(FLEET_GPU_SERIES)];

const MIB = 1024 * 1024;

type Field = 'used' | 'free' | 'reserved' | 'util' | 'power' | 'powerLimit' | 'temp' | 'total' | 'gttUsed' | 'gttTotal';

const DCGM_FIELDS: Record<string, Field> = {
  [DCGM.fbUsed]: 'used',
  [DCGM.fbFree]: 'free',
  [DCGM.fbReserved]: 'reserved',
  [DCGM.util]: 'util',
  [DCGM.power]: 'power',
  [DCGM.powerLimit]: 'powerLimit',
  [DCGM.temp]: 'temp',
};

/** The console's series, with the factor that brings each to the GpuReading unit. */
const CONSOLE_FIELDS: Record<string, { field: Field; factor: number }> = {
  [FLEET_GPU_SERIES.memoryUsedBytes]: { field: 'used', factor: 1 / MIB },
  [FLEET_GPU_SERIES.memoryTotalBytes]: { field: 'total', factor: 1 / MIB },
  [FLEET_GPU_SERIES.gttUsedBytes]: { field: 'gttUsed', factor: 1 / MIB },
  [FLEET_GPU_SERIES.gttTotalBytes]: { field: 'gttTotal', factor: 1 / MIB },
  [FLEET_GPU_SERIES.utilizationRatio]: { field: 'util', factor: 100 },
  [FLEET_GPU_SERIES.powerWatts]: { field: 'power', factor: 1 },
  [FLEET_GPU_SERIES.powerLimitWatts]: { field: 'powerLimit', factor: 1 },
  [FLEET_GPU_SERIES.temperatureCelsius]: { field: 'temp', factor: 1 },
};

interface Candidate {
  value: number;
  /** DCGM's MIG GPU instance (`GPU_I_ID`), when the series is one instance's. */
  instance: string | null;
}

interface GpuAcc {
  index: number;
  uuid: string | null;
  name: string | null;
  vendor: 'nvidia' | 'amd';
  fields: Map<Field, Candidate[]>;
  mig: boolean;
}

const key = (labels: Record<string, string>): string =>
  Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(',');

/**
 * One figure of a GPU from its candidate series: the whole-GPU series when there
 * is one; with only MIG instances, memory adds up over the instances (one series
 * each), utilisation is not comparable (null) and the rest is the first.
 */
function pick(field: Field, candidates: Candidate[] | undefined): number | null {
  if (!candidates || candidates.length === 0) return null;
  const whole = candidates.find((c) => c.instance === null);
  if (whole) return whole.value;
  if (field === 'util') return null;
  if (field === 'used' || field === 'free' || field === 'reserved') {
    const perInstance = new Map<string, number>();
    for (const c of candidates) if (!perInstance.has(c.instance!)) perInstance.set(c.instance!, c.value);
    return [...perInstance.values()].reduce((a, b) => a + b, 0);
  }
  return candidates[0]!.value;
}

function collect(samples: readonly PromSample[], gpuLabel: string, fromConsole: boolean): { gpus: Map<number, GpuAcc>; unreadable: number } {
  const gpus = new Map<number, GpuAcc>();
  let unreadable = 0;
  // A stable order, so two exporters scraped for one host always give the same pick.
  const sorted = [...samples].sort((a, b) => (key(a.labels) < key(b.labels) ? -1 : 1));
  for (const s of sorted) {
    const name = s.labels['__name__'] ?? '';
    const mapped = fromConsole ? CONSOLE_FIELDS[name] : DCGM_FIELDS[name] !== undefined ? { field: DCGM_FIELDS[name], factor: 1 } : undefined;
    if (!mapped) continue;
    const raw = s.labels[gpuLabel];
    const index = raw !== undefined && /^\d{1,4}$/.test(raw) ? Number(raw) : null;
    if (index === null || !Number.isFinite(s.value)) {
      unreadable++;
      continue;
    }
    let acc = gpus.get(index);
    if (!acc) {
      acc = { index, uuid: null, name: null, vendor: 'nvidia', fields: new Map(), mig: false };
      gpus.set(index, acc);
    }
    acc.uuid ??= s.labels['UUID'] ?? s.labels['uuid'] ?? null;
    acc.name ??= (fromConsole ? s.labels['name'] : s.labels['modelName']) ?? null;
    if (fromConsole && s.labels['vendor'] === 'amd') acc.vendor = 'amd';
    const instance = fromConsole ? null : (s.labels['GPU_I_ID'] ?? null) || null;
    if (instance !== null) acc.mig = true;
    const list = acc.fields.get(mapped.field) ?? [];
    list.push({ value: s.value * mapped.factor, instance });
    acc.fields.set(mapped.field, list);
  }
  return { gpus, unreadable };
}

function toReading(acc: GpuAcc, fromConsole: boolean): GpuReading {
  const f = (field: Field) => pick(field, acc.fields.get(field));
  const used = f('used');
  let total = f('total');
  if (total === null) {
    const free = f('free');
    // nvidia-smi's memory.total is used + free + reserved; DCGM splits it the same way.
    total = used !== null && free !== null ? used + free + (f('reserved') ?? 0) : null;
  }
  const reading: GpuReading = {
    index: acc.index,
    uuid: acc.uuid,
    name: acc.name ?? `GPU ${acc.index}`,
    vendor: acc.vendor,
    memoryUsedMiB: used,
    memoryTotalMiB: total,
    utilizationPct: f('util'),
    powerW: f('power'),
    powerLimitW: f('powerLimit'),
    temperatureC: f('temp'),
    migEnabled: fromConsole ? null : acc.mig,
    processes: null,
  };
  if (acc.vendor === 'amd') {
    reading.gttUsedMiB = f('gttUsed');
    reading.gttTotalMiB = f('gttTotal');
  }
  return reading;
}

/**
 * GPU readings of one host from its series (each with `__name__`). DCGM series
 * win; the console's own series are read only when the host has no DCGM series.
 * `unreadable` counts series without a usable GPU index or value.
 */
export function gpuReadingsFromSeries(samples: readonly PromSample[], gpuLabel: string): { gpus: GpuReading[]; unreadable: number; from: 'dcgm' | 'console' | null } {
  const dcgm = collect(samples, gpuLabel, false);
  if (dcgm.gpus.size > 0) {
    return { gpus: [...dcgm.gpus.values()].sort((a, b) => a.index - b.index).map((g) => toReading(g, false)), unreadable: dcgm.unreadable, from: 'dcgm' };
  }
  // The console writes the index as `gpu` whatever the DCGM label is called.
  const own = collect(samples, 'gpu', true);
  const gpus = [...own.gpus.values()].sort((a, b) => a.index - b.index).map((g) => toReading(g, true));
  return { gpus, unreadable: dcgm.unreadable + own.unreadable, from: gpus.length > 0 ? 'console' : null };
}
