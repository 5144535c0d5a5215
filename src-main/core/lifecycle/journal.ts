// The record of every action: each change is saved, published to the UI, and
// (for steps and outcomes) written as an audit event; endings also notify.
import type { ActionView } from '../../../src-preload/contract/index.js';
import type { Clock } from '../base/index.js';
import type { NotificationInput } from '../notify/index.js';
import type { AuditEventType, Store } from '../store/index.js';
import type { LifecycleTargetConfig } from './drivers/index.js';
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
    this.deps.repo.save(rec);
    const target = this.deps.targets().find((t) => t.upstream === rec.view.upstream);
    this.audit(`lifecycle.${state}`, actor, rec, {
      ...extra,
      after: target ? observe(this.deps.fleet, target) : null,
      observed: rec.view.observed,
      error: rec.view.error,
      drained: rec.view.drained,
      aborted: rec.view.aborted,
    });
    this.deps.onAction(rec.view);
    if (state === 'verified' || state === 'failed') {
      this.deps.notify({
        key: `action:${rec.view.id}`,
        severity: state === 'failed' ? 'critical' : 'info',
        title: `${state === 'verified' ? 'Verified' : 'FAILED'}: ${rec.view.kind} ${rec.view.upstream}`,
        body: state === 'failed' ? (rec.view.error ?? 'not verified') : rec.view.observed.join('; '),
        route: 'actions',
      });
    }
  }
}
