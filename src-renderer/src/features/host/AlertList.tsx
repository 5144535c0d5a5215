// The alerts of a host (or the fleet, with their hosts): kind, what it is
// about, the message; the figure against its threshold over its window with
// a small chart of its recent series; the incident it belongs to; who
// acknowledged it and the silence that keeps it from paging (with its end and
// reason). Acknowledge and Silence… act through the contract when the list is
// inside the app (a static render shows no buttons). The command to run is
// text to copy (the console runs nothing); a log failure's or an Xid's lines
// are collapsed in a native <details> (focusable, opens with Enter or Space).
import '../alerts/alerts.css';
import { useContext, useState } from 'react';
import { alertFigureText, type Alert, type Silence } from '../../../../src-preload/contract/alerts.js';
import { AppContext } from '../../app/app-context.js';
import { CopyButton } from '../../components/CopyButton.js';
import { formatTime } from '../../format/format.js';
import { toContractError, type Transport } from '../../transport/transport.js';
import { SilenceDialog } from '../alerts/SilenceDialog.js';
import { alertKindLabel, alertSubject, contextKinds, incidentText, showCount, silenceOf } from './alert-list-state.js';
import { Sparkline } from './Sparkline.js';
import { useSilences } from './use-alerts.js';

export interface AlertListProps {
  readonly alerts: readonly Alert[];
  /** The silences in force; absent: the list reads them itself. */
  readonly silences?: readonly Silence[];
  /** Show each alert's host (the fleet's list). */
  readonly showHost?: boolean;
}

export function AlertList({ alerts, silences, showHost = false }: AlertListProps): React.JSX.Element | null {
  const transport = useContext(AppContext)?.transport ?? null;
  const own = useSilences(silences === undefined ? transport : null);
  const [silencing, setSilencing] = useState<Alert | null>(null);
  if (alerts.length === 0) return null;
  return (
    <>
      <ul className="host-alerts" aria-label="Alerts" data-testid="host-alerts">
        {alerts.map((a) => (
          <AlertItem key={a.id} alert={a} silence={silenceOf(a, silences ?? own)} showHost={showHost} transport={transport} onSilence={() => setSilencing(a)} />
        ))}
      </ul>
      {silencing ? <SilenceDialog alert={silencing} onClose={() => setSilencing(null)} /> : null}
    </>
  );
}

interface ItemProps {
  readonly alert: Alert;
  readonly silence: Silence | null;
  readonly showHost: boolean;
  readonly transport: Transport | null;
  readonly onSilence: () => void;
}

function AlertItem({ alert: a, silence, showHost, transport, onSilence }: ItemProps): React.JSX.Element {
  const subject = [showHost ? a.host : null, alertSubject(a)].filter((p) => p !== null).join(' · ');
  const figure = alertFigureText(a);
  const incident = incidentText(a.incident);
  return (
    <li className={`host-alerts__item host-alerts__item--${a.severity}${a.silencedBy ? ' host-alerts__item--silenced' : ''}`} data-kind={a.kind} data-alert-id={a.id} data-testid="host-alert">
      <div className="host-alerts__line">
        <span className="host-alerts__sev">{a.severity}</span> <span className="host-alerts__kind">{alertKindLabel(a.kind)}</span>
        {subject ? <span className="host-alerts__subject"> {subject}</span> : null}: {a.message}
        {showCount(a) ? (
          <span className="host-alerts__count" title="occurrences folded into this alert">
            {' '}
            ×{a.count}
          </span>
        ) : null}
      </div>
      {figure || a.series ? (
        <div className="host-alerts__figure" data-testid="host-alert-figure">
          {figure ? <span>{figure}</span> : null} <Sparkline series={a.series} />
        </div>
      ) : null}
      {incident ? (
        <div className="host-alerts__incident" data-testid="host-alert-incident">
          {incident} (pages through it)
        </div>
      ) : null}
      <AlertMarks alert={a} silence={silence} />
      {a.command ? (
        <div className="host-alerts__command">
          <code data-testid="host-alert-command">{a.command}</code> <CopyButton text={a.command} label="Copy the command" />
        </div>
      ) : null}
      {a.context && a.context.length > 0 ? <ContextLines alert={a} /> : null}
      {transport ? <AlertActions alert={a} transport={transport} onSilence={onSilence} /> : null}
    </li>
  );
}

/** Who has it, and what keeps it from paging. A silence the list has not caught up with still shows its id. */
function AlertMarks({ alert: a, silence }: { alert: Alert; silence: Silence | null }): React.JSX.Element | null {
  if (!a.ack && !a.silencedBy) return null;
  return (
    <div className="host-alerts__marks">
      {a.ack ? (
        <span className="host-alerts__mark" data-testid="host-alert-ack">
          acknowledged by {a.ack.by} at {formatTime(a.ack.at)}
          {a.ack.note ? `: ${a.ack.note}` : ''}
        </span>
      ) : null}
      {a.silencedBy ? (
        <span className="host-alerts__mark host-alerts__mark--silenced" data-testid="host-alert-silenced">
          silenced{silence ? ` until ${formatTime(silence.until)} — ${silence.reason}` : ` (${a.silencedBy})`}
        </span>
      ) : null}
    </div>
  );
}

function AlertActions({ alert: a, transport, onSilence }: { alert: Alert; transport: Transport; onSilence: () => void }): React.JSX.Element {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const ack = (): void => {
    setBusy(true);
    setError(null);
    transport.invoke('alerts.ack', { id: a.id }).then(
      () => setBusy(false),
      (err: unknown) => {
        const e = toContractError(err);
        setBusy(false);
        setError(`${e.code}: ${e.message}`);
      },
    );
  };
  const what = `${alertKindLabel(a.kind)} on ${a.host}${a.serviceId ? `/${a.serviceId}` : ''}`;
  return (
    <div className="host-alerts__actions">
      {a.ack ? null : (
        <button type="button" className="button button--small" onClick={ack} disabled={busy} aria-label={`Acknowledge ${what}`} data-testid="alert-ack">
          Acknowledge
        </button>
      )}
      <button type="button" className="button button--small" onClick={onSilence} aria-label={`Silence ${what}…`} data-testid="alert-silence">
        Silence…
      </button>
      {error ? (
        <span className="inline-error" role="alert" data-testid="alert-action-error">
          {error}
        </span>
      ) : null}
    </div>
  );
}

function ContextLines({ alert: a }: { alert: Alert }): React.JSX.Element {
  const lines = a.context ?? [];
  return (
    <details className="host-alerts__context" data-testid="host-alert-context">
      <summary>
        {lines.length} log line{lines.length === 1 ? '' : 's'}
        {contextKinds(lines) ? ` (${contextKinds(lines)})` : ''}
      </summary>
      <pre className="host-alerts__lines">
        {lines.map((l, i) => (
          <span key={i} className={l.failure ? 'host-alerts__ctx host-alerts__ctx--failure' : 'host-alerts__ctx'} data-failure={l.failure ?? undefined}>
            {l.text}
            {'\n'}
          </span>
        ))}
      </pre>
    </details>
  );
}
