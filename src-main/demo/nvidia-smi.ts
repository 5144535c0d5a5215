// A pure nvidia-smi: parses the arguments the console (and operators) use and
// formats GPU samples the way driver 570–595 does (wire-formats §5.1): fields in
// the order asked, ", " separator, canonical names + " [unit]" in the header,
// "[N/A]" for values a board does not have, exit 2 for an unknown field.

import type { GpuProcess, GpuSample } from './gpu-model.js';

export interface ExecResult {
  stdout: string;
  stderr: string;
  code: number;
}

type Value = string | number | null;

interface FieldDef {
  name: string;
  aliases?: string[];
  unit?: string;
  help: string;
  get(s: GpuSample, count: number): Value;
}

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

/** `YYYY/MM/DD HH:MM:SS.mmm` in local time, as nvidia-smi prints it. */
export function formatTimestamp(ms: number): string {
  const d = new Date(ms);
  return (
    `${d.getFullYear()}/${pad2(d.getMonth() + 1)}/${pad2(d.getDate())} ` +
    `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`
  );
}

const watts = (w: number) => w.toFixed(2);

const REASON_BITS: Record<string, number> = {
  gpu_idle: 0x1, applications_clocks_setting: 0x2, sw_power_cap: 0x4, hw_slowdown: 0x8, sync_boost: 0x10,
  sw_thermal_slowdown: 0x20, hw_thermal_slowdown: 0x40, hw_power_brake_slowdown: 0x80,
};
const hex16 = (n: number) => `0x${n.toString(16).toUpperCase().padStart(16, '0')}`;

/** The fault fields as driver 570 names them (the older clocks_throttle_reasons.* are aliases, as on a real 570). */
const FAULT_FIELDS: readonly FieldDef[] = [
  { name: 'ecc.mode.current', help: 'The ECC mode that the GPU is currently operating under.', get: () => 'Enabled' },
  { name: 'ecc.errors.corrected.volatile.total', help: 'Total errors detected across entire chip.', get: (s) => s.ecc.correctedVolatile },
  { name: 'ecc.errors.corrected.aggregate.total', help: 'Total errors detected across entire chip.', get: (s) => s.ecc.correctedAggregate },
  { name: 'ecc.errors.uncorrected.volatile.total', help: 'Total errors detected across entire chip.', get: (s) => s.ecc.uncorrectedVolatile },
  { name: 'ecc.errors.uncorrected.aggregate.total', help: 'Total errors detected across entire chip.', get: (s) => s.ecc.uncorrectedAggregate },
  // Ada boards remap rows; their retired_pages read [N/A] (the L40S capture).
  { name: 'retired_pages.single_bit_ecc.count', aliases: ['retired_pages.sbe'], help: 'The number of GPU device memory pages that have been retired due to multiple single bit ECC errors.', get: () => null },
  { name: 'retired_pages.double_bit.count', aliases: ['retired_pages.dbe'], help: 'The number of GPU device memory pages that have been retired due to a double bit ECC error.', get: () => null },
  { name: 'retired_pages.pending', help: 'Checks if any GPU device memory pages are pending retirement on the next reboot.', get: () => null },
  { name: 'remapped_rows.correctable', aliases: ['remapped_rows.sbe'], help: 'The number of rows that have been remapped due to multiple single bit ECC errors.', get: () => 0 },
  { name: 'remapped_rows.uncorrectable', aliases: ['remapped_rows.dbe'], help: 'The number of rows that have been remapped due to a double bit ECC error.', get: (s) => s.remappedRowsUncorrectable },
  { name: 'remapped_rows.pending', help: 'Checks if any row remapping are pending on the next reboot.', get: (s) => (s.remapPending ? 'Yes' : 'No') },
  { name: 'clocks_event_reasons.supported', aliases: ['clocks_throttle_reasons.supported'], help: 'Bitmask of supported clock event reasons.', get: () => hex16(0x1ff) },
  {
    name: 'clocks_event_reasons.active',
    aliases: ['clocks_throttle_reasons.active'],
    help: 'Bitmask of active clock event reasons.',
    get: (s) => hex16(s.throttleReasons.reduce((m, r) => m | (REASON_BITS[r] ?? 0), 0)),
  },
  ...Object.keys(REASON_BITS).map((r) => ({
    name: `clocks_event_reasons.${r}`,
    aliases: [`clocks_throttle_reasons.${r}`],
    help: `Clock event reason ${r}.`,
    get: (s: GpuSample) => (s.throttleReasons.includes(r) ? 'Active' : 'Not Active'),
  })),
];

export const GPU_FIELDS: readonly FieldDef[] = [
  { name: 'timestamp', help: 'The timestamp of when the query was made in format "YYYY/MM/DD HH:MM:SS.msec".', get: (s) => formatTimestamp(s.timestampMs) },
  { name: 'driver_version', help: 'The version of the installed NVIDIA display driver. This is an alphanumeric string.', get: (s) => s.driverVersion },
  { name: 'count', help: 'The number of NVIDIA GPUs in the system.', get: (_s, count) => count },
  { name: 'name', aliases: ['gpu_name'], help: 'The official product name of the GPU. This is an alphanumeric string. For all products.', get: (s) => s.name },
  { name: 'serial', aliases: ['gpu_serial'], help: 'This number matches the serial number physically printed on each board.', get: (s) => s.serial },
  { name: 'uuid', aliases: ['gpu_uuid'], help: 'This value is the globally unique immutable alphanumeric identifier of the GPU.', get: (s) => s.uuid },
  { name: 'pci.bus_id', aliases: ['gpu_bus_id'], help: 'PCI bus id as "domain:bus:device.function", in hex.', get: (s) => s.busId },
  { name: 'index', help: 'Zero based index of the GPU. Can change at each boot.', get: (s) => s.index },
  { name: 'persistence_mode', help: 'A flag that indicates whether persistence mode is enabled for the GPU.', get: () => 'Enabled' },
  { name: 'fan.speed', unit: '%', help: "The fan speed value is the percent of the product's maximum noise tolerance fan speed.", get: (s) => s.fanSpeedPct },
  { name: 'pstate', help: 'The current performance state for the GPU. States range from P0 (maximum performance) to P12 (minimum performance).', get: (s) => s.pstate },
  { name: 'memory.total', unit: 'MiB', help: 'Total installed GPU memory.', get: (s) => s.memoryTotalMiB },
  { name: 'memory.reserved', unit: 'MiB', help: 'Total memory reserved by the NVIDIA driver and firmware.', get: (s) => s.memoryReservedMiB },
  { name: 'memory.used', unit: 'MiB', help: 'Total memory allocated by active contexts.', get: (s) => s.memoryUsedMiB },
  { name: 'memory.free', unit: 'MiB', help: 'Total free memory.', get: (s) => s.memoryFreeMiB },
  { name: 'compute_mode', help: 'The compute mode flag indicates whether individual or multiple compute applications may run on the GPU.', get: () => 'Default' },
  { name: 'compute_cap', help: 'The CUDA Compute Capability, represented as Major DOT Minor.', get: (s) => s.computeCap },
  { name: 'utilization.gpu', unit: '%', help: 'Percent of time over the past sample period during which one or more kernels was executing on the GPU.', get: (s) => s.utilizationGpuPct },
  { name: 'utilization.memory', unit: '%', help: 'Percent of time over the past sample period during which global (device) memory was being read or written.', get: (s) => s.utilizationMemoryPct },
  { name: 'temperature.gpu', help: 'Core GPU temperature. in degrees C.', get: (s) => s.temperatureC },
  { name: 'temperature.memory', help: 'HBM memory temperature. in degrees C.', get: () => null },
  { name: 'power.draw', unit: 'W', help: 'The last measured power draw for the entire board, in watts.', get: (s) => watts(s.powerDrawW) },
  { name: 'power.draw.average', unit: 'W', help: 'The last measured average power draw for the entire board, in watts.', get: (s) => watts(s.powerDrawW) },
  { name: 'power.draw.instant', unit: 'W', help: 'The last measured instant power draw for the entire board, in watts.', get: (s) => watts(s.powerDrawW) },
  { name: 'power.limit', aliases: ['gpu.power.requested_limit'], unit: 'W', help: 'The software power limit in watts.', get: (s) => watts(s.powerLimitW) },
  { name: 'enforced.power.limit', unit: 'W', help: 'The power management algorithm\'s power ceiling, in watts.', get: (s) => watts(s.powerLimitW) },
  { name: 'power.default_limit', unit: 'W', help: 'The default power management algorithm\'s power ceiling, in watts.', get: (s) => watts(s.powerLimitW) },
  { name: 'power.max_limit', unit: 'W', help: 'The maximum value in watts that power limit can be set to.', get: (s) => watts(s.powerLimitW) },
  { name: 'clocks.current.graphics', aliases: ['clocks.gr'], unit: 'MHz', help: 'Current frequency of graphics (shader) clock.', get: (s) => s.smClockMHz },
  { name: 'clocks.current.sm', aliases: ['clocks.sm'], unit: 'MHz', help: 'Current frequency of SM (Streaming Multiprocessor) clock.', get: (s) => s.smClockMHz },
  { name: 'clocks.current.memory', aliases: ['clocks.mem'], unit: 'MHz', help: 'Current frequency of memory clock.', get: (s) => s.memClockMHz },
  { name: 'clocks.max.sm', unit: 'MHz', help: 'Maximum frequency of SM (Streaming Multiprocessor) clock.', get: (s) => s.maxSmClockMHz },
  { name: 'clocks.max.memory', aliases: ['clocks.max.mem'], unit: 'MHz', help: 'Maximum frequency of memory clock.', get: (s) => s.maxMemClockMHz },
  { name: 'mig.mode.current', help: 'The MIG mode that the GPU is currently operating under.', get: () => null },
  ...FAULT_FIELDS,
];

interface AppRow {
  gpu: GpuSample;
  proc: GpuProcess;
}

const APP_FIELDS: readonly (Omit<FieldDef, 'get'> & { get(r: AppRow): Value })[] = [
  { name: 'timestamp', help: 'The timestamp of when the query was made in format "YYYY/MM/DD HH:MM:SS.msec".', get: (r) => formatTimestamp(r.gpu.timestampMs) },
  { name: 'gpu_name', help: 'The official product name of the GPU. This is an alphanumeric string. For all products.', get: (r) => r.gpu.name },
  { name: 'gpu_bus_id', help: 'PCI bus id as "domain:bus:device.function", in hex.', get: (r) => r.gpu.busId },
  { name: 'gpu_serial', help: 'This number matches the serial number physically printed on each board.', get: (r) => r.gpu.serial },
  { name: 'gpu_uuid', help: 'This value is the globally unique immutable alphanumeric identifier of the GPU.', get: (r) => r.gpu.uuid },
  { name: 'pid', help: 'Process ID of the compute application', get: (r) => r.proc.pid },
  { name: 'process_name', aliases: ['name'], help: 'Process Name', get: (r) => r.proc.processName },
  { name: 'used_gpu_memory', aliases: ['used_memory'], unit: 'MiB', help: 'Amount memory used on the device by the context.', get: (r) => r.proc.usedMemoryMiB },
];

function findField<F extends { name: string; aliases?: string[] }>(fields: readonly F[], key: string): F | undefined {
  return fields.find((f) => f.name === key || f.aliases?.includes(key));
}

interface CsvFormat {
  header: boolean;
  units: boolean;
}

function parseFormat(spec: string): CsvFormat | string {
  const parts = spec.split(',').map((p) => p.trim());
  if (parts[0] !== 'csv') return `"${spec}" is not a valid format.`;
  const out: CsvFormat = { header: true, units: true };
  for (const p of parts.slice(1)) {
    if (p === 'noheader') out.header = false;
    else if (p === 'nounits') out.units = false;
    else return `"${p}" is not a valid format option.`;
  }
  return out;
}

function render(value: Value, unit: string | undefined, units: boolean): string {
  if (value === null) return '[N/A]';
  return unit && units ? `${value} ${unit}` : String(value);
}

function headerFor(f: { name: string; unit?: string }, units: boolean): string {
  return f.unit && units ? `${f.name} [${f.unit}]` : f.name;
}

function csv<R, F extends { name: string; aliases?: string[]; unit?: string; get(r: R, n: number): Value }>(
  fields: readonly F[],
  which: 'gpu' | 'compute-apps',
  list: string,
  formatSpec: string | undefined,
  rows: R[],
): ExecResult {
  if (formatSpec === undefined) {
    return { stdout: '', stderr: 'Missing --format option. Please use --format=csv with --query-' + which + '.\n', code: 2 };
  }
  const format = parseFormat(formatSpec);
  if (typeof format === 'string') return { stdout: format + '\n', stderr: '', code: 2 };
  const keys = list.split(',').map((k) => k.trim()).filter((k) => k.length > 0);
  const picked: F[] = [];
  for (const key of keys) {
    const f = findField(fields, key);
    if (!f) {
      return {
        stdout: `Field "${key}" is not a valid field to query.\n\nSee 'nvidia-smi --help-query-${which}' for a list of valid fields.\n`,
        stderr: '',
        code: 2,
      };
    }
    picked.push(f);
  }
  const lines: string[] = [];
  if (format.header) lines.push(picked.map((f) => headerFor(f, format.units)).join(', '));
  for (const row of rows) lines.push(picked.map((f) => render(f.get(row, rows.length), f.unit, format.units)).join(', '));
  return { stdout: lines.map((l) => l + '\n').join(''), stderr: '', code: 0 };
}

function helpText(fields: readonly { name: string; aliases?: string[]; help: string }[], which: string): string {
  const lines = [`List of valid properties to query for the switch "--query-${which}":`, ''];
  for (const f of fields) {
    lines.push([f.name, ...(f.aliases ?? [])].map((n) => `"${n}"`).join(' or '));
    lines.push(f.help, '');
  }
  return lines.join('\n');
}

function table(samples: GpuSample[]): string {
  const first = samples[0];
  const bar = '+-----------------------------------------------------------------------------------------+';
  const out = [
    formatTimestamp(first?.timestampMs ?? 0).replace(/\//g, '-'),
    bar,
    `| NVIDIA-SMI ${first?.driverVersion ?? ''}             Driver Version: ${first?.driverVersion ?? ''}     CUDA Version: 12.8     |`,
    '|-----------------------------------------+------------------------+----------------------+',
    '| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |',
    '| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |',
    '|=========================================+========================+======================|',
  ];
  for (const s of samples) {
    out.push(
      `| ${String(s.index).padEnd(4)} ${s.name.padEnd(24)} On  | ${s.busId} Off |                    0 |`,
      `| N/A  ${String(s.temperatureC).padStart(2)}C    ${s.pstate.padEnd(4)} ${`${Math.round(s.powerDrawW)}W /  ${s.powerLimitW}W`.padStart(20)} | ${`${s.memoryUsedMiB}MiB / ${s.memoryTotalMiB}MiB`.padStart(22)} | ${`${s.utilizationGpuPct}%`.padStart(8)}      Default |`,
      '+-----------------------------------------+------------------------+----------------------+',
    );
  }
  out.push('', bar, '| Processes:                                                                              |');
  out.push('|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |');
  out.push('|=========================================================================================|');
  const procs = samples.flatMap((s) => s.processes.map((p) => ({ s, p })));
  if (procs.length === 0) out.push('|  No running processes found                                                             |');
  for (const { s, p } of procs) {
    out.push(`| ${String(s.index).padStart(4)}   N/A  N/A ${String(p.pid).padStart(16)}      C   ${p.processName.padEnd(34)} ${`${p.usedMemoryMiB}MiB`.padStart(10)} |`);
  }
  out.push(bar);
  return out.join('\n') + '\n';
}

/** Runs `nvidia-smi <args>` against the given samples (one per GPU, in index order). */
export function runNvidiaSmi(args: readonly string[], samples: GpuSample[]): ExecResult {
  let queryGpu: string | undefined;
  let queryApps: string | undefined;
  let format: string | undefined;
  let ids: number[] | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = () => inline ?? args[++i] ?? '';
    switch (flag) {
      case '--help-query-gpu':
        return { stdout: helpText(GPU_FIELDS, 'gpu'), stderr: '', code: 0 };
      case '--help-query-compute-apps':
        return { stdout: helpText(APP_FIELDS, 'compute-apps'), stderr: '', code: 0 };
      case '--query-gpu':
        queryGpu = value();
        break;
      case '--query-compute-apps':
        queryApps = value();
        break;
      case '--format':
        format = value();
        break;
      case '-i':
      case '--id':
        ids = value().split(',').map((x) => Number(x.trim()));
        break;
      default:
        return { stdout: `Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n`, stderr: '', code: 2 };
    }
  }
  let gpus = samples;
  if (ids) {
    const bad = ids.find((id) => !samples.some((s) => s.index === id));
    if (bad !== undefined) return { stdout: `No devices were found matching the given id: ${bad}\n`, stderr: '', code: 6 };
    gpus = samples.filter((s) => ids!.includes(s.index));
  }
  if (queryGpu !== undefined) return csv(GPU_FIELDS, 'gpu', queryGpu, format, gpus);
  if (queryApps !== undefined) {
    const rows = gpus.flatMap((gpu) => gpu.processes.map((proc) => ({ gpu, proc })));
    return csv(APP_FIELDS, 'compute-apps', queryApps, format, rows);
  }
  return { stdout: table(gpus), stderr: '', code: 0 };
}
