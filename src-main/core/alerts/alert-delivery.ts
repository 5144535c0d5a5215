// What happens to an alert event: every raise, change and clear is audited
// and pushed; the alert book (alert-ops.ts) decides whether it pages. A
// repeat (another log line or Xid folded into a held alert) is pushed only:
// its count reaches the audit log with the clear. An annotation (acknowledged,
// silenced) is pushed only: the person's change is audited where it is made.
// Context lines (log text) never reach the audit row or a notice.
import { alertFigureText, alertKindLabel, type Alert, type AlertEvent } from '../../../src-preload/contract/index.js';
import type { EventSink } from '../channel.js';
import type { Notices } from '../notify/index.js';
import type { AuditLog } from '../store/index.js';
import { upstreamKey } from '../upstream/index.js';

export interface AlertDeliveryDeps {
  readonly audit: AuditLog;
  readonly notices: Notices;
  readonly emit: EventSink;
}

/** Audits and pushes `event` (its alert already annotated); sends its notice when `page` is true. */
export function deliverAlertEvent(event: AlertEvent, deps: AlertDeliveryDeps, page: boolean): void {
  const { alert } = event;
  if (event.type !== 'annotated' && !event.repeat) auditAlertEvent(event, deps);
  deps.emit('alert.changed', event);
  if (page) sendAlertNotice(alert, deps.notices);
}

/**
 * The audit row of a raise, change or clear. Evidence, not a gate: on a full data folder the append is
 * refused (the store's health says so, on the banner) and the alert is still pushed and paged.
 */
function auditAlertEvent(event: AlertEvent, deps: AlertDeliveryDeps): void {
  const { alert } = event;
  if (event.type === 'annotated') return;
  try {
    deps.audit.append({
      type: `alert.${event.type}`,
      actor: 'system',
      target: alert.serviceId ? upstreamKey(alert.host, alert.serviceId) : alert.host,
      payload: {
        // The id, raise time, silence and incident let a shift's history pair a raise with its clear.
        alertId: alert.id,
        kind: alert.kind,
        severity: alert.severity,
        message: alert.message,
        value: alert.value,
        threshold: alert.threshold,
        raisedAt: alert.raisedAt,
        ...(alert.gpuIndex != null ? { gpuIndex: alert.gpuIndex } : {}),
        ...(alert.count !== undefined ? { count: alert.count } : {}),
        ...(alert.context !== undefined ? { contextLines: alert.context.length } : {}),
        ...(alert.silencedBy ? { silencedBy: alert.silencedBy } : {}),
        ...(alert.incident ? { incident: alert.incident } : {}),
      },
    });
  } catch {
    // Refused by the store (full disk, I/O error): recorded in its health; the page below matters more.
  }
}

/** The page: the message, the figure against its threshold over its window, the recent series, and where the console opens on it. */
export function sendAlertNotice(alert: Alert, notices: Notices): void {
  const figure = alertFigureText(alert);
  const body = `${alert.message}${figure ? ` (${figure})` : ""}${alert.command ? `. Run: ${alert.command}` : ""}`;
  notices.notify({
    key: `alert:${alert.id}`,
    severity: alert.severity === 'critical' ? 'critical' : 'warning',
    title: `${alert.host}: ${alertKindLabel(alert.kind)}`,
    body,
    route: alert.route ?? `hosts/${alert.host}`,
    event: alert.severity === 'critical' ? 'alert.critical' : 'alert.warning',
    ...(alert.series ? { series: alert.series } : {}),
  });
}
