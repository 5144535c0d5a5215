import { TelemetryErrorCode } from './errors.js';
import { parseJsonBody } from './json-body.js';
import type { GpuReading } from './readings.js';

// AMD GPUs (wire-formats §5.2): amd-smi JSON, rocm-smi JSON and amdgpu sysfs
// values. Values may be strings, "N/A" or missing; those read as null.

export interface AmdParseResult {
  gpus: GpuReading[];
  /** Devices or values present but unreadable. */
  errors: number;
  /** Why figures are unknown (sysfs: the files that could not be read), `CODE: message` each. */
  issues?: string[];
}

function toNumber(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v !== 'string') return null;
  const t = v.trim();
  if (t === '' || /^n\/?a$/i.test(t)) return null;
  const n = Number(t.replace(/\s*(%|W|C|MB|MiB|B)$/i, ''));
  return Number.isFinite(n) ? n : null;
}

/** `{value, unit}` or a bare value → number in the unit asked for (memory in MiB). */
function valueOf(v: unknown, kind: 'mem' | 'plain' = 'plain'): number | null {
  if (v !== null && typeof v === 'object' && 'value' in v) {
    const n = toNumber((v as { value: unknown }).value);
    if (n === null || kind !== 'mem') return n;
    const unit = String((v as { unit?: unknown }).unit ?? 'MB').toUpperCase();
    if (unit === 'GB' || unit === 'GIB') return n * 1024;
    if (unit === 'KB' || unit === 'KIB') return n / 1024;
    if (unit === 'B') return n / 1024 / 1024;
    return n; // amd-smi "MB" is MiB
  }
  return toNumber(v);
}

const obj = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

function blank(index: number, name: string): GpuReading {
  return {
    index,
    uuid: null,
    name,
    vendor: 'amd',
    memoryUsedMiB: null,
    memoryTotalMiB: null,
    utilizationPct: null,
    powerW: null,
    powerLimitW: null,
    temperatureC: null,
    migEnabled: null,
    processes: null,
  };
}

/** `amd-smi metric [--usage --mem-usage --power --temperature] --json`: a list (or `{gpu_data:[…]}`). */
export function parseAmdSmiMetricJson(text: string): AmdParseResult | null {
  let body = parseJsonBody(text);
  if (body !== null && typeof body === 'object' && !Array.isArray(body) && Array.isArray((body as { gpu_data?: unknown }).gpu_data)) {
    body = (body as { gpu_data: unknown[] }).gpu_data;
  }
  if (!Array.isArray(body)) return null;
  const gpus: GpuReading[] = [];
  let errors = 0;
  body.forEach((item, i) => {
    const d = obj(item);
    if (Object.keys(d).length === 0) {
      errors++;
      return;
    }
    const index = toNumber(d['gpu']) ?? i;
    const g = blank(index, `AMD GPU ${index}`);
    const usage = obj(d['usage']);
    const mem = obj(d['mem_usage']);
    const power = obj(d['power']);
    const temp = obj(d['temperature']);
    g.utilizationPct = valueOf(usage['gfx_activity']);
    g.memoryUsedMiB = valueOf(mem['used_vram'], 'mem');
    g.memoryTotalMiB = valueOf(mem['total_vram'], 'mem');
    g.powerW = valueOf(power['socket_power']) ?? valueOf(power['average_socket_power']);
    g.powerLimitW = valueOf(power['power_limit']);
    g.temperatureC = valueOf(temp['edge']) ?? valueOf(temp['hotspot']);
    gpus.push(g);
  });
  return { gpus, errors };
}

function findKey(d: Record<string, unknown>, pattern: RegExp): unknown {
  const key = Object.keys(d).find((k) => pattern.test(k));
  return key === undefined ? undefined : d[key];
}

/** `rocm-smi --showuse --showmeminfo vram --showpower --showtemp --json`: `{"card0":{…strings…}}`. */
export function parseRocmSmiJson(text: string): AmdParseResult | null {
  const body = parseJsonBody(text);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  const gpus: GpuReading[] = [];
  let errors = 0;
  for (const [card, value] of Object.entries(body as Record<string, unknown>)) {
    const m = /^card(\d+)$/.exec(card);
    if (!m) continue; // "system" and other sections
    const d = obj(value);
    const index = Number(m[1]);
    const g = blank(index, String(d['Card series'] ?? d['Card Series'] ?? `AMD GPU ${index}`));
    g.utilizationPct = toNumber(findKey(d, /^GPU use \(%\)$/i));
    const used = toNumber(findKey(d, /^VRAM Total Used Memory \(B\)$/i));
    const total = toNumber(findKey(d, /^VRAM Total Memory \(B\)$/i));
    g.memoryUsedMiB = used === null ? null : used / 1048576;
    g.memoryTotalMiB = total === null ? null : total / 1048576;
    g.powerW = toNumber(findKey(d, /Package Power \(W\)$/i));
    g.temperatureC = toNumber(findKey(d, /^Temperature \(Sensor edge\) \(C\)$/i)) ?? toNumber(findKey(d, /^Temperature \(Sensor junction\) \(C\)$/i));
    if (g.utilizationPct === null && g.memoryUsedMiB === null && g.powerW === null) errors++;
    gpus.push(g);
  }
  return { gpus: gpus.sort((a, b) => a.index - b.index), errors };
}

/** The shell command whose output `parseAmdSysfs` reads: one line per amdgpu card. */
/** The amdgpu sysfs files read per card, in this order (wire-formats §5.2, Linux driver-misc.rst). */
export const AMD_SYSFS_DEVICE_FILES = [
  'mem_info_vram_used',
  'mem_info_vram_total',
  'mem_info_gtt_used',
  'mem_info_gtt_total',
  'gpu_busy_percent',
  'product_name',
] as const;
/** hwmon files of the card (power in µW, temperature in m°C); the first hwmon directory only. */
export const AMD_SYSFS_HWMON_FILES = ['power1_average', 'power1_input', 'power1_cap', 'temp1_input'] as const;

/**
 * One exec that prints, per amdgpu card, `card <name>` then `<file> <value>`
 * for each readable file. A file that cannot be read prints nothing, so its
 * figure reads as unknown, never as a made-up zero.
 */
export const AMD_SYSFS_COMMAND =
  'for d in /sys/class/drm/card[0-9]/device /sys/class/drm/card[0-9][0-9]/device; do ' +
  '[ -r "$d/mem_info_vram_total" ] || continue; echo "card $(basename "$(dirname "$d")")"; ' +
  `for f in ${AMD_SYSFS_DEVICE_FILES.join(' ')}; do v=$(cat "$d/$f" 2>/dev/null) && echo "$f $v"; done; ` +
  'for h in "$d"/hwmon/hwmon*; do [ -d "$h" ] || continue; ' +
  `for f in ${AMD_SYSFS_HWMON_FILES.join(' ')}; do v=$(cat "$h/$f" 2>/dev/null) && echo "$f $v"; done; break; done; done`;

const MIB = 1048576;
const SYSFS_FILES = new Set<string>([...AMD_SYSFS_DEVICE_FILES, ...AMD_SYSFS_HWMON_FILES]);

/**
 * The output of AMD_SYSFS_COMMAND: VRAM (on an APU, the BIOS carve-out) and
 * GTT used / total in bytes, busy %, power (µW, average before instant) and
 * temperature (m°C) from hwmon. A card whose files were all unreadable counts
 * as an error; a line that is neither a card header nor `file value` too.
 */
export function parseAmdSysfs(text: string): AmdParseResult {
  const gpus: GpuReading[] = [];
  const issues: string[] = [];
  let errors = 0;
  let card: { index: number; values: Map<string, string> } | null = null;
  const finish = (): void => {
    if (card === null) return;
    const v = card.values;
    const num = (k: string): number | null => {
      const raw = v.get(k);
      return raw === undefined ? null : toNumber(raw);
    };
    const mib = (k: string): number | null => {
      const n = num(k);
      return n === null ? null : n / MIB;
    };
    const g = blank(card.index, v.get('product_name')?.trim() || `AMD GPU ${card.index}`);
    g.memoryUsedMiB = mib('mem_info_vram_used');
    g.memoryTotalMiB = mib('mem_info_vram_total');
    g.gttUsedMiB = mib('mem_info_gtt_used');
    g.gttTotalMiB = mib('mem_info_gtt_total');
    g.utilizationPct = num('gpu_busy_percent');
    const power = num('power1_average') ?? num('power1_input');
    g.powerW = power === null ? null : power / 1e6;
    const cap = num('power1_cap');
    g.powerLimitW = cap === null ? null : cap / 1e6;
    const temp = num('temp1_input');
    g.temperatureC = temp === null ? null : temp / 1000;
    // product_name is absent on most APUs, and hwmon has either power file: neither is a fault.
    const missing = ['mem_info_vram_used', 'mem_info_vram_total', 'mem_info_gtt_used', 'mem_info_gtt_total', 'gpu_busy_percent'].filter((f) => num(f) === null);
    if (power === null) missing.push('hwmon power1_average / power1_input');
    if (temp === null) missing.push('hwmon temp1_input');
    if (missing.length > 0) issues.push(`${TelemetryErrorCode.UNREADABLE_FILE}: card${card.index}: ${missing.join(', ')} could not be read`);
    if (g.memoryUsedMiB === null && g.memoryTotalMiB === null && g.utilizationPct === null) errors++;
    else gpus.push(g);
    card = null;
  };
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '') continue;
    const header = /^card\s+card(\d+)$/.exec(line);
    if (header) {
      finish();
      card = { index: Number(header[1]), values: new Map() };
      continue;
    }
    const kv = /^([a-z0-9_]+)\s+(.+)$/.exec(line);
    if (kv && card !== null && SYSFS_FILES.has(kv[1]!)) {
      card.values.set(kv[1]!, kv[2]!);
      continue;
    }
    errors++;
  }
  finish();
  return { gpus, errors, issues };
}
