// Silences: a rule (or every rule) kept from paging on a host, service or
// model for a while, with a reason — a maintenance window. They are kept in
// the settings table so a restart keeps them in force; each one set, ended by
// a person or run out is audited once, and ends by itself at `until`. Ended
// silences are kept for a while so a shift's history can show them.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { SilenceSchema, type Alert, type Silence, type SilenceScope } from '../../../src-preload/contract/index.js';
import { AppError, Emitter, scrubSecretText, type Clock, type Disposable, type Logger } from '../base/index.js';
import type { AuditLog, SettingsRepository } from '../store/index.js';
import { AlertsErrorCode } from './errors.js';

export const SILENCES_SETTING = 'alerts.silences';
/** More than this many in force is a mute, not a maintenance window. */
export const MAX_SILENCES_IN_FORCE = 100;
/** Ended silences are kept this long for the history, and at most this many rows in all. */
export const ENDED_SILENCE_KEEP_MS = 30 * 86_400_000;
export const MAX_STORED_SILENCES = 500;
/** Node's timers overflow past 2^31 ms (24.8 days): expiry is checked at least this often instead. */
const MAX_TIMER_MS = 3_600_000;

/** What is stored: the contract's silence and whether its running out has been audited. */
const StoredSilenceSchema = SilenceSchema.extend({ expiredNotedAt: z.number().nullable() }).strict();
type StoredSilence = z.infer<typeof StoredSilenceSchema>;

export interface SilenceInput {
  rule: Silence['rule'];
  host?: string;
  serviceId?: string;
  model?: string;
  forMs: number;
  reason: string;
}

export interface SilencesChange {
  /** Every silence in force after the change. */
  inForce: Silence[];
  /** Silences that stopped being in force with this change (ended or expired). */
  ended: Silence[];
  /** A silence set with this change. */
  started: Silence | null;
}

export interface SilenceBookDeps {
  settings: SettingsRepository;
  audit: AuditLog;
  clock: Clock;
  logger: Logger;
  /** Throws ALERTS_SILENCE_SCOPE_UNKNOWN when the scope names something the config does not have. */
  checkScope(scope: SilenceScope): void;
  /** The silence's id (tests pin it); default `sil-` and 8 random hex digits. */
  newId?: () => string;
}

/** Does `silence` cover `alert` (whose model is `model`, the alert's own or its service's)? Time is not looked at. */
export function silenceMatches(silence: SilenceScope, alert: Pick<Alert, 'kind' | 'host' | 'serviceId'>, model: string | null): boolean {
  if (silence.rule !== 'all' && silence.rule !== alert.kind) return false;
  if (silence.host !== null && silence.host !== alert.host) return false;
  if (silence.serviceId !== null && silence.serviceId !== alert.serviceId) return false;
  if (silence.model !== null && (model === null || model.toLowerCase() !== silence.model.toLowerCase())) return false;
  return true;
}

export const isInForce = (s: Pick<Silence, 'until' | 'endedAt'>, now: number): boolean => s.endedAt === null && now < s.until;

const toSilence = ({ expiredNotedAt: _noted, ...s }: StoredSilence): Silence => s;

export class SilenceBook implements Disposable {
  private rows: StoredSilence[] = [];
  /** Rows that could not be read: logged, kept aside and written back as they were, never lost. */
  private readonly unreadable: unknown[] = [];
  private readonly emitter = new Emitter<SilencesChange>();
  readonly onDidChange = this.emitter.on.bind(this.emitter);
  private timer: Disposable | null = null;
  private disposed = false;

  constructor(private readonly deps: SilenceBookDeps) {
    this.restore();
    // Silences that ran out while the console was stopped are noted now, once.
    this.expire();
  }

  /** In force now, ending soonest first. */
  inForce(): Silence[] {
    const now = this.deps.clock.now();
    return this.rows.filter((s) => isInForce(s, now)).map(toSilence).sort((a, b) => a.until - b.until);
  }

  /** Every kept silence that was in force at some time in [fromMs, toMs). */
  overlapping(fromMs: number, toMs: number): Silence[] {
    return this.rows.filter((s) => s.createdAt < toMs && (s.endedAt ?? s.until) > fromMs).map(toSilence).sort((a, b) => a.createdAt - b.createdAt);
  }

  /** The silence in force that covers the alert (the one that ends last), or null. */
  covering(alert: Pick<Alert, 'kind' | 'host' | 'serviceId'>, model: string | null): Silence | null {
    let best: Silence | null = null;
    for (const s of this.inForce()) if (silenceMatches(s, alert, model) && (best === null || s.until > best.until)) best = s;
    return best;
  }

  set(input: SilenceInput, actor: string, covers: readonly string[] = []): Silence {
    const scope: SilenceScope = { rule: input.rule, host: input.host ?? null, serviceId: input.serviceId ?? null, model: input.model ?? null };
    this.deps.checkScope(scope);
    if (this.inForce().length >= MAX_SILENCES_IN_FORCE) {
      throw new AppError(AlertsErrorCode.TOO_MANY_SILENCES, `${MAX_SILENCES_IN_FORCE} silences are in force already; end one (alerts.unsilence) before setting another`, {
        details: { max: MAX_SILENCES_IN_FORCE },
      });
    }
    const now = this.deps.clock.now();
    // The reason is the operator's words: kept (it is the point of a silence), with inline secrets masked.
    const reason = scrubSecretText(input.reason.trim());
    const silence: Silence = { id: this.deps.newId?.() ?? `sil-${randomBytes(4).toString('hex')}`, ...scope, reason, by: actor, createdAt: now, until: now + input.forMs, endedAt: null, endedBy: null };
    const row = { ...silence, expiredNotedAt: null };
    this.rows.push(row);
    try {
      // The audit row and the stored silence land together or not at all (a kill or a failed write in between).
      this.deps.settings.atomically(() => {
        this.deps.audit.append({
          type: 'alerts.silence.set',
          actor,
          target: scope.host,
          payload: { silenceId: silence.id, rule: scope.rule, host: scope.host, serviceId: scope.serviceId, model: scope.model, until: silence.until, forMs: input.forMs, reason, covers: covers.slice(0, 50) },
        });
        this.save();
      });
    } catch (err) {
      this.rows = this.rows.filter((r) => r !== row);
      throw err;
    }
    this.changed([], silence);
    return silence;
  }

  /** Ends a silence in force now (a person's unsilence). */
  end(id: string, actor: string): Silence {
    const now = this.deps.clock.now();
    const row = this.rows.find((s) => s.id === id);
    if (row === undefined || !isInForce(row, now)) {
      throw new AppError(AlertsErrorCode.UNKNOWN_SILENCE, row === undefined ? `no silence "${id}"` : `silence "${id}" is no longer in force`, { details: { id } });
    }
    row.endedAt = now;
    row.endedBy = actor;
    try {
      this.deps.settings.atomically(() => {
        this.deps.audit.append({ type: 'alerts.silence.ended', actor, target: row.host, payload: { silenceId: id, rule: row.rule, until: row.until, endedAt: now } });
        this.save();
      });
    } catch (err) {
      row.endedAt = null;
      row.endedBy = null;
      throw err;
    }
    this.changed([toSilence(row)], null);
    return toSilence(row);
  }

  dispose(): void {
    this.disposed = true;
    void this.timer?.dispose();
    this.timer = null;
    this.emitter.dispose();
  }

  /** Notes each silence that has run out (audited once, by the console) and schedules the next check. */
  private expire(): void {
    const now = this.deps.clock.now();
    const ended: Silence[] = [];
    for (const row of this.rows) {
      if (row.endedAt !== null || row.expiredNotedAt !== null || now < row.until) continue;
      row.expiredNotedAt = now;
      this.deps.audit.append({ type: 'alerts.silence.expired', actor: 'system', target: row.host, payload: { silenceId: row.id, rule: row.rule, until: row.until } });
      ended.push(toSilence(row));
    }
    if (ended.length > 0) {
      this.save();
      this.changed(ended, null);
    }
    this.schedule();
  }

  private schedule(): void {
    void this.timer?.dispose();
    this.timer = null;
    if (this.disposed) return;
    const now = this.deps.clock.now();
    const next = Math.min(...this.rows.filter((s) => isInForce(s, now)).map((s) => s.until));
    if (!Number.isFinite(next)) return;
    this.timer = this.deps.clock.setTimeout(() => this.expire(), Math.min(Math.max(0, next - now), MAX_TIMER_MS));
  }

  private changed(ended: Silence[], started: Silence | null): void {
    if (started !== null) this.schedule();
    this.emitter.fire({ inForce: this.inForce(), ended, started });
  }

  private restore(): void {
    const { settings, logger } = this.deps;
    let stored: unknown;
    try {
      stored = settings.get<unknown>(SILENCES_SETTING);
    } catch (err) {
      // Not JSON at all: nothing is in force, and the value stays in the table until a write replaces it.
      logger.warn('stored silences are not readable; none restored', { setting: SILENCES_SETTING, error: (err as Error).message });
      return;
    }
    for (const row of Array.isArray(stored) ? stored : []) {
      const s = StoredSilenceSchema.safeParse(row);
      if (s.success) this.rows.push(s.data);
      else {
        this.unreadable.push(row);
        logger.warn('kept an unreadable stored silence aside', { setting: SILENCES_SETTING, issue: s.error.issues[0]?.message ?? 'invalid' });
      }
    }
  }

  /** Writes the kept rows back, dropping ended ones past ENDED_SILENCE_KEEP_MS and the oldest ended ones over MAX_STORED_SILENCES. */
  private save(): void {
    const now = this.deps.clock.now();
    const kept = this.rows.filter((s) => isInForce(s, now) || now - (s.endedAt ?? s.until) < ENDED_SILENCE_KEEP_MS);
    const over = kept.length - MAX_STORED_SILENCES;
    const ended = kept.filter((s) => !isInForce(s, now)).sort((a, b) => (a.endedAt ?? a.until) - (b.endedAt ?? b.until));
    const drop = new Set(over > 0 ? ended.slice(0, over) : []);
    this.rows = kept.filter((s) => !drop.has(s));
    this.deps.settings.set(SILENCES_SETTING, [...this.rows, ...this.unreadable]);
  }
}
