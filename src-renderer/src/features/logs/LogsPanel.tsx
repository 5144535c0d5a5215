// A service's log in a panel: pick the service, the last N lines or since a
// time, filter (text or regex), follow live, download what is shown. Used by
// the Logs view (any service) and the host view (that host's services). A
// follow lives as long as the panel: leaving the view unfollows (a follow
// costs an SSH channel on the host).
import './logs.css';
import { useEffect, useMemo, useState } from 'react';
import { useStore } from 'zustand';
import { useShallow } from 'zustand/react/shallow';
import { useAppStore, useServices } from '../../app/app-context.js';
import { LogList } from './LogList.js';
import { downloadName, downloadText } from './logs-format.js';
import { createLogsStore, MAX_LOG_ENTRIES, type LogsStore } from './logs-store.js';

const LINE_CHOICES = [100, 200, 500, 1000, 5000];
const SINCE_CHOICES: readonly [string, number | null][] = [
  ['any time', null],
  ['last 15 min', 15],
  ['last 1 h', 60],
  ['last 6 h', 360],
  ['last 24 h', 1440],
];

export interface LogsPanelProps {
  /** Only this host's services (the host view); absent: every service of the fleet. */
  label?: string;
  testIdPrefix?: string;
}

function useServiceKeys(label: string | undefined): string[] {
  return useAppStore(useShallow((s) => (s.fleet.snapshot?.hosts ?? []).filter((h) => label === undefined || h.label === label).flatMap((h) => h.services.map((v) => `${h.label}/${v.id}`))));
}

function saveLines(store: LogsStore): void {
  const s = store.getState();
  if (!s.target) return;
  const blob = new Blob([downloadText(s.entries)], { type: 'text/plain;charset=utf-8' });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = downloadName(s.target.label, s.target.serviceId, Date.now());
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function LogsPanel({ label, testIdPrefix = 'logs' }: LogsPanelProps): React.JSX.Element {
  const { transport } = useServices();
  const store = useMemo(() => createLogsStore({ transport }), [transport]);
  useEffect(() => () => store.getState().dispose(), [store]);
  const keys = useServiceKeys(label);
  const s = useStore(store);
  const [filterText, setFilterText] = useState('');
  const [regex, setRegex] = useState(false);
  const key = s.target ? `${s.target.label}/${s.target.serviceId}` : '';
  const tid = (x: string) => `${testIdPrefix}-${x}`;

  // A tail that failed while the host was away is asked again when the host is back.
  const hostState = useAppStore((st) => (s.target ? (st.fleet.snapshot?.hosts.find((h) => h.label === s.target!.label)?.state ?? null) : null));
  useEffect(() => {
    if (hostState !== null) s.hostStateChanged(hostState);
  }, [hostState, s]);

  // The first service is picked once the fleet lists one.
  useEffect(() => {
    if (s.target === null && keys.length > 0) {
      const [l, id] = keys[0]!.split('/') as [string, string];
      s.setTarget({ label: l, serviceId: id });
    }
  }, [keys, s]);

  const apply = (e?: React.FormEvent) => {
    e?.preventDefault();
    s.setFilter({ text: filterText, regex });
    void s.load();
  };
  const lineCount = s.entries.reduce((n, x) => n + (x.type === 'line' ? 1 : 0), 0);
  return (
    <section className="logs-panel" data-testid={`${testIdPrefix}-panel`} aria-label="Service logs">
      <form className="logs-toolbar" onSubmit={apply}>
        <label>
          Service{' '}
          <select value={key} onChange={(e) => {
            const [l, id] = e.target.value.split('/') as [string, string];
            s.setTarget({ label: l, serviceId: id });
          }} data-testid={tid('service')}>
            {key === '' ? <option value="">—</option> : null}
            {keys.map((k) => <option key={k} value={k}>{k}</option>)}
          </select>
        </label>
        <label>
          Last{' '}
          <select value={s.lines} onChange={(e) => { s.setLines(Number(e.target.value)); void s.load(); }} data-testid={tid('lines')}>
            {LINE_CHOICES.map((n) => <option key={n} value={n}>{n} lines</option>)}
          </select>
        </label>
        <label>
          Since{' '}
          <select value={s.sinceMinutes ?? ''} onChange={(e) => { s.setSince(e.target.value === '' ? null : Number(e.target.value)); void s.load(); }} data-testid={tid('since')}>
            {SINCE_CHOICES.map(([words, min]) => <option key={words} value={min ?? ''}>{words}</option>)}
          </select>
        </label>
        <input type="search" value={filterText} onChange={(e) => setFilterText(e.target.value)} placeholder={regex ? 'regular expression' : 'filter text'} aria-label="Filter" aria-invalid={s.filterError !== null} data-testid={tid('filter')} />
        <label title="Treat the filter as a JavaScript regular expression">
          <input type="checkbox" checked={regex} onChange={(e) => setRegex(e.target.checked)} data-testid={tid('regex')} /> regex
        </label>
        <button type="submit" data-testid={tid('apply')}>Apply</button>
        <label className="logs-follow" title="Stream new lines as the service writes them (one SSH channel while this panel is open)">
          <input type="checkbox" checked={s.follow} onChange={(e) => s.setFollow(e.target.checked)} data-testid={tid('follow')} /> Follow live
        </label>
        <button type="button" onClick={() => saveLines(store)} disabled={s.entries.length === 0} data-testid={tid('download')}>
          Download these lines
        </button>
      </form>
      {s.filterError ? (
        <p className="logs-error" role="alert" data-testid={tid('filter-error')}>
          {s.filterError.code}: {s.filterError.message}
        </p>
      ) : null}
      <p className="logs-status muted" data-testid={tid('status')} data-status={s.status} data-received={s.received} data-dropped={s.droppedCounted}>
        {s.source ? `${s.source.description}${s.source.timestamps ? '' : ' (no timestamps)'} · ` : ''}
        {lineCount} line{lineCount === 1 ? '' : 's'} shown
        {s.evicted > 0 ? ` · ${s.evicted} older dropped from view (keeps the last ${MAX_LOG_ENTRIES})` : ''}
        {s.droppedCounted > 0 ? ` · ${s.droppedCounted} lines dropped by the console while this view fell behind` : ''}
        {s.status === 'following' ? ` · following${s.behind > 0 ? `, ${s.behind} queued in the console` : ''}` : s.status === 'loading' ? ' · loading…' : s.status === 'ended' ? ' · follow ended' : ''}
      </p>
      {s.error ? (
        <p className="logs-error" role="alert" data-testid={tid('error')} data-code={s.error.code}>
          {s.error.code}: {s.error.message}
        </p>
      ) : null}
      <LogList entries={s.entries} received={s.entries.length + s.evicted} testIdPrefix={testIdPrefix} />
    </section>
  );
}
