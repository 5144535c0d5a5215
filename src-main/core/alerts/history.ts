// A shift's history from the audit log: each alert from its raise to its
// clear (or still open) with the worst severity it reached, who acknowledged
// it, the silence that covered it and its incident; and the changes made in
// between, one line each. Summaries are built from known payload fields only
// (never a whole payload), so nothing secret or long reaches a handover.
import type { Alert, AlertHistoryEntry, AlertKind, AlertSeverity, HandoverChange, Silence } from '../../../src-preload/contract/index.js';
import { AlertKindSchema } from '../../../src-preload/contract/index.js';
import { scrubSecretText } from '../base/index.js';
import type { AuditEvent } from '../store/index.js';

/** Default window: a shift. */
export const DEFAULT_HISTORY_MS = 12 * 3_600_000;
/** Alert rows are read from this long before the window, so an alert raised earlier and cleared in it has its raise. */
export const HISTORY_LOOKBACK_MS = 24 * 3_600_000;
/** The audit prefixes a history reads: the alerts' rows, and the silences set (whose `covers` name the alerts open then). */
export const ALERT_ROW_PREFIXES = ['alert.', 'alerts.silence.set'] as const;
export const CHANGE_ROW_PREFIXES = ['lifecycle.', 'proxy.caps.changed', 'alerts.silence.', 'alerts.baseline.set', 'advisor.'] as const;
const SUMMARY_MAX_CHARS = 200;

type Row = Pick<AuditEvent, 'seq' | 'ts' | 'type' | 'actor' | 'target' | 'payload'>;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const worse = (a: AlertSeverity, b: unknown): AlertSeverity => (a === 'critical' || b === 'critical' ? 'critical' : 'warning');

/** The alert id a row is about: its own, or (rows written before ids were recorded) `kind:target`. */
function alertIdOf(row: Row): string | null {
  const id = str(row.payload.alertId);
  if (id) return id;
  const kind = str(row.payload.kind);
  return kind && row.target ? `${kind}:${row.target}` : null;
}

function entryFrom(row: Row, id: string, kind: AlertKind): AlertHistoryEntry {
  const p = row.payload;
  const [host = row.target ?? '', serviceId = null] = (row.target ?? '').split('/');
  return {
    id,
    kind,
    severity: p.severity === 'critical' ? 'critical' : 'warning',
    host: str(p.host) ?? host,
    serviceId: p.serviceId === undefined ? serviceId : str(p.serviceId),
    message: scrubSecretText(str(p.message) ?? ''),
    raisedAt: num(p.raisedAt) ?? row.ts,
    clearedAt: null,
    durationMs: null,
    ackBy: null,
    ackAt: null,
    silencedBy: str(p.silencedBy),
    incident: str(p.incident),
  };
}

/**
 * The alerts whose time open overlaps [fromMs, toMs), newest raise first, from alert rows (oldest first)
 * and the alerts open now (which the rows may not reach back to). At most `limit`; `truncated` says so.
 */
export function alertHistoryFrom(rows: readonly Row[], open: readonly Alert[], fromMs: number, toMs: number, limit: number): { alerts: AlertHistoryEntry[]; truncated: boolean } {
  const current = new Map<string, AlertHistoryEntry>();
  const done: AlertHistoryEntry[] = [];
  for (const row of rows) {
    if (row.type === 'alerts.silence.set') {
      // A silence set on an open alert covered it even if it ended before the alert's next row.
      for (const covered of Array.isArray(row.payload.covers) ? row.payload.covers : []) {
        const entry = typeof covered === 'string' ? current.get(covered) : undefined;
        if (entry && entry.silencedBy === null) entry.silencedBy = str(row.payload.silenceId);
      }
      continue;
    }
    const id = alertIdOf(row);
    const kind = AlertKindSchema.safeParse(row.payload.kind);
    if (id === null) continue;
    let entry = current.get(id);
    if (row.type === 'alert.acknowledged') {
      if (entry) Object.assign(entry, { ackBy: row.actor, ackAt: row.ts });
      continue;
    }
    if (!kind.success) continue;
    if (row.type === 'alert.raised' || entry === undefined) {
      if (entry) done.push(entry);
      entry = entryFrom(row, id, kind.data);
      current.set(id, entry);
    }
    const before = entry.severity;
    entry.severity = worse(entry.severity, row.payload.severity);
    // The handover says what it came to: a change's message replaces the raise's unless it is milder than what was seen.
    if (row.type === 'alert.changed' && (row.payload.severity === 'critical' || before === 'warning')) entry.message = scrubSecretText(str(row.payload.message) ?? entry.message);
    entry.silencedBy = str(row.payload.silencedBy) ?? entry.silencedBy;
    entry.incident = str(row.payload.incident) ?? entry.incident;
    if (row.type === 'alert.cleared') {
      entry.clearedAt = row.ts;
      entry.durationMs = row.ts - entry.raisedAt;
      done.push(entry);
      current.delete(id);
    }
  }
  const openIds = new Set(open.map((a) => a.id));
  for (const a of open) {
    const entry = current.get(a.id);
    if (entry === undefined) done.push(openEntry(a));
    else done.push({ ...entry, severity: worse(entry.severity, a.severity), message: a.severity === 'critical' || entry.severity === 'warning' ? a.message : entry.message, ackBy: a.ack?.by ?? entry.ackBy, ackAt: a.ack?.at ?? entry.ackAt, silencedBy: a.silencedBy ?? entry.silencedBy });
  }
  // An alert with a raise and no clear that is not open now ended with the console (a restart); its end is unknown.
  for (const [id, entry] of current) if (!openIds.has(id)) done.push(entry);
  const inWindow = done.filter((e) => e.raisedAt < toMs && (e.clearedAt ?? toMs) >= fromMs).sort((a, b) => b.raisedAt - a.raisedAt);
  return { alerts: inWindow.slice(0, limit), truncated: inWindow.length > limit };
}

function openEntry(a: Alert): AlertHistoryEntry {
  return {
    id: a.id,
    kind: a.kind,
    severity: a.severity,
    host: a.host,
    serviceId: a.serviceId,
    message: a.message,
    raisedAt: a.raisedAt,
    clearedAt: null,
    durationMs: null,
    ackBy: a.ack?.by ?? null,
    ackAt: a.ack?.at ?? null,
    silencedBy: a.silencedBy ?? null,
    incident: a.incident ?? null,
  };
}

const cut = (s: string): string => (s.length > SUMMARY_MAX_CHARS ? `${s.slice(0, SUMMARY_MAX_CHARS - 1)}…` : s);

function duration(ms: number | null): string {
  if (ms === null) return '?';
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  return ms >= 3_600_000 ? `${(ms / 3_600_000).toFixed(1)} h` : `${Math.round(ms / 60_000)} min`;
}

function capsText(v: unknown): string {
  if (typeof v !== 'object' || v === null) return '?';
  return Object.entries(v as Record<string, unknown>)
    .map(([cls, c]) => `${cls} ${typeof c === 'object' && c !== null && 'slots' in c ? String((c as { slots: unknown }).slots) : typeof c === 'number' ? c : '?'}`)
    .join(', ');
}

/** One line for a change row, from the fields its writer is known to put there. */
export function changeSummary(row: Row): string {
  const p = row.payload;
  const reason = str(p.reason) ? ` — ${scrubSecretText(str(p.reason)!)}` : '';
  if (row.type.startsWith('lifecycle.standing.')) return cut(`standing approval ${row.type.slice('lifecycle.standing.'.length)}: ${str(p.kind) ?? '?'}`);
  if (row.type.startsWith('lifecycle.')) {
    const error = str(p.error) ? ` (${scrubSecretText(str(p.error)!)})` : '';
    return cut(`${str(p.kind) ?? 'action'} ${row.type.slice('lifecycle.'.length)}${error}${reason}`);
  }
  if (row.type === 'proxy.caps.changed') return cut(`caps changed: ${capsText(p.before)} → ${capsText(p.after)}`);
  if (row.type === 'alerts.silence.set') {
    const scope = [str(p.host), str(p.serviceId), str(p.model)].filter((x) => x !== null).join('/') || 'every host';
    return cut(`silenced ${str(p.rule) ?? '?'} on ${scope} for ${duration(num(p.forMs))}${reason}`);
  }
  if (row.type === 'alerts.silence.ended') return cut(`silence ${str(p.silenceId) ?? '?'} ended early`);
  if (row.type === 'alerts.silence.expired') return cut(`silence ${str(p.silenceId) ?? '?'} ran out`);
  if (row.type === 'alerts.baseline.set') return cut(`baseline set: ${num(p.tokPerS) ?? '?'} tok/s (${str(p.source) ?? '?'})`);
  if (row.type.startsWith('advisor.')) return cut(`recommendation ${row.type.slice('advisor.'.length)}${str(p.summary) ? `: ${scrubSecretText(str(p.summary)!)}` : ''}${reason}`);
  return cut(row.type);
}

/** The changes of the window, oldest first: lifecycle steps are left out (their action's states say what happened). */
export function handoverChangesFrom(rows: readonly Row[], fromMs: number, toMs: number): HandoverChange[] {
  return rows
    .filter((r) => r.ts >= fromMs && r.ts < toMs && r.type !== 'lifecycle.step' && CHANGE_ROW_PREFIXES.some((p) => r.type.startsWith(p)))
    .map((r) => ({ seq: r.seq, at: r.ts, type: r.type, actor: r.actor, target: r.target, summary: changeSummary(r) }));
}

/**
 * The silences as the audit log tells them (for a signed report, which reads only the log): each
 * `alerts.silence.set` with its scope, reason and end, and the person who ended it early. Rows whose
 * payload lacks a field are left out rather than guessed.
 */
export function silencesFromAudit(rows: readonly Row[]): Silence[] {
  const byId = new Map<string, Silence>();
  for (const r of rows) {
    const p = r.payload;
    const id = str(p.silenceId);
    if (id === null) continue;
    if (r.type === 'alerts.silence.set') {
      const rule = p.rule === 'all' ? 'all' : AlertKindSchema.safeParse(p.rule);
      const until = num(p.until);
      if (until === null || (rule !== 'all' && !rule.success)) continue;
      byId.set(id, {
        id,
        rule: rule === 'all' ? 'all' : rule.data!,
        host: str(p.host),
        serviceId: str(p.serviceId),
        model: str(p.model),
        reason: scrubSecretText(str(p.reason) ?? ''),
        by: r.actor,
        createdAt: r.ts,
        until,
        endedAt: null,
        endedBy: null,
      });
    } else if (r.type === 'alerts.silence.ended') {
      const s = byId.get(id);
      if (s) Object.assign(s, { endedAt: r.ts, endedBy: r.actor });
    }
  }
  return [...byId.values()];
}
