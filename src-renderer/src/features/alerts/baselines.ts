// What the degradation rule compares against, for a person: each model's
// per-sequence speed by load level, or why a stored baseline is not compared.
import type { Baseline } from '../../../../src-preload/contract/index.js';

const tokS = (v: number): string => (v >= 100 ? v.toFixed(0) : v.toFixed(1));

/** `c=1 21.3 · c=4 17.9 tok/s per sequence`, or the reason it is not compared. */
export function baselineLevelsText(b: Pick<Baseline, 'levels'>): { text: string; compared: boolean } {
  const levels = [...(b.levels ?? [])].sort((x, y) => x.concurrency - y.concurrency);
  if (levels.length === 0) return { text: 'not compared: stored before per-sequence levels — mark a benchmark run as the baseline again', compared: false };
  return { text: `${levels.map((l) => `c=${l.concurrency} ${tokS(l.perSeqTokPerS)}`).join(' · ')} tok/s per sequence`, compared: true };
}
