// Standing approvals: an operator pre-approves one kind of action on one
// service for a while; proposals that match are approved by it. Granting,
// using and revoking one are each an audit event.
import { randomBytes } from 'node:crypto';
import type { ActionKind, StandingApprovalView } from '../../../src-preload/contract/index.js';
import { AppError, type Clock } from '../base/index.js';
import type { Store } from '../store/index.js';
import { actorFor, checkStandingLabel, osUserOf } from './approval.js';
import type { LifecycleTargetConfig } from './drivers/index.js';
import { LifecycleErrorCode } from './errors.js';
import type { ActionRepository } from './repository.js';

export interface StandingDeps {
  repo: ActionRepository;
  store: Store;
  clock: Clock;
  onStanding(view: StandingApprovalView): void;
  osUser?: () => string;
}

export interface GrantInput {
  kind: ActionKind;
  durationMinutes: number;
  typedLabel?: string;
  caller: string;
}

export class StandingApprovals {
  constructor(private readonly deps: StandingDeps) {}

  list(): StandingApprovalView[] {
    return this.deps.repo.listStanding();
  }

  /** For a service whose driver supports `input.kind` (the caller checks that). */
  grant(target: LifecycleTargetConfig, input: GrantInput): StandingApprovalView {
    checkStandingLabel(input.kind, target.label, input.typedLabel);
    const now = this.deps.clock.now();
    const actor = actorFor(osUserOf(this.deps.osUser), input.caller);
    const s: StandingApprovalView = {
      id: `sa_${randomBytes(9).toString('base64url')}`,
      kind: input.kind,
      upstream: target.upstream,
      grantedBy: actor,
      grantedAt: now,
      expiresAt: now + input.durationMinutes * 60_000,
      revokedAt: null,
      uses: 0,
    };
    this.deps.repo.saveStanding(s);
    this.deps.store.audit.append({ type: 'lifecycle.standing.granted', actor, target: s.upstream, payload: { standingId: s.id, kind: s.kind, expiresAt: s.expiresAt, durationMinutes: input.durationMinutes } });
    this.deps.onStanding(s);
    return s;
  }

  revoke(id: string, caller: string): StandingApprovalView {
    const s = this.deps.repo.getStanding(id);
    if (!s) throw new AppError(LifecycleErrorCode.STANDING_NOT_FOUND, `no standing approval ${id}`, { details: { id } });
    if (s.revokedAt !== null) return s;
    const actor = actorFor(osUserOf(this.deps.osUser), caller);
    const next = { ...s, revokedAt: this.deps.clock.now() };
    this.deps.repo.saveStanding(next);
    this.deps.store.audit.append({ type: 'lifecycle.standing.revoked', actor, target: s.upstream, payload: { standingId: s.id, kind: s.kind, uses: s.uses } });
    this.deps.onStanding(next);
    return next;
  }

  /** The standing approval in force for this service and kind now, if any. */
  active(upstream: string, kind: ActionKind): StandingApprovalView | null {
    const now = this.deps.clock.now();
    return this.list().find((s) => s.upstream === upstream && s.kind === kind && s.revokedAt === null && s.expiresAt > now) ?? null;
  }

  /** `standing` approved action `actionId`: count the use. */
  use(standing: StandingApprovalView, actionId: string, kind: ActionKind): void {
    const used = { ...standing, uses: standing.uses + 1 };
    this.deps.repo.saveStanding(used);
    this.deps.store.audit.append({ type: 'lifecycle.standing.used', actor: standing.grantedBy, target: standing.upstream, payload: { standingId: standing.id, actionId, kind, uses: used.uses } });
    this.deps.onStanding(used);
  }

  /** Publishes the ones that ran out within `windowMs` before `now` (so the UI sees them end). */
  announceExpired(now: number, windowMs: number): void {
    for (const s of this.list()) {
      if (s.revokedAt === null && s.expiresAt <= now && s.expiresAt > now - windowMs) this.deps.onStanding(s);
    }
  }
}
