// The memory bars of one GPU row. NVIDIA: VRAM. AMD: VRAM and GTT (system
// memory the GPU maps); on an APU (Strix Halo) the VRAM is a small BIOS
// carve-out and the model lives in GTT, so the VRAM bar says so.
import type { GpuVendor, GpuView } from '../../../../src-preload/contract/index.js';
import { formatMemory, ratioPct } from '../../format/format.js';

export interface MemoryBar {
  readonly kind: 'vram' | 'gtt';
  /** The visible label: "VRAM", "VRAM (carve-out)" or "GTT". */
  readonly label: string;
  /** What the figure is, for the tooltip. */
  readonly title: string;
  readonly usedMiB: number | null;
  readonly totalMiB: number | null;
  readonly pct: number | null;
  readonly text: string;
}

export const VENDOR_NAME: Readonly<Record<GpuVendor, string>> = { nvidia: 'NVIDIA', amd: 'AMD' };

/** The GPU's own vendor, else the host's; null when neither is known yet. */
export function gpuVendorOf(gpu: GpuView, hostVendor: GpuVendor | null | undefined): GpuVendor | null {
  return gpu.vendor ?? hostVendor ?? null;
}

const known = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v);

/** True when GTT is larger than VRAM: VRAM is then the BIOS carve-out of an APU. */
export function isCarveOut(gpu: GpuView): boolean {
  return known(gpu.gttTotalMiB) && known(gpu.memoryTotalMiB) && gpu.gttTotalMiB > gpu.memoryTotalMiB;
}

/** Whether the row shows a GTT bar: the source reported GTT, or the GPU is AMD (then an unread GTT is "—"). */
export function showsGtt(gpu: GpuView, hostVendor: GpuVendor | null | undefined): boolean {
  return gpu.gttUsedMiB !== undefined || gpu.gttTotalMiB !== undefined || gpuVendorOf(gpu, hostVendor) === 'amd';
}

export function gpuMemoryBars(gpu: GpuView, hostVendor: GpuVendor | null | undefined): MemoryBar[] {
  const carveOut = isCarveOut(gpu);
  const vram: MemoryBar = {
    kind: 'vram',
    label: carveOut ? 'VRAM (carve-out)' : 'VRAM',
    title: carveOut ? 'VRAM: the BIOS carve-out of this APU; the model lives mostly in GTT' : 'VRAM used / total',
    usedMiB: gpu.memoryUsedMiB,
    totalMiB: gpu.memoryTotalMiB,
    pct: ratioPct(gpu.memoryUsedMiB, gpu.memoryTotalMiB),
    text: formatMemory(gpu.memoryUsedMiB, gpu.memoryTotalMiB),
  };
  if (!showsGtt(gpu, hostVendor)) return [vram];
  const used = gpu.gttUsedMiB ?? null;
  const total = gpu.gttTotalMiB ?? null;
  const gtt: MemoryBar = {
    kind: 'gtt',
    label: 'GTT',
    title: used === null && total === null ? 'GTT (system memory the GPU maps): not reported by the source' : 'GTT, system memory the GPU maps: used / total',
    usedMiB: used,
    totalMiB: total,
    pct: ratioPct(used, total),
    text: formatMemory(used, total),
  };
  return [vram, gtt];
}
