// Stored delivery attempts, newest first: what was sent where and what came
// back (no URL, header or secret is ever stored, so none can be shown).
import type { NotifyDeliveryRow } from '../../../../src-preload/contract/index.js';
import { Badge, type BadgeTone } from '../../components/Badge.js';
import { formatTime } from '../../format/format.js';
import { eventLabel } from './channel-form.js';

const TONE: Record<NotifyDeliveryRow['status'], BadgeTone> = {
  delivered: 'ok',
  failed: 'error',
  retrying: 'warn',
  'skipped-quiet': 'neutral',
  'rate-limited': 'warn',
  'dropped-overflow': 'error',
};

export function DeliveriesTable({ rows }: { rows: NotifyDeliveryRow[] | null }): React.JSX.Element {
  if (rows === null) return <p className="muted panel__empty">Loading deliveries…</p>;
  if (rows.length === 0) {
    return (
      <p className="muted panel__empty" data-testid="notify-deliveries-empty">
        No deliveries yet. Press <strong>Send test</strong> on a channel to check it, or wait for an event a channel routes.
      </p>
    );
  }
  return (
    <div className="table-scroll">
      <table className="data-table notify-table" data-testid="notify-deliveries">
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Channel</th>
            <th scope="col">Event</th>
            <th scope="col">Notice</th>
            <th scope="col">Outcome</th>
            <th scope="col" className="col-num">HTTP</th>
            <th scope="col" className="col-num">Attempt</th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id} data-testid="notify-delivery" data-channel={r.channelId} data-status={r.status}>
              <td className="notify-nowrap">{formatTime(r.at)}</td>
              <td>
                <code>{r.channelId}</code>
              </td>
              <td>{eventLabel(r.event)}</td>
              <td>
                <span className={`notify-sev notify-sev--${r.severity}`}>{r.severity}</span> {r.title}
              </td>
              <td>
                <Badge tone={TONE[r.status]} testId="notify-delivery-status">
                  {r.status}
                </Badge>
              </td>
              <td className="col-num" data-testid="notify-delivery-http">
                {r.httpStatus ?? '—'}
              </td>
              <td className="col-num">{r.attempt}</td>
              <td>{r.errorCode || r.errorMessage ? <span className="text-warn">{[r.errorCode, r.errorMessage].filter(Boolean).join(' · ')}</span> : <span className="muted">—</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
