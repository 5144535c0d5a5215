// The stored runs: pick one to show and one to compare with, mark a baseline,
// export; a row that no longer reads as a run is listed as damaged, with what
// failed, and can only be deleted.
import type { BenchRun, DamagedRun } from '../../../../src-preload/contract/index.js';
import { formatTime } from '../../format/format.js';

export interface RunListProps {
  runs: readonly BenchRun[];
  damaged: readonly DamagedRun[];
  selected: string | null;
  other: string | null;
  onSelect(id: string): void;
  onCompareWith(id: string): void;
  onBaseline(run: BenchRun): void;
  onDownload(id: string, format: 'json' | 'markdown'): void;
  onDelete(id: string): void;
}

export function RunList(p: RunListProps): React.JSX.Element {
  return (
    <table className="data-table" data-testid="bench-runs">
      <thead>
        <tr>
          <th>show</th>
          <th>compare with</th>
          <th>name</th>
          <th>model</th>
          <th>state</th>
          <th>started</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {p.runs.length === 0 && p.damaged.length === 0 ? (
          <tr className="empty-row">
            <td colSpan={7} className="muted">
              No runs yet: start one with the form above.
            </td>
          </tr>
        ) : null}
        {p.damaged.map((d) => (
          <tr key={`damaged:${d.id}`} data-testid="bench-damaged-row">
            <td colSpan={5} className="text-warn">
              damaged run {d.id}: {d.problem}
              {d.name ? <span className="muted"> (was “{d.name}”)</span> : null}
            </td>
            <td>{d.startedAt === null ? '—' : formatTime(d.startedAt)}</td>
            <td>
              <button type="button" className="button button--ghost" onClick={() => p.onDelete(d.id)} aria-label={`delete damaged run ${d.id}`} data-testid="bench-damaged-delete">
                Delete
              </button>
            </td>
          </tr>
        ))}
        {p.runs.map((r) => (
          <tr key={r.id}>
            <td>
              <input type="radio" name="bench-run" checked={p.selected === r.id} onChange={() => p.onSelect(r.id)} aria-label={`show ${r.name}`} />
            </td>
            <td>
              <input type="radio" name="bench-other" checked={p.other === r.id} onChange={() => p.onCompareWith(r.id)} aria-label={`compare with ${r.name}`} data-testid="bench-compare-with" />
            </td>
            <td>
              {r.name}
              {r.baseline ? ' ★ baseline' : ''}
            </td>
            <td>{r.model ?? '—'}</td>
            <td>{r.state}</td>
            <td>{formatTime(r.startedAt)}</td>
            <td>
              <button type="button" className="button button--ghost" onClick={() => p.onBaseline(r)}>
                Baseline
              </button>
              <button type="button" className="button button--ghost" onClick={() => p.onDownload(r.id, 'json')}>
                JSON
              </button>
              <button type="button" className="button button--ghost" onClick={() => p.onDownload(r.id, 'markdown')}>
                Markdown
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
