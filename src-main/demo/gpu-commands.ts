// The GPU commands a console sends as whole shell lines, answered as a real
// host's shell would print them: the GPU tool detection and the amdgpu sysfs
// read, both recognised verbatim since the demo host runs no shell; and `cat`
// of one sysfs file. The scripts and the file lists are the demo's own
// literals, not imported from the console: test/unit/demo/command-vocabulary
// .test.ts runs the console's commands here, so a change on either side fails
// there instead of changing both in step.

import type { AmdSysfsSample } from './amd-gpu-model.js';
import type { ExecResult } from './nvidia-smi.js';

/** The amdgpu files a reader asks for per card, in the order it lists them (Linux driver-misc.rst). */
const DEVICE_FILES = ['mem_info_vram_used', 'mem_info_vram_total', 'mem_info_gtt_used', 'mem_info_gtt_total', 'gpu_busy_percent', 'product_name'] as const;
/** The card's first hwmon directory: power in µW (average before instant), temperature in m°C. */
const HWMON_FILES = ['power1_average', 'power1_input', 'power1_cap', 'temp1_input'] as const;

/** Which tools are on PATH (`tool <name>`) and which amdgpu cards are readable (`sysfs <dir>`); exits 0. */
export const GPU_DETECT_SCRIPT =
  'for t in nvidia-smi amd-smi rocm-smi; do command -v "$t" >/dev/null 2>&1 && echo "tool $t"; done; ' +
  'for d in /sys/class/drm/card[0-9]/device /sys/class/drm/card[0-9][0-9]/device; do [ -r "$d/mem_info_vram_total" ] && echo "sysfs $d"; done; true';

/** Per readable amdgpu card `card <name>`, then `<file> <value>` for each file that can be read. */
export const AMD_SYSFS_SCRIPT =
  'for d in /sys/class/drm/card[0-9]/device /sys/class/drm/card[0-9][0-9]/device; do ' +
  '[ -r "$d/mem_info_vram_total" ] || continue; echo "card $(basename "$(dirname "$d")")"; ' +
  'for f in mem_info_vram_used mem_info_vram_total mem_info_gtt_used mem_info_gtt_total gpu_busy_percent product_name; do v=$(cat "$d/$f" 2>/dev/null) && echo "$f $v"; done; ' +
  'for h in "$d"/hwmon/hwmon*; do [ -d "$h" ] || continue; ' +
  'for f in power1_average power1_input power1_cap temp1_input; do v=$(cat "$h/$f" 2>/dev/null) && echo "$f $v"; done; break; done; done';

/** amdgpu registers one hwmon directory per card; its number depends on probe order. */
export const AMD_HWMON_DIR = 'hwmon4';

export function sysfsDeviceDir(card: string): string {
  return `/sys/class/drm/${card}/device`;
}

/** What each readable file holds; files an APU does not have (power1_average) are absent. */
function files(s: AmdSysfsSample): { device: Map<string, string>; hwmon: Map<string, string> } {
  return {
    device: new Map([
      ['mem_info_vram_used', String(s.vramUsedBytes)],
      ['mem_info_vram_total', String(s.vramTotalBytes)],
      ['mem_info_gtt_used', String(s.gttUsedBytes)],
      ['mem_info_gtt_total', String(s.gttTotalBytes)],
      ['gpu_busy_percent', String(s.busyPercent)],
      ['product_name', s.productName],
    ]),
    hwmon: new Map([
      ['power1_input', String(s.powerMicroW)],
      ['power1_cap', String(s.powerCapMicroW)],
      ['temp1_input', String(s.tempMilliC)],
    ]),
  };
}

/** GPU_DETECT_SCRIPT: `tool <name>` per tool on PATH, `sysfs <dir>` per amdgpu card (exit 0 either way). */
export function gpuDetectOutput(vendor: 'nvidia' | 'amd', amd: readonly AmdSysfsSample[]): ExecResult {
  const lines = vendor === 'nvidia' ? ['tool nvidia-smi'] : amd.map((s) => `sysfs ${sysfsDeviceDir(s.card)}`);
  return { stdout: lines.map((l) => l + '\n').join(''), stderr: '', code: 0 };
}

/** AMD_SYSFS_SCRIPT: per card `card <name>`, then `<file> <value>` for each readable file, in the script's order. */
export function amdSysfsOutput(amd: readonly AmdSysfsSample[]): ExecResult {
  const lines: string[] = [];
  for (const s of amd) {
    const f = files(s);
    lines.push(`card ${s.card}`);
    for (const name of DEVICE_FILES) {
      const v = f.device.get(name);
      if (v !== undefined) lines.push(`${name} ${v}`);
    }
    for (const name of HWMON_FILES) {
      const v = f.hwmon.get(name);
      if (v !== undefined) lines.push(`${name} ${v}`);
    }
  }
  return { stdout: lines.map((l) => l + '\n').join(''), stderr: '', code: 0 };
}

/** `cat <one sysfs file>` of a card; null when the path is no file of one. */
export function catSysfs(path: string, amd: readonly AmdSysfsSample[]): ExecResult | null {
  for (const s of amd) {
    const dir = sysfsDeviceDir(s.card);
    const f = files(s);
    const device = path.startsWith(`${dir}/`) ? path.slice(dir.length + 1) : null;
    if (device === null) continue;
    const hwmonPrefix = `hwmon/${AMD_HWMON_DIR}/`;
    const value = device.startsWith(hwmonPrefix) ? f.hwmon.get(device.slice(hwmonPrefix.length)) : f.device.get(device);
    if (value !== undefined) return { stdout: value + '\n', stderr: '', code: 0 };
  }
  return null;
}
