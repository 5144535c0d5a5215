// What happens to an alert event: every raise, change and clear is audited
// and pushed; raises and real changes go to the notification channels. A
// repeat (another log line or Xid folded into a held alert) is pushed only:
// its count reaches the audit log with the clear. An annotation (acknowledged,
// silenced) is pushed only: the person's change is audited where it is made.
// Context lines (log text) never reach the audit row or a notice.
import type { AlertEvent } from '../../../src-preload/contract/index.js';
import type { EventSink } from '../channel.js';
import type { Notices } from '../notify/index.js';
import type { AuditLog } from '../store/index.js';
import { upstreamKey } from '../upstream/index.js';

export interface AlertDeliveryDeps {
  readonly audit: AuditLog;
  readonly notices: Notices;
  readonly emit: EventSink;
}

export function deliverAlertEvent(event: AlertEvent, deps: AlertDeliveryDeps): void {
  const { alert } = event;
  if (event.type === 'annotated') {
    deps.emit('alert.changed', event);
    return;
  }
  if (!event.repeat) {
    deps.audit.append({
      type: `alert.${event.type}`,
      actor: 'system',
      target: alert.serviceId ? upstreamKey(alert.host, alert.serviceId) : alert.host,
      payload: {
        kind: alert.kind,
        severity: alert.severity,
        message: alert.message,
        value: alert.value,
        threshold: alert.threshold,
        ...(alert.gpuIndex != null ? { gpuIndex: alert.gpuIndex } : {}),
        ...(alert.count !== undefined ? { count: alert.count } : {}),
        ...(alert.context !== undefined ? { contextLines: alert.context.length } : {}),
      },
    });
  }
  deps.emit('alert.changed', event);
  if (event.type === 'cleared' || event.repeat) return;
  deps.notices.notify({
    key: `alert:${alert.id}`,
    severity: alert.severity === 'critical' ? 'critical' : 'warning',
    title: `${alert.host}: ${alert.kind.replaceAll('_', ' ')}`,
    body: alert.command ? `${alert.message}. Run: ${alert.command}` : alert.message,
    route: `hosts/${alert.host}`,
    event: alert.severity === 'critical' ? 'alert.critical' : 'alert.warning',
  });
}
