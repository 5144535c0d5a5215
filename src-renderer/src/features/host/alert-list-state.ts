// The alerts the console holds now, kept from `alerts.list` and every
// `alert.changed` event: raised and changed replace the alert by id, cleared
// removes it. Events that arrive before the list's answer are applied on top
// of it, so an alert cleared meanwhile does not come back.
import { AlertKindSchema, alertKindLabel, LogFailureKindSchema, type Alert, type AlertContextLine, type AlertEvent, type AlertSeries, type Silence } from '../../../../src-preload/contract/index.js';

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

// One wording for a rule's name: the notice's title (core) and every screen.
export { alertKindLabel };

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

// ── acknowledgements, silences, the figure's series ────────────────────────

/** The silence an alert shows (by its id); null when none or when the list has not caught up. */
export function silenceOf(a: Pick<Alert, 'silencedBy'>, silences: readonly Silence[]): Silence | null {
  return a.silencedBy ? (silences.find((s) => s.id === a.silencedBy) ?? null) : null;
}

/** "caused by Telemetry stale on gpu-a": the incident an alert is grouped under (its id is the cause's alert id). */
export function incidentText(incident: string | undefined): string | null {
  if (!incident) return null;
  const colon = incident.indexOf(':');
  const kind = AlertKindSchema.safeParse(incident.slice(0, colon));
  const where = incident.slice(colon + 1).replace(/#.*$/, '');
  return kind.success ? `caused by ${alertKindLabel(kind.data).toLowerCase()} on ${where}` : `part of ${incident}`;
}

/**
 * The points of a small inline chart of `series` in a `width`×`height` box: one polyline per run of
 * known values (a gap, null, breaks the line rather than dropping to 0); null when fewer than two known.
 */
export function sparklinePaths(series: AlertSeries | undefined, width: number, height: number): string[] | null {
  if (!series) return null;
  const known = series.values.flatMap((v, i) => (v === null || series.at[i] === undefined ? [] : [{ t: series.at[i]!, v }]));
  if (known.length < 2) return null;
  const t0 = Math.min(...known.map((p) => p.t));
  const t1 = Math.max(...known.map((p) => p.t));
  const lo = Math.min(...known.map((p) => p.v));
  const hi = Math.max(...known.map((p) => p.v));
  const x = (t: number) => (t1 === t0 ? width / 2 : ((t - t0) / (t1 - t0)) * width);
  const y = (v: number) => (hi === lo ? height / 2 : height - ((v - lo) / (hi - lo)) * height);
  const runs: string[] = [];
  let run: string[] = [];
  series.values.forEach((v, i) => {
    const t = series.at[i];
    if (v === null || t === undefined) {
      if (run.length > 1) runs.push(run.join(' '));
      run = [];
      return;
    }
    run.push(`${x(t).toFixed(1)},${y(v).toFixed(1)}`);
  });
  if (run.length > 1) runs.push(run.join(' '));
  return runs;
}

/** The scope a silence covers, in words: "throughput on gpu-a/qwen", "every rule on model qwen", "gpu_fault everywhere". */
export function silenceScopeText(s: Pick<Silence, 'rule' | 'host' | 'serviceId' | 'model'>): string {
  const rule = s.rule === 'all' ? 'every rule' : alertKindLabel(s.rule);
  const where = [s.host && s.serviceId ? `${s.host}/${s.serviceId}` : (s.host ?? (s.serviceId ? `service ${s.serviceId}` : null)), s.model ? `model ${s.model}` : null].filter((x) => x !== null);
  return `${rule} ${where.length ? `on ${where.join(', ')}` : 'on every host'}`;
}
