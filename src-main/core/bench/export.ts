// Interchange: a run as JSON with a stable, versioned shape, and as a Markdown
// table shaped like the field-notes §1 table.
import type { BenchRequest, BenchRun, LevelResult } from '../../../src-preload/contract/index.js';

/** Bump on an incompatible change; readers check it. */
export const EXPORT_SCHEMA = 'gpu-console.bench-run/v1';

export function exportJson(run: BenchRun, requests: readonly BenchRequest[]): string {
  return JSON.stringify({ schema: EXPORT_SCHEMA, run, requests }, null, 2);
}

const s = (ms: number | null) => (ms === null ? 'n/a' : (ms / 1000).toFixed(3));
const tok = (v: number | null) => (v === null ? 'n/a' : v.toFixed(2));

export function workloadLabel(l: LevelResult, run: Pick<BenchRun, 'slots' | 'scenario'>): string {
  if (l.phase === 'stability') return `stability loop, c=${l.level}`;
  if (run.scenario?.mode === 'open') return `rate ${l.level} req/s`;
  const slots = run.slots;
  return slots !== null && l.level > slots ? `concurrency ${l.level}, ${slots} slots` : `concurrency ${l.level}`;
}

export function markdownTable(run: BenchRun): string {
  const lines = [
    `### ${run.name}${run.state !== 'completed' && run.state !== 'imported' ? ` (${run.state}, partial)` : ''}`,
    '',
    `Model ${run.model ?? 'unknown'}${run.upstream ? ` on ${run.upstream}` : ''}; started ${new Date(run.startedAt).toISOString()}` +
      (run.scenario ? `; max_tokens ${run.scenario.maxTokens}, thinking ${run.scenario.thinking ? 'on' : 'off'}, ${run.scenario.stream ? 'streaming' : 'not streaming'}` : ''),
    '',
    '| workload | requests | TTFT p50/p95 | latency p50/p95 | output tok/s |',
    '|---|---:|---:|---:|---:|',
  ];
  for (const l of run.levels) {
    const errs = l.failed > 0 ? ` (${l.failed} failed)` : '';
    lines.push(
      `| ${workloadLabel(l, run)}${l.partial ? ' (partial)' : ''} | ${l.requests}${errs} | ${s(l.ttftP50Ms)} / ${s(l.ttftP95Ms)} s | ${s(l.latencyP50Ms)} / ${s(l.latencyP95Ms)} s | ${tok(l.outputTokPerS)} |`,
    );
  }
  const p = run.peaks;
  if (p.samples > 0) {
    const parts = [
      p.vramMiB !== null ? `Peak ${Math.round(p.vramMiB).toLocaleString('en-US')} MiB VRAM` : null,
      p.gttMiB !== null && p.gttMiB !== undefined ? `${Math.round(p.gttMiB).toLocaleString('en-US')} MiB GTT` : null,
      p.gpuUtilPct !== null ? `${Math.round(p.gpuUtilPct)}% utilisation` : null,
      p.powerW !== null ? `${Math.round(p.powerW)} W` : null,
      p.kvCachePct !== null ? `KV cache ${Math.round(p.kvCachePct)}%` : null,
    ].filter((x): x is string => x !== null);
    if (parts.length) lines.push('', parts.join(', ') + '.');
  }
  return lines.join('\n') + '\n';
}
