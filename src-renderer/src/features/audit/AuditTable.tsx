import type { AuditEventView } from '../../../../src-preload/contract/index.js';
import { formatTimestamp, shortHash } from '../../format/format.js';

export interface AuditTableProps {
  readonly events: readonly AuditEventView[];
  readonly brokenAt: number | null;
}

export function AuditTable({ events, brokenAt }: AuditTableProps): React.JSX.Element {
  if (events.length === 0) return <p className="empty-state">No audit events yet.</p>;
  return (
    <div className="panel">
      <table className="data-table audit-table" data-testid="audit-table">
        <thead>
          <tr>
            <th scope="col" className="col-num">Seq</th>
            <th scope="col">Time</th>
            <th scope="col">Type</th>
            <th scope="col">Actor</th>
            <th scope="col">Target</th>
            <th scope="col">Hash</th>
          </tr>
        </thead>
        <tbody>
          {events.map((event) => (
            <tr
              key={event.seq}
              data-testid={`audit-row-${event.seq}`}
              className={event.seq === brokenAt ? 'is-broken' : undefined}
              aria-invalid={event.seq === brokenAt ? true : undefined}
            >
              <td className="col-num num">{event.seq}</td>
              <td className="num">{formatTimestamp(event.ts)}</td>
              <td>
                <code>{event.type}</code>
              </td>
              <td>{event.actor}</td>
              <td>{event.target ?? '—'}</td>
              <td>
                <code className="muted" title={event.hash}>
                  {shortHash(event.hash)}
                </code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
