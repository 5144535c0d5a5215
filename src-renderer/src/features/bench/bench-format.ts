import type { BenchRun, Figure, LevelResult, Peaks } from '../../../../src-preload/contract/index.js';

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

const orDash = (v: number | null | undefined, digits: number, unit: string): string => (v === null || v === undefined ? '—' : `${v.toFixed(digits)}${unit}`);

/** A run's peaks; VRAM and GTT side by side (an AMD APU's model lives in GTT). Unknown is "—", never 0. */
export function peaksText(p: Peaks): string {
  if (p.samples === 0) return 'no telemetry samples during the run';
  return `VRAM ${orDash(p.vramMiB, 0, ' MiB')} · GTT ${orDash(p.gttMiB, 0, ' MiB')} · GPU ${orDash(p.gpuUtilPct, 0, '%')} · power ${orDash(p.powerW, 0, ' W')} · KV ${orDash(p.kvCachePct, 1, '%')} (${p.samples} samples)`;
}
