// Clients: per token (and anonymous loopback) over a chosen window, what it
// asked, its estimated cost, what was refused and why, its budget this month
// and the limits in force. Sortable; the window and sort persist.
import { useCallback, useEffect, useMemo, useState } from 'react';
import type { ClientUsage, ClientUsageWindow } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { Badge } from '../../components/Badge.js';
import { MeterBar } from '../../components/MeterBar.js';
import { formatTime } from '../../format/format.js';
import { toContractError } from '../../transport/transport.js';
import './clients.css';
import { WINDOW_LABELS, clientRowView, parseClientsPrefs, sortClients, type ClientRowView, type ClientSortKey, type ClientsPrefs } from './client-usage-view.js';

const PREFS_KEY = 'gpu-console.proxy-clients';
/**
 * How often a window is re-read while shown. The long windows read every row of their days (seconds of the
 * console's main thread at a full request log, which the proxy shares), so they are read when chosen or asked.
 */
const REFRESH_MS: Record<ClientUsageWindow, number | null> = { '1h': 10_000, '24h': 30_000, '7d': null, '30d': null, month: null };

const COLUMNS: readonly { key: ClientSortKey; label: string; numeric: boolean }[] = [
  { key: 'client', label: 'Client', numeric: false },
  { key: 'requests', label: 'Requests', numeric: true },
  { key: 'tokens', label: 'Tokens in / out', numeric: true },
  { key: 'cost', label: 'Est. cost', numeric: true },
  { key: 'refused', label: 'Refused · failed', numeric: true },
  { key: 'budget', label: 'Budget this month', numeric: true },
];

function loadPrefs(): ClientsPrefs {
  try {
    return parseClientsPrefs(localStorage.getItem(PREFS_KEY));
  } catch {
    return parseClientsPrefs(null); // storage refused: the defaults
  }
}

function usePrefs(): [ClientsPrefs, (change: Partial<ClientsPrefs>) => void] {
  const [prefs, setPrefs] = useState(loadPrefs);
  const update = useCallback((change: Partial<ClientsPrefs>) => {
    setPrefs((prev) => {
      const next = { ...prev, ...change };
      try {
        localStorage.setItem(PREFS_KEY, JSON.stringify(next));
      } catch {
        // not kept across restarts; the panel still follows the choice
      }
      return next;
    });
  }, []);
  return [prefs, update];
}

export function ClientsPanel(): React.JSX.Element {
  const { transport } = useServices();
  const [prefs, setPrefs] = usePrefs();
  const [usage, setUsage] = useState<ClientUsage | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [asked, setAsked] = useState(0);

  useEffect(() => {
    let live = true;
    const run = () =>
      transport.invoke('proxy.clientUsage', { window: prefs.window }).then(
        (out) => {
          if (!live) return;
          setUsage(out);
          setError(null);
        },
        (err: unknown) => live && setError(toContractError(err).message),
      );
    void run();
    const every = REFRESH_MS[prefs.window];
    const timer = every === null ? null : setInterval(() => void run(), every);
    return () => {
      live = false;
      if (timer !== null) clearInterval(timer);
    };
  }, [transport, prefs.window, asked]);

  const rows = useMemo(() => (usage ? sortClients(usage.clients.map(clientRowView), prefs.sort, prefs.descending) : []), [usage, prefs.sort, prefs.descending]);
  const sortBy = (key: ClientSortKey) => setPrefs(key === prefs.sort ? { descending: !prefs.descending } : { sort: key, descending: key !== 'client' });

  return (
    <section className="panel clients-panel" aria-labelledby="clients-title" data-testid="clients-panel">
      <div className="clients-panel__head">
        <h3 className="panel__title" id="clients-title">
          Clients
        </h3>
        <label className="clients-panel__window">
          <span>Window</span>
          <select value={prefs.window} onChange={(e) => setPrefs({ window: e.target.value as ClientUsageWindow })} data-testid="clients-window">
            {Object.entries(WINDOW_LABELS).map(([w, text]) => (
              <option key={w} value={w}>
                {text}
              </option>
            ))}
          </select>
        </label>
        <button type="button" className="button button--ghost" onClick={() => setAsked((n) => n + 1)} data-testid="clients-refresh">
          Refresh
        </button>
      </div>
      {error ? (
        <p className="inline-error" role="alert">
          {error}
        </p>
      ) : null}
      {usage === null ? (
        <p className="muted panel__empty">Loading client usage…</p>
      ) : rows.length === 0 ? (
        <p className="muted panel__empty">No clients yet: create a token below (or turn on anonymous loopback in the config).</p>
      ) : (
        <div className="table-scroll">
          <table className="data-table clients-table" data-testid="clients-table">
            <caption className="visually-hidden">Client usage over the {WINDOW_LABELS[prefs.window]}</caption>
            <thead>
              <tr>
                {COLUMNS.map((c) => (
                  <th key={c.key} scope="col" className={c.numeric ? 'num' : undefined} aria-sort={prefs.sort === c.key ? (prefs.descending ? 'descending' : 'ascending') : 'none'}>
                    <button type="button" className="sort-button" onClick={() => sortBy(c.key)} data-testid={`clients-sort-${c.key}`}>
                      {c.label}
                      <span aria-hidden="true">{prefs.sort === c.key ? (prefs.descending ? ' ↓' : ' ↑') : ''}</span>
                    </button>
                  </th>
                ))}
                <th scope="col">Limits in force</th>
                <th scope="col" aria-sort={prefs.sort === 'lastSeen' ? (prefs.descending ? 'descending' : 'ascending') : 'none'}>
                  <button type="button" className="sort-button" onClick={() => sortBy('lastSeen')} data-testid="clients-sort-lastSeen">
                    Last seen<span aria-hidden="true">{prefs.sort === 'lastSeen' ? (prefs.descending ? ' ↓' : ' ↑') : ''}</span>
                  </button>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <ClientRow key={r.client} row={r} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {usage ? <UsageFootnote usage={usage} /> : null}
    </section>
  );
}

function ClientRow({ row }: { row: ClientRowView }): React.JSX.Element {
  return (
    <tr data-testid={`client-row-${row.client}`} data-requests={row.requests} className={row.revoked ? 'is-stale' : undefined}>
      <td>
        <span className="clients-table__name">{row.client}</span>{' '}
        {row.anonymous ? <Badge tone="info">anonymous loopback</Badge> : null}
        {row.internal ? <Badge tone="neutral">console</Badge> : null}
        {row.revoked ? <Badge tone="neutral">revoked</Badge> : null}
      </td>
      <td className="num" data-testid="client-requests">
        {row.requests.toLocaleString('en-US')}
      </td>
      <td className="num" data-testid="client-tokens">
        {row.tokensText}
      </td>
      <td className="num" title={row.costTitle} data-testid="client-cost">
        {row.costText}
      </td>
      <td className="num" data-testid="client-refused">
        {row.refused + row.failed === 0 ? (
          '0'
        ) : (
          <>
            <span>
              {row.refused.toLocaleString('en-US')} · {row.failed.toLocaleString('en-US')}
            </span>
            <ul className="clients-table__reasons">
              {row.reasons.map((r) => (
                <li key={r.code} data-code={r.code} className={r.refusal ? undefined : 'is-failure'}>
                  {r.requests.toLocaleString('en-US')} {r.text}
                </li>
              ))}
            </ul>
          </>
        )}
      </td>
      <td data-testid="client-budget">{row.budget ? <MeterBar pct={row.budget.pct} text={row.budget.text} label={`Budget of ${row.client} this month`} warnAt={50} alarmAt={80} /> : <span className="muted">no budget</span>}</td>
      <td className="clients-table__limits" data-testid="client-limits">
        {row.limits.length === 0 ? <span className="muted">{row.anonymous ? 'class ceiling only' : row.internal ? 'not a token' : 'none'}</span> : row.limits.join(' · ')}
        {row.configOwned ? <span className="muted"> (some set by config)</span> : null}
      </td>
      <td className="muted">{row.lastSeenAt === null ? '—' : formatTime(row.lastSeenAt)}</td>
    </tr>
  );
}

function UsageFootnote({ usage }: { usage: ClientUsage }): React.JSX.Element {
  const cut = usage.oldestRowTs !== null && usage.oldestRowTs > usage.fromMs;
  return (
    <p className="muted clients-panel__note" data-testid="clients-note">
      Cost is an estimate: GPU time shared among concurrent requests × the host&apos;s price (the split cost.summary uses); unknown where a host has no price.
      {usage.costAt < usage.at - 1_000 ? ` Cost as of ${formatTime(usage.costAt)} (long windows are recomputed every few minutes).` : ''}
      {REFRESH_MS[usage.window] === null ? ` Figures as of ${formatTime(usage.at)}: this window is read when chosen or refreshed.` : ''}
      {cut ? ` The request log holds rows from ${formatTime(usage.oldestRowTs, { date: 'always' })} on.` : ''}
    </p>
  );
}
