import type { AmdTool } from './gpu-sources.js';

// Which GPU tool a host has (ARCHITECTURE §8: one GPU source per vendor).
// One exec lists what is there; the console picks nvidia-smi, then amd-smi,
// then rocm-smi (deprecated), then the amdgpu sysfs files.

export type GpuToolKind = 'nvidia-smi' | AmdTool;

/** Prints `tool <name>` per tool on PATH and `sysfs <dir>` per amdgpu card; always exits 0. */
export const GPU_DETECT_COMMAND =
  'for t in nvidia-smi amd-smi rocm-smi; do command -v "$t" >/dev/null 2>&1 && echo "tool $t"; done; ' +
  'for d in /sys/class/drm/card[0-9]/device /sys/class/drm/card[0-9][0-9]/device; do [ -r "$d/mem_info_vram_total" ] && echo "sysfs $d"; done; true';

const ORDER: readonly GpuToolKind[] = ['nvidia-smi', 'amd-smi', 'rocm-smi', 'amd-sysfs'];

export interface GpuDetection {
  /** The tool the console will use; null when the host shows none. */
  tool: GpuToolKind | null;
  /** Everything found, in preference order (shown when the chosen one fails). */
  found: GpuToolKind[];
}

export function parseGpuDetect(text: string): GpuDetection {
  const found = new Set<GpuToolKind>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    const tool = /^tool (nvidia-smi|amd-smi|rocm-smi)$/.exec(line);
    if (tool) found.add(tool[1] as GpuToolKind);
    else if (/^sysfs \/sys\/class\/drm\/card\d+\/device$/.test(line)) found.add('amd-sysfs');
  }
  const ordered = ORDER.filter((t) => found.has(t));
  return { tool: ordered[0] ?? null, found: ordered };
}

export function vendorOf(tool: GpuToolKind): 'nvidia' | 'amd' {
  return tool === 'nvidia-smi' ? 'nvidia' : 'amd';
}
