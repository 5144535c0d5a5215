// The GPU commands the console sends as whole shell lines, answered as a
// real host's shell would print them: its GPU tool detection
// (GPU_DETECT_COMMAND) and the amdgpu sysfs read (AMD_SYSFS_COMMAND), both
// recognised verbatim since the demo host runs no shell; and `cat` of one
// sysfs file. The file lists come from telemetry, so the demo prints exactly
// what the console's loop would read.

import { AMD_SYSFS_DEVICE_FILES, AMD_SYSFS_HWMON_FILES } from '../core/telemetry/index.js';
import type { AmdSysfsSample } from './amd-gpu-model.js';
import type { ExecResult } from './nvidia-smi.js';

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

/** GPU_DETECT_COMMAND: `tool <name>` per tool on PATH, `sysfs <dir>` per amdgpu card (exit 0 either way). */
export function gpuDetectOutput(vendor: 'nvidia' | 'amd', amd: readonly AmdSysfsSample[]): ExecResult {
  const lines = vendor === 'nvidia' ? ['tool nvidia-smi'] : amd.map((s) => `sysfs ${sysfsDeviceDir(s.card)}`);
  return { stdout: lines.map((l) => l + '\n').join(''), stderr: '', code: 0 };
}

/** AMD_SYSFS_COMMAND: per card `card <name>`, then `<file> <value>` for each readable file, in the console's order. */
export function amdSysfsOutput(amd: readonly AmdSysfsSample[]): ExecResult {
  const lines: string[] = [];
  for (const s of amd) {
    const f = files(s);
    lines.push(`card ${s.card}`);
    for (const name of AMD_SYSFS_DEVICE_FILES) {
      const v = f.device.get(name);
      if (v !== undefined) lines.push(`${name} ${v}`);
    }
    for (const name of AMD_SYSFS_HWMON_FILES) {
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
