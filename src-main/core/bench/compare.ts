// Side-by-side comparison of two runs: levels matched by phase and level,
// delta = b − a and its percentage of a (null where either side is missing).
import type { BenchRun, CompareRow } from '../../../src-preload/contract/index.js';

const METRICS: CompareRow['metric'][] = ['ttftP50Ms', 'ttftP95Ms', 'latencyP50Ms', 'latencyP95Ms', 'itlP50Ms', 'outputTokPerS', 'requestsPerS'];

export function compareRuns(a: BenchRun, b: BenchRun): CompareRow[] {
  const key = (phase: string, level: number) => `${phase}:${level}`;
  const keys = new Map<string, { phase: 'level' | 'stability'; level: number }>();
  for (const l of [...a.levels, ...b.levels]) keys.set(key(l.phase, l.level), { phase: l.phase, level: l.level });
  const rows: CompareRow[] = [];
  const sorted = [...keys.values()].sort((x, y) => (x.phase === y.phase ? x.level - y.level : x.phase === 'level' ? -1 : 1));
  for (const { phase, level } of sorted) {
    const la = a.levels.find((l) => l.phase === phase && l.level === level);
    const lb = b.levels.find((l) => l.phase === phase && l.level === level);
    for (const metric of METRICS) {
      const va = la?.[metric] ?? null;
      const vb = lb?.[metric] ?? null;
      const delta = va !== null && vb !== null ? vb - va : null;
      rows.push({ phase, level, metric, a: va, b: vb, delta, deltaPct: delta !== null && va !== null && va !== 0 ? (delta / va) * 100 : null });
    }
  }
  return rows;
}
