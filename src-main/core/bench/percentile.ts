// Nearest-rank percentiles (field-notes §5): the value at rank ⌈p/100 × n⌉ of
// the sorted samples; no interpolation, so every figure is a measured sample.

export function nearestRank(samples: readonly number[], p: number): number | null {
  const values = samples.filter((v) => Number.isFinite(v));
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

/** Below this many samples a P95 is marked unstable. */
export const STABLE_P95_SAMPLES = 20;
