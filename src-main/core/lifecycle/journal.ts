// The record of every action: each change is saved, published to the UI, and
// (for steps and outcomes) written as an audit event; endings also notify. A
// state change and its audit event are one SQLite transaction: a crash between
// them can leave neither an unaudited approval nor an audit row for a change
// that was never stored.
import type { ActionView } from '../../../src-preload/contract/index.js';
import type { Clock } from '../base/index.js';
import type { NotificationInput } from '../notify/index.js';
import type { AuditEventType, Store } from '../store/index.js';
import type { LifecycleTargetConfig } from './drivers/index.js';
import { INTERRUPTED_TEXT, interruptionOf, interruptionSummary } from './interruption.js';
import { observe } from './observe.js';
import type { LifecycleFleet } from './ports.js';
import type { ActionRecord, ActionRepository } from './repository.js';

export interface JournalDeps {
  repo: ActionRepository;
  store: Store;
  clock: Clock;
  targets(): readonly LifecycleTargetConfig[];
  fleet: LifecycleFleet;
  onAction(view: ActionView): void;
  notify(input: NotificationInput): void;
}

export class ActionJournal {
  constructor(private readonly deps: JournalDeps) {}

  /** Saves and publishes (no audit event: progress lines are not outcomes). */
  save(rec: ActionRecord): void {
    this.deps.repo.save(rec);
    this.deps.onAction(rec.view);
  }

  progress(rec: ActionRecord, text: string, patch: Partial<ActionView> = {}): void {
    rec.view = { ...rec.view, ...patch, progress: text };
    this.save(rec);
  }

  /** Saves `rec` and appends its audit event in one transaction, then publishes it. */
  record(rec: ActionRecord, type: AuditEventType, actor: string, payload: Record<string, unknown>): void {
    this.atomically(`${type} (${rec.view.upstream})`, () => {
      this.deps.repo.save(rec);
      this.audit(type, actor, rec, payload);
    });
    this.deps.onAction(rec.view);
  }

  /**
   * An action the console stopped in the middle of (found open at start): closed as `interrupted` with
   * each step's fate, never resumed. Notified: a person checks the service and decides.
   */
  interrupt(rec: ActionRecord): void {
    const interruption = interruptionOf(rec.view, this.deps.clock.now());
    const { wasState, lastProgress } = interruption;
    this.finish(rec, 'interrupted', { interruption, error: INTERRUPTED_TEXT }, 'system', { wasState, lastProgress, ...interruptionSummary(interruption) });
  }

  /** An audit event about one action: the action's id, kind and state, then `payload`. */
  audit(type: AuditEventType, actor: string, rec: ActionRecord, payload: Record<string, unknown>): void {
    this.deps.store.audit.append({ type, actor, target: rec.view.upstream, payload: { actionId: rec.view.id, kind: rec.view.kind, state: rec.view.state, ...payload } });
  }

  /** The action ends in `state` (the nonce is gone for good); audited with what the service looks like now. */
  finish(rec: ActionRecord, state: ActionView['state'], patch: Partial<ActionView>, actor: string, extra: Record<string, unknown> = {}): void {
    const now = this.deps.clock.now();
    const decided = state === 'rejected' || state === 'expired' || state === 'withdrawn';
    rec.view = {
      ...rec.view,
      ...patch,
      state,
      nonce: null,
      progress: null,
      decidedAt: decided ? now : rec.view.decidedAt,
      finishedAt: now,
    };
    const target = this.deps.targets().find((t) => t.upstream === rec.view.upstream);
    this.record(rec, `lifecycle.${state}`, actor, {
      ...extra,
      after: target ? observe(this.deps.fleet, target) : null,
      observed: rec.view.observed,
      error: rec.view.error,
      drained: rec.view.drained,
      aborted: rec.view.aborted,
    });
    const title = ENDING_TITLE[state];
    if (title) {
      this.deps.notify({
        key: `action:${rec.view.id}`,
        severity: state === 'verified' ? 'info' : 'critical',
        title: `${title}: ${rec.view.kind} ${rec.view.upstream}`,
        body: state === 'verified' ? rec.view.observed.join('; ') : (rec.view.error ?? 'not verified'),
        route: 'actions',
      });
    }
  }

  /** One transaction; a full data folder is refused coded (STORE_DISK_FULL, naming the folder) and nothing is stored. */
  private atomically(what: string, fn: () => void): void {
    this.deps.store.atomically(what, fn);
  }
}

/** Endings that notify, and the word their notice starts with. */
const ENDING_TITLE: Partial<Record<ActionView['state'], string>> = { verified: 'Verified', failed: 'FAILED', interrupted: 'INTERRUPTED' };
