// The Alerts page: the fleet's open alerts (critical first) with their
// acknowledgements and silences, the silences in force (each can be ended),
// and the handover an operator reads at the start of a shift — what fired,
// when, for how long, who acknowledged it, what silenced it, and the changes
// made in between — over a chosen window, exportable as JSON or Markdown.
import './alerts.css';
import { useCallback, useEffect, useState } from 'react';
import type { AlertHistory, Silence } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { formatTime, formatTimestamp } from '../../format/format.js';
import { toContractError } from '../../transport/transport.js';
import { AlertList } from '../host/AlertList.js';
import { alertKindLabel, silenceScopeText } from '../host/alert-list-state.js';
import { useAlerts, useSilences } from '../host/use-alerts.js';
import { BaselinesTable } from './BaselinesTable.js';
import { SINCE_CHOICES, historyMarkdown, openFor, sinceMs, type SinceChoice } from './handover.js';

export function AlertsView(): React.JSX.Element {
  const { transport } = useServices();
  const alerts = useAlerts(transport);
  const silences = useSilences(transport);
  return (
    <section className="alerts-page" aria-labelledby="alerts-title" data-testid="alerts-page">
      <h2 id="alerts-title">Alerts</h2>
      <section aria-labelledby="alerts-open-title">
        <h3 id="alerts-open-title">Open now ({alerts.length})</h3>
        {alerts.length === 0 ? <p className="muted">No open alerts.</p> : <AlertList alerts={alerts} silences={silences} showHost />}
      </section>
      <SilencesInForce silences={silences} />
      <Handover silenceCount={silences.length} />
      <BaselinesTable />
    </section>
  );
}

function SilencesInForce({ silences }: { silences: readonly Silence[] }): React.JSX.Element {
  const { transport } = useServices();
  const [error, setError] = useState<string | null>(null);
  const end = (id: string): void => {
    setError(null);
    transport.invoke('alerts.unsilence', { id }).catch((err: unknown) => {
      const e = toContractError(err);
      setError(`${e.code}: ${e.message}`);
    });
  };
  return (
    <section aria-labelledby="alerts-silences-title" data-testid="alerts-silences">
      <h3 id="alerts-silences-title">Silences in force ({silences.length})</h3>
      {silences.length === 0 ? (
        <p className="muted">None. Silence an alert from its row to keep it from paging during maintenance.</p>
      ) : (
        <table className="data-table alerts-table">
          <thead>
            <tr>
              <th scope="col">Scope</th>
              <th scope="col">Until</th>
              <th scope="col">Set by</th>
              <th scope="col">Reason</th>
              <th scope="col">
                <span className="visually-hidden">End</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {silences.map((s) => (
              <tr key={s.id} data-testid="alerts-silence-row" data-silence-id={s.id}>
                <td>{silenceScopeText(s)}</td>
                <td>{formatTime(s.until)}</td>
                <td>{s.by}</td>
                <td>{s.reason}</td>
                <td>
                  <button type="button" className="button button--small" onClick={() => end(s.id)} aria-label={`End the silence of ${silenceScopeText(s)}`} data-testid="alerts-silence-end">
                    End
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {error ? (
        <p className="inline-error" role="alert">
          {error}
        </p>
      ) : null}
    </section>
  );
}

function download(name: string, text: string, mime: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: mime }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** The handover: reloaded when the window changes, when asked, and when the silences change. */
function Handover({ silenceCount }: { silenceCount: number }): React.JSX.Element {
  const { transport } = useServices();
  const [since, setSince] = useState<SinceChoice>('12h');
  const [history, setHistory] = useState<AlertHistory | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(() => {
    setError(null);
    transport.invoke('alerts.history', { fromMs: Date.now() - sinceMs(since), limit: 500 }).then(setHistory, (err: unknown) => {
      const e = toContractError(err);
      setError(`${e.code}: ${e.message}`);
    });
  }, [transport, since]);
  useEffect(load, [load, silenceCount]);
  const stamp = history ? new Date(history.toMs).toISOString().slice(0, 16).replace(/[:T]/g, '-') : '';
  return (
    <section aria-labelledby="alerts-handover-title" data-testid="alerts-handover">
      <h3 id="alerts-handover-title">Handover</h3>
      <div className="alerts-handover__bar">
        <fieldset className="alerts-since">
          <legend>Since</legend>
          {SINCE_CHOICES.map((c) => (
            <label key={c.value}>
              <input type="radio" name="alerts-since" checked={since === c.value} onChange={() => setSince(c.value)} data-testid={`alerts-since-${c.value}`} /> {c.label}
            </label>
          ))}
        </fieldset>
        <button type="button" className="button button--small" onClick={load} data-testid="alerts-refresh">
          Refresh
        </button>
        <button type="button" className="button button--small" disabled={!history} onClick={() => history && download(`alert-handover-${stamp}.md`, historyMarkdown(history), 'text/markdown;charset=utf-8')} data-testid="alerts-export-md">
          Export Markdown
        </button>
        <button type="button" className="button button--small" disabled={!history} onClick={() => history && download(`alert-handover-${stamp}.json`, JSON.stringify(history, null, 2), 'application/json')} data-testid="alerts-export-json">
          Export JSON
        </button>
      </div>
      {error ? (
        <p className="inline-error" role="alert">
          {error}
        </p>
      ) : null}
      {history ? <HistoryTables history={history} /> : <p className="muted">loading…</p>}
    </section>
  );
}

function HistoryTables({ history: h }: { history: AlertHistory }): React.JSX.Element {
  return (
    <>
      <p className="muted">
        From {formatTimestamp(h.fromMs)} to {formatTimestamp(h.toMs)}
        {h.truncated ? ' — cut at 500 rows; choose a shorter window' : ''}.
      </p>
      <h4>What fired ({h.alerts.length})</h4>
      {h.alerts.length === 0 ? (
        <p className="muted">No alerts in this window.</p>
      ) : (
        <table className="data-table alerts-table" data-testid="alerts-history">
          <thead>
            <tr>
              <th scope="col">Raised</th>
              <th scope="col">For</th>
              <th scope="col">Alert</th>
              <th scope="col">Where</th>
              <th scope="col">Message</th>
              <th scope="col">Acknowledged by</th>
              <th scope="col">Silenced by</th>
            </tr>
          </thead>
          <tbody>
            {h.alerts.map((a) => (
              <tr key={`${a.id}@${a.raisedAt}`} className={`alerts-history__row--${a.severity}`} data-testid="alerts-history-row" data-alert-id={a.id}>
                <td>{formatTime(a.raisedAt)}</td>
                <td>{openFor(a.durationMs)}</td>
                <td>
                  {a.severity} · {alertKindLabel(a.kind)}
                  {a.incident ? <span className="muted"> (part of {a.incident})</span> : null}
                </td>
                <td>{a.serviceId ? `${a.host}/${a.serviceId}` : a.host}</td>
                <td>{a.message}</td>
                <td>{a.ackBy ?? '—'}</td>
                <td>{a.silencedBy ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h4>Changes in between ({h.changes.length})</h4>
      {h.changes.length === 0 ? (
        <p className="muted">No lifecycle actions, caps changes or silences in this window.</p>
      ) : (
        <ul className="alerts-changes" data-testid="alerts-changes">
          {h.changes.map((c) => (
            <li key={c.seq}>
              <time dateTime={new Date(c.at).toISOString()}>{formatTime(c.at)}</time> <strong>{c.actor}</strong>
              {c.target ? ` · ${c.target}` : ''}: {c.summary}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
