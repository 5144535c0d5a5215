// The soak's figures: request outcomes (overall, per class, per fault window),
// per-console-run resource drift after warm-up, shutdowns, and the verdicts
// beside their targets.
import type { FaultRecord } from './soak-faults.js';
import { printVerdicts, verdict, type Verdict } from './lib/figures.js';
import type { Sample } from './soak-probe.js';
import { BUDGET_GRACE_MS, type Outcome } from './soak-traffic.js';

const MiB = 1_048_576;
const s1 = (ms: number) => (ms / 1000).toFixed(1);

export function heldPastBudget(x: Outcome): boolean {
  const waited = x.answerMs ?? x.endMs - x.startMs;
  return waited > x.budgetMs + BUDGET_GRACE_MS;
}

function tally(xs: Outcome[]): string {
  const n = (k: Outcome['kind']) => xs.filter((x) => x.kind === k).length;
  return `sent ${xs.length}, served ${n('served')}, refused with Retry-After ${n('refused-ra')}, failed without ${n('failed')}, cut after the answer began ${n('cut')}, console stopped by the soak ${n('console-down')}, held past budget ${xs.filter(heldPastBudget).length}`;
}

export function printOutcomes(outcomes: Outcome[], faults: FaultRecord[], t0: number): void {
  console.log(`\nrequests: ${tally(outcomes)}`);
  for (const cls of ['interactive', 'batch'] as const) {
    const xs = outcomes.filter((x) => x.cls === cls);
    const waits = xs.map((x) => x.answerMs).filter((h): h is number => h !== null);
    console.log(`  ${cls.padEnd(11)} ${tally(xs)}; longest wait for the answer to begin ${waits.length ? s1(Math.max(...waits)) : '—'} s (budget ${s1(xs[0]?.budgetMs ?? 0)} s)`);
  }
  const why = new Map<string, number>();
  for (const x of outcomes) if (x.kind === 'failed' || x.kind === 'cut') why.set(`${x.cls} ${x.model}: ${x.why}`, (why.get(`${x.cls} ${x.model}: ${x.why}`) ?? 0) + 1);
  if (why.size) console.log(`  failures: ${[...why].map(([k, n]) => `${k} ×${n}`).join('; ')}`);
  console.log('\nfaults (outcomes of requests started from the fault until its recovery):');
  for (const f of faults) {
    const end = f.recoveredMs ?? f.startMs + 90_000;
    const xs = outcomes.filter((x) => x.startMs >= f.startMs && x.startMs <= end);
    const rec = f.recoveredMs === null ? 'NOT recovered within 90 s' : `served again after ${s1(f.recoveredMs - f.startMs)} s`;
    console.log(`  +${s1(f.startMs - t0).padStart(7)} s ${f.name.padEnd(15)} ${rec}; ${tally(xs)}`);
    for (const n of f.notes) console.log(`      ${n}`);
    for (const l of f.shutdown?.lines ?? []) console.log(`      ${l}`);
  }
}

interface RunDrift {
  run: number;
  spanMs: number;
  rss: [number, number];
  heap: [number, number] | null;
  fds: [number, number];
  children: [string, string];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const childText = (c: Record<string, number>) => Object.entries(c).map(([k, n]) => `${k}×${n}`).join(' ') || 'none';

/** Per console run: the first minute after warm-up against the last minute (medians). Runs too short for both are left out. */
export function runDrifts(samples: Sample[], warmupMs: number): RunDrift[] {
  const out: RunDrift[] = [];
  for (const run of [...new Set(samples.map((s) => s.run))]) {
    const xs = samples.filter((s) => s.run === run);
    const start = xs[0]!.atMs + warmupMs;
    const after = xs.filter((s) => s.atMs >= start);
    if (after.length < 4 || after[after.length - 1]!.atMs - start < 120_000) continue;
    const first = after.filter((s) => s.atMs < start + 60_000);
    const last = after.filter((s) => s.atMs > after[after.length - 1]!.atMs - 60_000);
    const heapOf = (ys: Sample[]) => ys.map((s) => s.heapUsedBytes).filter((h): h is number => h !== null);
    const h0 = heapOf(first);
    const h1 = heapOf(last);
    out.push({
      run,
      spanMs: after[after.length - 1]!.atMs - start,
      rss: [median(first.map((s) => s.rssBytes)), median(last.map((s) => s.rssBytes))],
      heap: h0.length && h1.length ? [median(h0), median(h1)] : null,
      fds: [median(first.map((s) => s.fds)), median(last.map((s) => s.fds))],
      children: [childText(first[0]!.children), childText(last[last.length - 1]!.children)],
    });
  }
  return out;
}

const pctOf = (a: number, b: number) => ((b - a) / a) * 100;

export function printResources(samples: Sample[], drifts: RunDrift[]): void {
  console.log('\nconsole resources per run (medians: first minute after warm-up → last minute):');
  for (const d of drifts) {
    console.log(
      `  run ${d.run} (${s1(d.spanMs / 60)} min after warm-up): RSS ${(d.rss[0] / MiB).toFixed(1)} → ${(d.rss[1] / MiB).toFixed(1)} MiB (${pctOf(...d.rss).toFixed(1)} %), ` +
        `heap ${d.heap ? `${(d.heap[0] / MiB).toFixed(1)} → ${(d.heap[1] / MiB).toFixed(1)} MiB (${pctOf(...d.heap).toFixed(1)} %)` : 'unknown'}, ` +
        `fds ${d.fds[0]} → ${d.fds[1]}, child processes ${d.children[0]} → ${d.children[1]}`,
    );
  }
  if (!drifts.length) console.log('  (no run lasted warm-up + 2 min: drift not measured; use a longer --duration)');
  // The shape behind the two medians: does it level off, or keep climbing?
  for (const run of [...new Set(samples.map((x) => x.run))]) {
    const xs = samples.filter((x) => x.run === run);
    const points: string[] = [];
    for (let t = xs[0]!.atMs; t <= xs[xs.length - 1]!.atMs; t += 120_000) {
      const near = xs.reduce((a, b) => (Math.abs(b.atMs - t) < Math.abs(a.atMs - t) ? b : a));
      points.push(`${(near.rssBytes / MiB).toFixed(0)}/${near.heapUsedBytes === null ? '?' : (near.heapUsedBytes / MiB).toFixed(0)}`);
    }
    console.log(`  run ${run} RSS/heap MiB every 2 min: ${points.join(' ')}`);
  }
  const first = samples[0];
  const last = samples[samples.length - 1];
  if (first && last) {
    console.log(`  console child processes: ${childText(first.children)} at the first sample, ${childText(last.children)} at the last`);
    console.log(`  SQLite: database ${(first.dbBytes / MiB).toFixed(2)} → ${(last.dbBytes / MiB).toFixed(2)} MiB, WAL ${(first.walBytes / MiB).toFixed(2)} → ${(last.walBytes / MiB).toFixed(2)} MiB (first and last sample)`);
  }
}

export interface EndChecks {
  auditVerify: { code: number; out: string };
  integrity: string;
  leftBehind: string[];
  finalDrainMs: number;
  finalCode: number | string;
  finalLines: string[];
}

export function verdicts(outcomes: Outcome[], drifts: RunDrift[], faults: FaultRecord[], end: EndChecks, drainDeadlineMs: number): Verdict[] {
  const v: Verdict[] = [
    verdict('requests failed without Retry-After', outcomes.filter((x) => x.kind === 'failed').length, '≤', 0, '', 0),
    { name: 'answers cut after they began (200 sent)', figure: String(outcomes.filter((x) => x.kind === 'cut').length), target: 'reported: no header can follow a 200', pass: null },
    verdict('requests held past their budget (+5 s)', outcomes.filter(heldPastBudget).length, '≤', 0, '', 0),
    verdict('faults not recovered within 90 s', faults.filter((f) => f.recoveredMs === null).length, '≤', 0, '', 0),
  ];
  for (const d of drifts) {
    v.push(verdict(`run ${d.run} RSS drift`, Math.abs(pctOf(...d.rss)), '≤', 5, ' %', 1));
    if (d.heap) v.push(verdict(`run ${d.run} heap drift`, Math.abs(pctOf(...d.heap)), '≤', 5, ' %', 1));
    v.push(verdict(`run ${d.run} fds grown`, d.fds[1] - d.fds[0], '≤', 0, '', 0));
  }
  const drains = [...faults.flatMap((f) => (f.shutdown ? [f.shutdown.drainMs] : [])), end.finalDrainMs];
  v.push(verdict('longest SIGTERM drain', Math.max(...drains) / 1000, '≤', drainDeadlineMs / 1000, ' s', 2));
  const codes = [...faults.flatMap((f) => (f.shutdown ? [f.shutdown.code] : [])), end.finalCode];
  v.push({ name: 'exit codes after SIGTERM', figure: codes.join(','), target: 'all 0', pass: codes.every((c) => c === 0) });
  const left = [...faults.flatMap((f) => f.shutdown?.leftBehind ?? []), ...end.leftBehind];
  v.push(verdict('processes left behind by a stopped console', left.length, '≤', 0, '', 0));
  v.push({ name: 'audit verify', figure: `exit ${end.auditVerify.code}`, target: 'exit 0', pass: end.auditVerify.code === 0 });
  v.push({ name: 'PRAGMA integrity_check', figure: end.integrity, target: 'ok', pass: end.integrity === 'ok' });
  return v;
}

export { printVerdicts };
