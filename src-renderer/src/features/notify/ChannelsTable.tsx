// The channels in force: config.yaml's (read-only here, labelled so) and
// those added in the console (Edit, Remove). Every one has Send test, whose
// outcome shows in its row. URLs are shown as main masked them.
import type { NotifyChannelView } from '../../../../src-preload/contract/index.js';
import { Badge } from '../../components/Badge.js';
import { eventLabel } from './channel-form.js';

export interface TestOutcome {
  pending: boolean;
  text: string;
  ok: boolean;
}

interface Props {
  channels: NotifyChannelView[];
  tests: Readonly<Record<string, TestOutcome>>;
  onTest(id: string): void;
  onEdit(c: NotifyChannelView): void;
  onRemove(c: NotifyChannelView): void;
}

export function ChannelsTable({ channels, tests, onTest, onEdit, onRemove }: Props): React.JSX.Element {
  return (
    <div className="table-scroll">
      <table className="data-table notify-table" data-testid="notify-channels">
        <thead>
          <tr>
            <th scope="col">Channel</th>
            <th scope="col">Kind</th>
            <th scope="col">URL</th>
            <th scope="col">Events</th>
            <th scope="col">Min severity · rate</th>
            <th scope="col">Quiet hours</th>
            <th scope="col">Secret</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {channels.map((c) => {
            const t = tests[c.id];
            return (
              <tr key={c.id} data-testid={`notify-channel-${c.id}`} data-source={c.source}>
                <td>
                  <code>{c.id}</code>
                  <div className="notify-badges">
                    {c.source === 'config' ? (
                      <Badge tone="neutral" title="Defined in config.yaml under notifications.channels; change it there">
                        from config.yaml
                      </Badge>
                    ) : (
                      <Badge tone="accent" title="Added in this console; kept in its settings">
                        added here
                      </Badge>
                    )}
                    {c.enabled ? null : <Badge tone="warn">disabled</Badge>}
                  </div>
                </td>
                <td>{c.kind}</td>
                <td>
                  <code className="notify-url" data-testid="notify-channel-url">
                    {breakable(c.maskedUrl)}
                  </code>
                </td>
                <td className="notify-events-cell">{c.events.map(eventLabel).join(', ')}</td>
                <td>
                  {c.minSeverity}
                  <div className="muted notify-nowrap" data-testid="notify-channel-rate">
                    ≤ {c.maxPerMinute}/min
                  </div>
                </td>
                <td>
                  {c.quietHours ? (
                    <>
                      <span className="notify-nowrap">
                        {c.quietHours.from}–{c.quietHours.to}
                      </span>{' '}
                      <span className="muted notify-nowrap">{c.quietHours.tz}</span>
                    </>
                  ) : (
                    <span className="muted">none</span>
                  )}
                </td>
                <td>{c.secretRef ? c.hasSecret ? <Badge tone="ok">stored</Badge> : <Badge tone="error" title={c.source === 'ui' ? `Not given for this channel's kind and host: edit it and give the secret (kept under ${c.secretRef})` : `Nothing this channel may send is stored under ${c.secretRef}`}>missing</Badge> : <span className="muted">none</span>}</td>
                <td className="notify-actions-cell">
                  <div className="notify-row-actions">
                    <button type="button" className="button button--small" onClick={() => onTest(c.id)} disabled={t?.pending} aria-label={`Send test to ${c.id}`} data-testid={`notify-test-${c.id}`}>
                      Send test
                    </button>
                    {c.source === 'ui' ? (
                      <>
                        <button type="button" className="button button--small" onClick={() => onEdit(c)} aria-label={`Edit ${c.id}`} data-testid={`notify-edit-${c.id}`}>
                          Edit
                        </button>
                        <button type="button" className="button button--small button--danger" onClick={() => onRemove(c)} aria-label={`Remove ${c.id}`} data-testid={`notify-remove-${c.id}`}>
                          Remove
                        </button>
                      </>
                    ) : null}
                  </div>
                  {t ? (
                    <div className={`notify-test-outcome ${t.pending ? 'muted' : t.ok ? 'notify-test-outcome--ok' : 'notify-test-outcome--bad'}`} role="status" data-testid={`notify-test-outcome-${c.id}`}>
                      {t.text}
                    </div>
                  ) : null}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** A URL that wraps after its separators (`/`, `?`, `&`) rather than inside a word. */
function breakable(url: string): React.ReactNode[] {
  return url.split(/(?<=[/?&])(?!\/)/).map((part, i) => (
    <span key={i}>
      {part}
      <wbr />
    </span>
  ));
}
