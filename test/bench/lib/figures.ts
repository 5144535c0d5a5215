// Percentiles, medians and the PASS/MISS line the proxy benchmarks print beside each target.
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';

/** The p-th percentile of an ascending array (nearest rank); NaN when empty. */
export function pct(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function median(xs: number[]): number {
  return pct([...xs].sort((a, b) => a - b), 50);
}

export interface Verdict {
  name: string;
  figure: string;
  target: string;
  /** null: a figure reported beside the targets, without one of its own. */
  pass: boolean | null;
}

export function verdict(name: string, value: number, op: '≤' | '≥', bound: number, unit: string, digits = 2): Verdict {
  const pass = Number.isFinite(value) && (op === '≤' ? value <= bound : value >= bound);
  return { name, figure: `${value.toFixed(digits)}${unit}`, target: `${op} ${bound}${unit}`, pass };
}

export function printVerdicts(verdicts: Verdict[]): void {
  const w = Math.max(...verdicts.map((v) => v.name.length));
  const f = Math.max(...verdicts.map((v) => v.figure.length));
  for (const v of verdicts) console.log(`  ${v.pass === null ? '    ' : v.pass ? 'PASS' : 'MISS'}  ${v.name.padEnd(w)}  ${v.figure.padStart(f)}  (target ${v.target})`);
}

/** What the figures were measured on: the load averages, and the proxy sources' commit and whether they were edited. */
export function runContext(): string {
  const [l1, l5] = loadavg();
  let rev = '?';
  try {
    rev = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src-main/core/proxy'], { encoding: 'utf8' }).trim();
    if (dirty) rev += ` + uncommitted edits in src-main/core/proxy (${dirty.split('\n').length} files)`;
  } catch {
    // not a git checkout
  }
  return `load average ${l1!.toFixed(2)} / ${l5!.toFixed(2)} (1 / 5 min), proxy at ${rev}`;
}
