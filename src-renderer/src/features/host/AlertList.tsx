// The alerts of a host: kind, what it is about, the message; the command to
// run as text to copy (the console runs nothing); for a log failure or an
// Xid, the lines it quotes, collapsed in a native <details> (focusable, opens
// with Enter or Space).
import type { Alert } from '../../../../src-preload/contract/alerts.js';
import { CopyButton } from '../../components/CopyButton.js';
import { alertKindLabel, alertSubject, contextKinds, showCount } from './alert-list-state.js';

export function AlertList({ alerts }: { readonly alerts: readonly Alert[] }): React.JSX.Element | null {
  if (alerts.length === 0) return null;
  return (
    <ul className="host-alerts" aria-label="Alerts" data-testid="host-alerts">
      {alerts.map((a) => (
        <AlertItem key={a.id} alert={a} />
      ))}
    </ul>
  );
}

function AlertItem({ alert: a }: { readonly alert: Alert }): React.JSX.Element {
  const subject = alertSubject(a);
  return (
    <li className={`host-alerts__item host-alerts__item--${a.severity}`} data-kind={a.kind} data-testid="host-alert">
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
      {a.command ? (
        <div className="host-alerts__command">
          <code data-testid="host-alert-command">{a.command}</code> <CopyButton text={a.command} label="Copy the command" />
        </div>
      ) : null}
      {a.context && a.context.length > 0 ? (
        <details className="host-alerts__context" data-testid="host-alert-context">
          <summary>
            {a.context.length} log line{a.context.length === 1 ? '' : 's'}
            {contextKinds(a.context) ? ` (${contextKinds(a.context)})` : ''}
          </summary>
          <pre className="host-alerts__lines">
            {a.context.map((l, i) => (
              <span key={i} className={l.failure ? 'host-alerts__ctx host-alerts__ctx--failure' : 'host-alerts__ctx'} data-failure={l.failure ?? undefined}>
                {l.text}
                {'\n'}
              </span>
            ))}
          </pre>
        </details>
      ) : null}
    </li>
  );
}
