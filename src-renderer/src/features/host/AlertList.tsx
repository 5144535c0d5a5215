import type { Alert } from '../../../../src-preload/contract/telemetry.js';

export function AlertList({ alerts }: { readonly alerts: readonly Alert[] }): React.JSX.Element | null {
  if (alerts.length === 0) return null;
  return (
    <ul className="host-alerts" aria-label="Alerts" data-testid="host-alerts">
      {alerts.map((a) => (
        <li key={a.id} className={`host-alerts__item host-alerts__item--${a.severity}`} data-kind={a.kind}>
          <span className="host-alerts__sev">{a.severity}</span> {a.message}
        </li>
      ))}
    </ul>
  );
}
