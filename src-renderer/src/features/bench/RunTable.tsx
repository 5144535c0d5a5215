// A run's per-level table, shaped like the field-notes benchmark table.
import type { BenchRun } from '../../../../src-preload/contract/index.js';
import { num, sec, workload } from './bench-format.js';

export function RunTable({ run }: { run: BenchRun }): React.JSX.Element {
  return (
    <table className="data-table" data-testid="bench-result-table">
      <thead>
        <tr>
          <th>workload</th>
          <th>requests</th>
          <th>TTFT p50/p95</th>
          <th>latency p50/p95</th>
          <th>ITL p50/p95</th>
          <th>output tok/s</th>
          <th>req/s</th>
          <th>errors</th>
          <th>JSON / schema</th>
        </tr>
      </thead>
      <tbody>
        {run.levels.length === 0 ? (
          <tr className="empty-row">
            <td colSpan={9} className="muted">
              No levels finished yet: a row appears as each concurrency level completes.
            </td>
          </tr>
        ) : null}
        {run.levels.map((l) => (
          <tr key={`${l.phase}:${l.level}`} data-testid="bench-level-row">
            <td>
              {workload(l, run)}
              {l.partial ? ' (partial)' : ''}
            </td>
            <td>{l.requests}</td>
            <td>
              {sec(l.ttftP50Ms)} / {sec(l.ttftP95Ms)} s
            </td>
            <td>
              {sec(l.latencyP50Ms)} / {sec(l.latencyP95Ms)} s
            </td>
            <td>
              {num(l.itlP50Ms, 1)} / {num(l.itlP95Ms, 1)} ms
            </td>
            <td>{num(l.outputTokPerS)}</td>
            <td>{num(l.requestsPerS)}</td>
            <td title={Object.entries(l.errorsByCode).map(([c, n]) => `${c}: ${n}`).join('\n')}>
              {l.failed}
              {l.truncated ? ` · ${l.truncated} cut` : ''}
            </td>
            <td>{l.checked ? `${l.jsonParsed}/${l.checked} · ${l.schemaValid}/${l.checked}` : '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
