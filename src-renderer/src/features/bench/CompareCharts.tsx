// Latency vs concurrency and tok/s vs concurrency for one or two runs.
import { useMemo } from 'react';
import type { BenchRun } from '../../../../src-preload/contract/index.js';
import { Chart } from '../../components/Chart.js';

function series(run: BenchRun, pick: (l: BenchRun['levels'][number]) => number | null) {
  return run.levels.filter((l) => l.phase === 'level').map((l) => [l.level, pick(l)] as [number, number | null]);
}

export function CompareCharts({ runs }: { runs: BenchRun[] }): React.JSX.Element {
  const latency = useMemo(
    () => ({
      grid: { left: 48, right: 16, top: 16, bottom: 32 },
      xAxis: { type: 'value', name: 'c', minInterval: 1 },
      yAxis: { type: 'value' },
      series: runs.flatMap((r) => [
        { type: 'line', name: `${r.name} p50`, data: series(r, (l) => (l.latencyP50Ms === null ? null : l.latencyP50Ms / 1000)) },
        { type: 'line', name: `${r.name} p95`, lineStyle: { type: 'dashed' }, data: series(r, (l) => (l.latencyP95Ms === null ? null : l.latencyP95Ms / 1000)) },
      ]),
    }),
    [runs],
  );
  const tok = useMemo(
    () => ({
      grid: { left: 48, right: 16, top: 16, bottom: 32 },
      xAxis: { type: 'value', name: 'c', minInterval: 1 },
      yAxis: { type: 'value' },
      series: runs.map((r) => ({ type: 'line', name: r.name, data: series(r, (l) => l.outputTokPerS) })),
    }),
    [runs],
  );
  return (
    <div className="bench-charts" style={{ display: 'grid', gridTemplateColumns: '1fr 1fr', gap: 12 }}>
      <figure>
        <figcaption>Latency p50 (solid) / p95 (dashed) vs concurrency, s</figcaption>
        <Chart option={latency} ariaLabel="Latency versus concurrency" className="bench-chart" />
      </figure>
      <figure>
        <figcaption>Output tok/s vs concurrency</figcaption>
        <Chart option={tok} ariaLabel="Tokens per second versus concurrency" className="bench-chart" />
      </figure>
    </div>
  );
}
