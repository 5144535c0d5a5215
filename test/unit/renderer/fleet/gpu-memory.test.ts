import { describe, expect, it } from 'vitest';
import type { GpuView } from '../../../../src-preload/contract/index.js';
import { gpuMemoryBars, gpuVendorOf, isCarveOut, showsGtt } from '../../../../src-renderer/src/features/fleet/gpu-memory.js';

const nvidia: GpuView = {
  index: 0,
  uuid: null,
  name: 'NVIDIA L20',
  memoryUsedMiB: 40000,
  memoryTotalMiB: 46068,
  utilizationPct: 50,
  powerW: 200,
  powerLimitW: 275,
  temperatureC: 60,
  vendor: 'nvidia',
};

// Strix Halo: a 512 MiB carve-out, the model in ~110 GiB of GTT
const strix: GpuView = {
  index: 0,
  uuid: null,
  name: 'AMD Radeon 8060S',
  memoryUsedMiB: 410,
  memoryTotalMiB: 512,
  utilizationPct: 30,
  powerW: 60,
  powerLimitW: null,
  temperatureC: 55,
  vendor: 'amd',
  gttUsedMiB: 19_456,
  gttTotalMiB: 113_664,
};

describe('GPU memory bars', () => {
  it('NVIDIA: one VRAM bar, no GTT', () => {
    const bars = gpuMemoryBars(nvidia, 'nvidia');
    expect(bars).toHaveLength(1);
    expect(bars[0]).toMatchObject({ kind: 'vram', label: 'VRAM', text: '39.1 / 45.0 GiB' });
    expect(showsGtt(nvidia, 'nvidia')).toBe(false);
  });

  it('AMD APU: VRAM is labelled the carve-out and GTT follows with its own bar', () => {
    expect(isCarveOut(strix)).toBe(true);
    const [vram, gtt] = gpuMemoryBars(strix, 'amd');
    expect(vram).toMatchObject({ kind: 'vram', label: 'VRAM (carve-out)', text: '0.4 / 0.5 GiB' });
    expect(gtt).toMatchObject({ kind: 'gtt', label: 'GTT', usedMiB: 19_456, totalMiB: 113_664, text: '19.0 / 111.0 GiB' });
    expect(gtt!.pct).toBeCloseTo(17.1, 1);
  });

  it('AMD discrete card (GTT smaller than VRAM): plain VRAM label, GTT still shown', () => {
    const mi = { ...strix, memoryTotalMiB: 196_608, memoryUsedMiB: 90_000, gttTotalMiB: 65_536, gttUsedMiB: 20 };
    const bars = gpuMemoryBars(mi, 'amd');
    expect(bars.map((b) => b.label)).toEqual(['VRAM', 'GTT']);
  });

  it('an AMD GPU whose source gave no GTT shows "—", never 0', () => {
    const noGtt: GpuView = { ...strix, gttUsedMiB: undefined, gttTotalMiB: undefined };
    delete (noGtt as { gttUsedMiB?: number }).gttUsedMiB;
    delete (noGtt as { gttTotalMiB?: number }).gttTotalMiB;
    const [vram, gtt] = gpuMemoryBars(noGtt, 'amd');
    expect(vram!.label).toBe('VRAM');
    expect(gtt).toMatchObject({ label: 'GTT', usedMiB: null, totalMiB: null, pct: null, text: '—' });
    expect(gtt!.title).toMatch(/not reported/);
  });

  it('unknown GTT used with a known total: "— / 111.0 GiB", no fill', () => {
    const [, gtt] = gpuMemoryBars({ ...strix, gttUsedMiB: null }, 'amd');
    expect(gtt).toMatchObject({ text: '— / 111.0 GiB', pct: null });
  });

  it('the GPU vendor wins over the host vendor; unknown before the first reading', () => {
    expect(gpuVendorOf({ ...nvidia, vendor: 'amd' }, 'nvidia')).toBe('amd');
    const { vendor: _v, ...bare } = nvidia;
    expect(gpuVendorOf(bare, 'nvidia')).toBe('nvidia');
    expect(gpuVendorOf(bare, null)).toBeNull();
    // GTT fields present without a vendor still get their bar
    expect(showsGtt({ ...bare, gttUsedMiB: 1, gttTotalMiB: 2 }, null)).toBe(true);
  });
});
