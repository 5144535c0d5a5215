// The life of each alert: a condition must hold for its rule's sustain before
// it is raised and be absent for its clear time before it is cleared, so one
// odd sample neither raises nor clears. A rule that cannot judge this tick
// (no traffic, no figure, outside every load band, its cause grouped under
// another alert) says 'unknown': the track is left exactly as it was.
// Event-like alerts (Xid, reboot, log failure) are raised at once and held
// past their last event. Every change is fired as an AlertEvent.
import type { Alert, AlertContextLine, AlertEvent, AlertKind, AlertSeverity } from '../../../src-preload/contract/index.js';
import type { Emitter } from '../base/index.js';
import type { RecentSeries } from './recent-series.js';
import type { HostAlertSettings } from './settings.js';

export interface Condition {
  severity: AlertSeverity;
  message: string;
  value: number | null;
  threshold: number | null;
  model: string | null;
  gpuIndex?: number | null;
  command?: string | null;
  context?: readonly AlertContextLine[];
}

/** A condition, its absence, or no verdict this tick (neither raises nor clears). */
export type RuleVerdict = Condition | null | 'unknown';

/** Who an alert is about: `part` tells apart several alerts of one kind on one host or service (a disk, a PID, a GPU, a class). */
export interface Subject {
  kind: AlertKind;
  host: string;
  serviceId: string | null;
  part?: string;
}

export const idOf = (s: Subject): string => `${s.kind}:${s.host}${s.serviceId === null ? '' : `/${s.serviceId}`}${s.part === undefined ? '' : `#${s.part}`}`;
export const routeOf = (s: Pick<Subject, 'host' | 'serviceId'>): string => `hosts/${s.host}${s.serviceId === null ? '' : `/${s.serviceId}`}`;

/** How a state-like rule judges: its sustain and clear times, the window its figure is over, its incident root. */
export interface Judgement {
  sustainMs: number;
  clearMs: number;
  /** The window the figure is judged over; null for instant facts. */
  windowMs?: number | null;
  /** The id of the alert that is the root cause while this one would be raised. */
  incident?: string;
}

interface Track extends Subject {
  /** Event-like alerts: when the current rate-limit window began (the raise, or the last renewal). */
  windowStart?: number;
  /** When the condition began (of any severity); null while absent. */
  since: number | null;
  /** When the worst severity began. */
  criticalSince: number | null;
  absentSince: number | null;
  alert: Alert | null;
}

export class AlertTracks {
  private readonly tracks = new Map<string, Track>();

  constructor(
    private readonly emitter: Emitter<AlertEvent>,
    private readonly series: RecentSeries,
  ) {}

  list(): Alert[] {
    const out: Alert[] = [];
    for (const t of this.tracks.values()) if (t.alert !== null) out.push(t.alert);
    return out.sort((a, b) => b.raisedAt - a.raisedAt);
  }

  active(id: string): Alert | null {
    return this.tracks.get(id)?.alert ?? null;
  }

  /** Raised alerts of a host (optionally of one service). */
  activeOf(host: string, serviceId?: string | null): Alert[] {
    const out: Alert[] = [];
    for (const t of this.tracks.values()) if (t.alert !== null && t.host === host && (serviceId === undefined || t.serviceId === serviceId)) out.push(t.alert);
    return out;
  }

  /** State-like tracks of a host (not events), for a round that clears what it no longer finds. */
  stateSubjectsOf(host: string): (Subject & { id: string })[] {
    const out: (Subject & { id: string })[] = [];
    for (const [id, t] of this.tracks) if (t.host === host && t.windowStart === undefined) out.push({ id, kind: t.kind, host: t.host, serviceId: t.serviceId, part: t.part });
    return out;
  }

  /** `id`: the subject's id when the caller has it already (every rule on every tick: one string less). */
  step(subject: Subject, now: number, verdict: RuleVerdict, j: Judgement, id: string = idOf(subject)): void {
    if (verdict === 'unknown') return;
    let t = this.tracks.get(id);
    if (t === undefined) {
      if (verdict === null) return;
      t = { ...subject, since: null, criticalSince: null, absentSince: null, alert: null };
      this.tracks.set(id, t);
    }
    if (verdict === null) {
      t.since = null;
      t.criticalSince = null;
      if (t.alert === null) {
        this.tracks.delete(id);
        return;
      }
      t.absentSince ??= now;
      if (now - t.absentSince >= j.clearMs) this.clear(id, t, now);
      return;
    }
    t.absentSince = null;
    t.since ??= now;
    if (verdict.severity === 'critical') t.criticalSince ??= now;
    else t.criticalSince = null;
    // Sustained critical → critical; sustained (any severity) → at least warning.
    const severity: AlertSeverity | null =
      t.criticalSince !== null && now - t.criticalSince >= j.sustainMs ? 'critical' : now - t.since >= j.sustainMs ? 'warning' : null;
    if (severity === null && t.alert === null) return;
    // Read only for a raised alert: a copy of its recent points on every tick of every rule would cost more than the rules.
    const series = this.series.read(id);
    if (severity === null) {
      t.alert = { ...t.alert!, message: verdict.message, value: verdict.value, updatedAt: now, ...(series ? { series } : {}) };
      return;
    }
    if (t.alert === null) {
      t.alert = newAlert(id, subject, severity, verdict, now, j, series);
      this.emitter.fire({ type: 'raised', at: now, alert: t.alert });
      return;
    }
    const changed = t.alert.severity !== severity;
    t.alert = { ...t.alert, ...extras(verdict), severity, message: verdict.message, value: verdict.value, threshold: verdict.threshold, updatedAt: now, ...(series ? { series } : {}) };
    if (changed) this.emitter.fire({ type: 'changed', at: now, alert: t.alert });
  }

  /** An event-like alert: raised at once, held `eventHoldMs` past its last event, renewed once per `logFailureEveryMs`. */
  event(subject: Subject, now: number, cond: Condition, occurrences: number, settings: HostAlertSettings, incident?: string): void {
    const id = idOf(subject);
    const t = this.tracks.get(id);
    const holdUntil = now + settings.eventHoldMs;
    if (t?.alert == null) {
      const alert = { ...newAlert(id, subject, cond.severity, cond, now, { sustainMs: 0, clearMs: 0, ...(incident !== undefined ? { incident } : {}) }, undefined), count: occurrences, holdUntil };
      this.tracks.set(id, { ...subject, windowStart: now, since: now, criticalSince: null, absentSince: null, alert });
      this.emitter.fire({ type: 'raised', at: now, alert });
      return;
    }
    const count = (t.alert.count ?? 1) + occurrences;
    const renew = now - (t.windowStart ?? t.alert.raisedAt) >= settings.logFailureEveryMs || (cond.severity === 'critical' && t.alert.severity !== 'critical');
    if (!renew) {
      t.alert = { ...t.alert, count, holdUntil, updatedAt: now };
      this.emitter.fire({ type: 'changed', at: now, alert: t.alert, repeat: true });
      return;
    }
    t.windowStart = now;
    t.alert = { ...t.alert, ...extras(cond), severity: cond.severity, message: cond.message, value: cond.value, threshold: cond.threshold, count, holdUntil, updatedAt: now };
    this.emitter.fire({ type: 'changed', at: now, alert: t.alert });
  }

  expireEvents(now: number): void {
    for (const [id, t] of this.tracks) {
      if (t.windowStart !== undefined && t.alert?.holdUntil !== undefined && now >= t.alert.holdUntil) this.clear(id, t, now);
    }
  }

  /** Ties a raised alert to its root cause after the fact: an annotation (shown, never paged). */
  group(id: string, incident: string, now: number): void {
    const t = this.tracks.get(id);
    if (t?.alert == null || t.alert.incident !== undefined || id === incident) return;
    t.alert = { ...t.alert, incident, updatedAt: now };
    this.emitter.fire({ type: 'annotated', at: now, alert: t.alert });
  }

  private clear(id: string, t: Track, now: number): void {
    const alert = { ...t.alert!, updatedAt: now };
    this.tracks.delete(id);
    this.emitter.fire({ type: 'cleared', at: now, alert });
  }
}

function extras(cond: Condition): Partial<Alert> {
  const out: Partial<Alert> = {};
  if (cond.gpuIndex !== undefined) out.gpuIndex = cond.gpuIndex;
  if (cond.command !== undefined) out.command = cond.command;
  if (cond.context !== undefined) out.context = [...cond.context];
  return out;
}

function newAlert(id: string, subject: Subject, severity: AlertSeverity, cond: Condition, now: number, j: Judgement, series: Alert['series']): Alert {
  const { kind, host, serviceId } = subject;
  return {
    id,
    kind,
    severity,
    host,
    serviceId,
    model: cond.model,
    message: cond.message,
    value: cond.value,
    threshold: cond.threshold,
    raisedAt: now,
    updatedAt: now,
    route: routeOf(subject),
    ...(j.windowMs ? { windowMs: j.windowMs } : {}),
    ...(series ? { series } : {}),
    ...(j.incident !== undefined && j.incident !== id ? { incident: j.incident } : {}),
    ...extras(cond),
  };
}
