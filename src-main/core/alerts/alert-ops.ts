// The alert book: what people do about alerts. It listens to the engine,
// annotates each alert with its acknowledgement and the silence that covers
// it, and decides what pages: a raise or a real change pages unless the
// alert is silenced, grouped under an incident, or acknowledged (then only an
// escalation to critical pages again). Acknowledgements live in memory by
// alert id while the alert is open (a restart raises alerts anew, without
// them); silences are stored (silences.ts). Every person's change is audited
// with who made it.
import type { Alert, AlertAck, AlertEvent, AlertHistory, AlertSeverity, Silence, SilenceScope } from '../../../src-preload/contract/index.js';
import { AppError, DisposableStore, scrubSecretText, type Clock, type Disposable, type Logger } from '../base/index.js';
import type { EventSink } from '../channel.js';
import type { Config } from '../config/index.js';
import type { Notices } from '../notify/index.js';
import type { AuditLog, SettingsRepository } from '../store/index.js';
import { upstreamKey } from '../upstream/index.js';
import { deliverAlertEvent, sendAlertNotice } from './alert-delivery.js';
import { AlertsErrorCode } from './errors.js';
import { ALERT_ROW_PREFIXES, CHANGE_ROW_PREFIXES, DEFAULT_HISTORY_MS, HISTORY_LOOKBACK_MS, alertHistoryFrom, handoverChangesFrom } from './history.js';
import { SilenceBook, silenceMatches, type SilenceInput, type SilencesChange } from './silences.js';

/** Where alerts come from: the engine's open alerts and its raise / change / clear events. */
export interface AlertSource {
  list(): Alert[];
  onDidChange(listener: (event: AlertEvent) => void): Disposable;
}

export interface AlertOpsDeps {
  source: AlertSource;
  audit: AuditLog;
  settings: SettingsRepository;
  notices: Notices;
  emit: EventSink;
  clock: Clock;
  logger: Logger;
  /** The config in force: a silence's scope must name its hosts, services and models. */
  config: () => Config;
  /** Silence ids (tests). */
  newSilenceId?: () => string;
}

export interface HistoryQuery {
  fromMs?: number;
  toMs?: number;
  host?: string;
  limit: number;
}

/** Audit rows read for one history at most; past it the answer says it was cut. */
const HISTORY_MAX_ROWS = 20_000;

interface AckRecord {
  ack: AlertAck;
  /** The severity it had when acknowledged: a later escalation to critical pages again. */
  severity: AlertSeverity;
}

export class AlertOps implements Disposable {
  private readonly book: SilenceBook;
  private readonly acks = new Map<string, AckRecord>();
  /** The silence each open alert was last shown with, so its end can be told and paged once. */
  private readonly shownSilence = new Map<string, string>();
  private readonly disposables = new DisposableStore();

  constructor(private readonly deps: AlertOpsDeps) {
    this.book = this.disposables.add(
      new SilenceBook({ settings: deps.settings, audit: deps.audit, clock: deps.clock, logger: deps.logger, checkScope: (s) => checkScope(s, deps.config()), newId: deps.newSilenceId }),
    );
    this.disposables.add(deps.source.onDidChange((event) => this.onAlertEvent(event)));
    this.disposables.add(this.book.onDidChange((change) => this.onSilencesChanged(change)));
  }

  /** The open alerts, annotated with their acknowledgement and silence. */
  list(): Alert[] {
    return this.deps.source.list().map((a) => this.annotate(a));
  }

  /** Open alerts that need a person (the tray's count): not acknowledged, not silenced, not held by another alert's incident. */
  needingAttention(): number {
    return this.list().filter((a) => a.ack == null && a.silencedBy == null && a.incident === undefined).length;
  }

  /** The silences in force now. */
  silences(): Silence[] {
    return this.book.inForce();
  }

  ack(id: string, note: string | null, actor: string): Alert {
    const open = this.deps.source.list().find((a) => a.id === id);
    if (open === undefined) throw new AppError(AlertsErrorCode.UNKNOWN_ALERT, `no open alert "${id}" (it may have cleared)`, { details: { id } });
    const ack: AlertAck = { by: actor, at: this.deps.clock.now(), note: note === null || note.trim() === '' ? null : scrubSecretText(note.trim()) };
    this.acks.set(id, { ack, severity: open.severity });
    this.deps.audit.append({
      type: 'alert.acknowledged',
      actor,
      target: open.serviceId ? upstreamKey(open.host, open.serviceId) : open.host,
      payload: { alertId: id, kind: open.kind, severity: open.severity, host: open.host, serviceId: open.serviceId, note: ack.note },
    });
    const alert = this.annotate(open);
    deliverAlertEvent({ type: 'annotated', at: ack.at, alert }, this.deps, false);
    return alert;
  }

  silence(input: SilenceInput, actor: string): Silence {
    const scope: SilenceScope = { rule: input.rule, host: input.host ?? null, serviceId: input.serviceId ?? null, model: input.model ?? null };
    // An alias names its service's model: the silence keeps the model's own name, which alerts carry.
    const model = input.model === undefined ? undefined : (servedModel(input.model, this.deps.config()) ?? input.model);
    const covers = this.deps.source.list().filter((a) => silenceMatches({ ...scope, model: model ?? null }, a, this.modelOf(a))).map((a) => a.id);
    return this.book.set({ ...input, ...(model !== undefined ? { model } : {}) }, actor, covers);
  }

  unsilence(id: string, actor: string): Silence {
    return this.book.end(id, actor);
  }

  history(query: HistoryQuery): AlertHistory {
    const now = this.deps.clock.now();
    const toMs = query.toMs ?? now;
    const fromMs = query.fromMs ?? toMs - DEFAULT_HISTORY_MS;
    const { audit } = this.deps;
    const alertRows = audit.between({ fromMs: fromMs - HISTORY_LOOKBACK_MS, toMs, typePrefixes: ALERT_ROW_PREFIXES, limit: HISTORY_MAX_ROWS });
    const changeRows = audit.between({ fromMs, toMs, typePrefixes: CHANGE_ROW_PREFIXES, limit: HISTORY_MAX_ROWS });
    const onHost = (host: string | null) => query.host === undefined || host === query.host || (host ?? '').startsWith(`${query.host}/`);
    // A window that reaches now includes what is open now (its raise may be older than the rows read).
    const open = toMs >= now ? this.list() : [];
    const rows = alertRows.filter((r) => onHost(r.target));
    const { alerts, truncated } = alertHistoryFrom(rows, open.filter((a) => onHost(a.host)), fromMs, toMs, query.limit);
    const changes = handoverChangesFrom(changeRows, fromMs, toMs).filter((c) => onHost(c.target));
    return {
      fromMs,
      toMs,
      alerts,
      changes: changes.slice(-query.limit),
      silences: this.book.overlapping(fromMs, toMs).filter((s) => s.host === null || onHost(s.host)),
      truncated: truncated || changes.length > query.limit || alertRows.length >= HISTORY_MAX_ROWS || changeRows.length >= HISTORY_MAX_ROWS,
    };
  }

  dispose(): Promise<void> {
    return this.disposables.dispose();
  }

  private modelOf(a: Pick<Alert, 'host' | 'serviceId' | 'model'>): string | null {
    if (a.model !== null) return a.model;
    if (a.serviceId === null) return null;
    return this.deps.config().hosts.find((h) => h.label === a.host)?.services.find((s) => s.id === a.serviceId)?.model ?? null;
  }

  private annotate(a: Alert): Alert {
    const silence = this.book.covering(a, this.modelOf(a));
    return { ...a, ack: this.acks.get(a.id)?.ack ?? null, silencedBy: silence?.id ?? null };
  }

  private onAlertEvent(event: AlertEvent): void {
    const alert = this.annotate(event.alert);
    const page = this.pages(event, alert);
    if (event.type === 'cleared') {
      this.acks.delete(alert.id);
      this.shownSilence.delete(alert.id);
    } else if (alert.silencedBy) this.shownSilence.set(alert.id, alert.silencedBy);
    else this.shownSilence.delete(alert.id);
    deliverAlertEvent({ ...event, alert }, this.deps, page);
  }

  /** Whether this event pages: news about an alert nobody has, that no silence covers and no incident holds. */
  private pages(event: AlertEvent, alert: Alert): boolean {
    if (event.type === 'cleared' || event.type === 'annotated' || event.repeat) return false;
    // Silenced alerts are raised, listed, shown and audited, never notified; a grouped one pages through its cause.
    if (alert.silencedBy || alert.incident) return false;
    const acked = this.acks.get(alert.id);
    if (acked === undefined) return true;
    // Acknowledged: repeats and same-severity changes stay quiet; an escalation to critical pages again.
    if (alert.severity === 'critical' && acked.severity !== 'critical') {
      acked.severity = 'critical';
      return true;
    }
    return false;
  }

  /** A silence was set or ended: re-annotate the open alerts it covers; one no longer silenced pages once, now. */
  private onSilencesChanged(change: SilencesChange): void {
    this.deps.emit('alerts.silences', { silences: change.inForce });
    const now = this.deps.clock.now();
    for (const open of this.deps.source.list()) {
      const alert = this.annotate(open);
      const before = this.shownSilence.get(alert.id) ?? null;
      if (before === (alert.silencedBy ?? null)) continue;
      if (alert.silencedBy) this.shownSilence.set(alert.id, alert.silencedBy);
      else this.shownSilence.delete(alert.id);
      const page = before !== null && !alert.silencedBy && !alert.incident && !this.acks.has(alert.id);
      deliverAlertEvent({ type: 'annotated', at: now, alert }, this.deps, false);
      if (page) sendAlertNotice(alert, this.deps.notices);
    }
  }
}

/** The model a served name (model or alias, any case) stands for; null when none serves it. */
function servedModel(name: string, config: Config): string | null {
  const m = name.toLowerCase();
  for (const h of config.hosts) for (const s of h.services) if (s.model.toLowerCase() === m || s.aliases.some((a) => a.toLowerCase() === m)) return s.model;
  return null;
}

/** A silence names only what the config has: its host, a service (of that host, if one is named) and a model served somewhere. */
export function checkScope(scope: SilenceScope, config: Config): void {
  const unknown = (field: string, value: string, what: string): never => {
    throw new AppError(AlertsErrorCode.SILENCE_SCOPE_UNKNOWN, `${field} "${value}" is not ${what} in the config`, { details: { field, value } });
  };
  const host = scope.host === null ? null : config.hosts.find((h) => h.label === scope.host);
  if (scope.host !== null && host === undefined) unknown('host', scope.host, 'a host');
  const hosts = host ? [host] : config.hosts;
  if (scope.serviceId !== null && !hosts.some((h) => h.services.some((s) => s.id === scope.serviceId))) {
    unknown('serviceId', scope.serviceId, host ? `a service of ${host.label}` : 'a service');
  }
  if (scope.model !== null) {
    if (servedModel(scope.model, { ...config, hosts }) === null) unknown('model', scope.model, host ? `a model served on ${host.label}` : 'a served model');
  }
}
