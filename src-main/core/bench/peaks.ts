// A run's GPU peaks, taken from the fleet's readings of its host while it
// runs. On an AMD APU the model and its KV cache live in GTT (system memory
// the GPU maps) and VRAM is only the BIOS carve-out, so both are kept: a run
// on strix that recorded VRAM alone read 120 MiB for a 30 GiB model.
import type { Peaks } from '../../../src-preload/contract/index.js';
import type { HostState } from '../fleet/index.js';

export interface PeakReading {
  vramMiB: number | null;
  /** null where no GPU of the host reports GTT (NVIDIA) or none said how much. */
  gttMiB: number | null;
  gpuUtilPct: number | null;
  powerW: number | null;
  kvCachePct: number | null;
}

export const NO_PEAKS: Readonly<Peaks> = Object.freeze({ vramMiB: null, gttMiB: null, gpuUtilPct: null, powerW: null, kvCachePct: null, samples: 0 });

/** The sum over GPUs that said; null when none did (unknown, not 0). */
function sumKnown(values: readonly (number | null | undefined)[]): number | null {
  const known = values.filter((v): v is number => typeof v === 'number');
  return known.length ? known.reduce((a, v) => a + v, 0) : null;
}

/** What one reading of the host says, or null when its GPU figures are stale (they would repeat an old peak). */
export function peakReadingOf(host: HostState, serviceId: string | null): PeakReading | null {
  if (host.gpus.stale !== null) return null;
  const gpus = host.gpus.readings;
  const util = gpus.map((g) => g.utilizationPct).filter((v): v is number => v !== null);
  const withGtt = gpus.filter((g) => g.gttUsedMiB !== undefined || g.gttTotalMiB !== undefined);
  const kv = host.services.find((s) => s.id === serviceId)?.figures?.kvCachePct ?? null;
  return {
    vramMiB: sumKnown(gpus.map((g) => g.memoryUsedMiB)),
    gttMiB: withGtt.length ? sumKnown(withGtt.map((g) => g.gttUsedMiB)) : null,
    gpuUtilPct: util.length ? Math.max(...util) : null,
    powerW: sumKnown(gpus.map((g) => g.powerW)),
    // One decimal, as the fleet screen shows it.
    kvCachePct: kv === null ? null : Math.round(kv * 10) / 10,
  };
}

const maxOf = (a: number | null | undefined, b: number | null): number | null => (b === null ? (a ?? null) : a === null || a === undefined ? b : Math.max(a, b));

/** Raises each peak to the reading where it is higher; counts the sample. */
export function raisePeaks(peaks: Peaks, r: PeakReading): void {
  peaks.vramMiB = maxOf(peaks.vramMiB, r.vramMiB);
  peaks.gttMiB = maxOf(peaks.gttMiB, r.gttMiB);
  peaks.gpuUtilPct = maxOf(peaks.gpuUtilPct, r.gpuUtilPct);
  peaks.powerW = maxOf(peaks.powerW, r.powerW);
  peaks.kvCachePct = maxOf(peaks.kvCachePct, r.kvCachePct);
  peaks.samples++;
}
