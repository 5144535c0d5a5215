// The alerts the console holds now, kept from `alerts.list` and every
// `alert.changed` event: raised and changed replace the alert by id, cleared
// removes it. Events that arrive before the list's answer are applied on top
// of it, so an alert cleared meanwhile does not come back.
import { LogFailureKindSchema, type Alert, type AlertContextLine, type AlertEvent, type AlertKind } from '../../../../src-preload/contract/index.js';

export function applyAlertEvent(alerts: readonly Alert[], event: AlertEvent): Alert[] {
  const rest = alerts.filter((a) => a.id !== event.alert.id);
  return event.type === 'cleared' ? rest : sortAlerts([...rest, event.alert]);
}

/** Critical first, then newest first. */
export function sortAlerts(alerts: readonly Alert[]): Alert[] {
  return [...alerts].sort((a, b) => (a.severity === b.severity ? b.raisedAt - a.raisedAt : a.severity === 'critical' ? -1 : 1));
}

export function listWithEvents(listed: readonly Alert[], early: readonly AlertEvent[]): Alert[] {
  return early.reduce<Alert[]>((acc, e) => applyAlertEvent(acc, e), sortAlerts(listed));
}

const KIND_LABELS: Record<AlertKind, string> = {
  throughput: 'Slower per sequence',
  kv_cache: 'KV cache',
  waiting_growing: 'Queue growing',
  host_stale: 'Telemetry stale',
  service_down: 'Service down',
  error_rate: 'Errors',
  hanging_requests: 'Hanging requests',
  ttft_slow: 'Slow first token',
  queue_wait: 'Queue wait',
  gpu_hot: 'GPU hot',
  tunnel_flapping: 'Tunnel flapping',
  disk_low: 'Disk low',
  log_failure: 'Log failure',
  gpu_process_unknown: 'GPU process',
  gpu_fault: 'GPU fault',
  gpu_throttle: 'GPU throttled',
  host_rebooted: 'Rebooted',
};

export const alertKindLabel = (kind: AlertKind): string => KIND_LABELS[kind];

/** "GPU0", "qwen", "qwen · GPU1": what the alert is about beyond its host. */
export function alertSubject(a: Pick<Alert, 'serviceId' | 'gpuIndex'>): string | null {
  const parts = [a.serviceId, a.gpuIndex == null ? null : `GPU${a.gpuIndex}`].filter((p): p is string => p !== null);
  return parts.length === 0 ? null : parts.join(' · ');
}

/** The failure kinds a context shows, causes first (the contract's order), as in the alert's message. */
export function contextKinds(lines: readonly AlertContextLine[]): string {
  const kinds = new Set(lines.flatMap((l) => (l.failure ? [l.failure] : [])));
  return LogFailureKindSchema.options.filter((k) => kinds.has(k)).join(', ');
}

/** The occurrences folded in, when they say more than the message: a log failure's message already counts its first read's lines. */
export function showCount(a: Pick<Alert, 'kind' | 'count' | 'value'>): boolean {
  return a.count !== undefined && a.count > 1 && !(a.kind === 'log_failure' && a.count === a.value);
}
