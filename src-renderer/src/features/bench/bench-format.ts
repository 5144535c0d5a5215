import type { BenchRun, Figure, LevelResult } from '../../../../src-preload/contract/index.js';

export const sec = (ms: number | null): string => (ms === null ? 'n/a' : (ms / 1000).toFixed(3));
export const num = (v: number | null, digits = 2): string => (v === null ? 'n/a' : v.toFixed(digits));

export function workload(l: LevelResult, run: BenchRun): string {
  if (l.phase === 'stability') return `stability loop, c=${l.level}`;
  if (run.scenario?.mode === 'open') return `rate ${l.level} req/s`;
  return run.slots !== null && l.level > run.slots ? `concurrency ${l.level}, ${run.slots} slots` : `concurrency ${l.level}`;
}

export function figureText(f: Figure): string {
  if (f.value === null) return 'unavailable';
  const v = f.unit === 'USD' ? f.value.toFixed(5) : f.unit === 'USD/1M tok' ? f.value.toFixed(2) : f.unit === 'ms' ? `${(f.value / 1000).toFixed(3)} s` : f.value.toFixed(1);
  return `${v}${f.unit === 'ms' ? '' : ` ${f.unit}`}${f.estimate ? ' (est.)' : ''}`;
}
