// The action queue: every wake / sleep / offload / restart is proposed, then
// approved by a person with the nonce issued for that proposal (restart and
// offload also with the host label typed), then run, and every step is an
// audit event. There is no other way in: drivers only plan, and the runner is
// reached only from an approval here.
import type { ActionDraft, ActionKind, ActionLoad, ActionView, Approver, LifecycleTarget, StandingApprovalView } from '../../../src-preload/contract/index.js';
import { AppError, fireAndForget, type Clock, type Disposable, type Logger, type OnPremGuard } from '../base/index.js';
import type { Store } from '../store/index.js';
import type { NotificationInput } from '../notify/index.js';
import { DESTRUCTIVE, actorFor, checkDecision, checkTypedLabel, issueNonce, osUserOf } from './approval.js';
import { driverFor, type LifecycleTargetConfig } from './drivers/index.js';
import { LifecycleErrorCode } from './errors.js';
import { ActionJournal } from './journal.js';
import { engineFigure, mergeLoad, sameLoad } from './load.js';
import { observe, sleepLevel } from './observe.js';
import type { LifecycleFleet, LifecycleProxy } from './ports.js';
import { assertApplicable, newProposal, supportedKinds, unavailableKinds, type ProposalFacts } from './proposal.js';
import { createActionRepository, type ActionRecord, type ActionRepository } from './repository.js';
import { ActionRunner } from './runner.js';
import { StandingApprovals } from './standing.js';
import { estimate, variantOf, type TimingVariant } from './timing.js';

const OPEN_STATES = ['proposed', 'approved', 'running'] as const;

export interface LifecycleOptions {
  /** How long a proposal waits for a decision. Default 15 min. */
  proposalTtlMs?: number;
  /** In-flight requests get this long to finish before they are cut. Default 30 s. */
  drainDeadlineMs?: number;
  /** Deadline for the calls plus verification, from the expected duration. Default 3× expected + 15 s. */
  verifyDeadlineMs?: (expectedMs: number) => number;
  pollMs?: number;
  vramMinDeltaMiB?: number;
  /** How often expiry is checked and the counts of waiting proposals re-read. Default 1 s. */
  sweepIntervalMs?: number;
  /** After a restart command, how long the old process may still hold the port before it is called a ghost. Default 2 s. */
  portReleaseGraceMs?: number;
  /** The engine's request counts older than this are shown as stale, not trusted (a few fleet poll intervals). Default 5 s. */
  engineMaxAgeMs?: number;
}

/** A target with the reason each kind it does not offer is missing (for the UI: no button without a why). */
export interface LifecycleTargetDetail extends LifecycleTarget {
  unavailable: { kind: ActionKind; reason: string }[];
}

export interface LifecycleDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  /** The configured services, read at each call (config reloads apply at once). */
  targets(): readonly LifecycleTargetConfig[];
  fleet: LifecycleFleet;
  proxy: LifecycleProxy | null;
  onAction(view: ActionView): void;
  onStanding(view: StandingApprovalView): void;
  notify(input: NotificationInput): void;
  /** Default: random 18 bytes, base64url. */
  nonce?: () => string;
  osUser?: () => string;
  options?: LifecycleOptions;
  /** Counts (and refuses) lifecycle calls outside loopback and the tunnels. */
  offPrem?: OnPremGuard | null;
}

export interface ProposeInput {
  upstream: string;
  kind: ActionKind;
  reason?: string;
  /** `operator:alice@web`, `policy:idle-sleep`, … */
  proposer: string;
}

export interface ApproveInput {
  id: string;
  nonce: string;
  typedLabel?: string;
  displayName?: string;
  /** Transport (`web`, `ipc`, `cli`, `test`). */
  caller: string;
}

export class LifecycleService implements Disposable {
  private readonly repo: ActionRepository;
  private readonly journal: ActionJournal;
  private readonly standing: StandingApprovals;
  private readonly runner: ActionRunner;
  /** Upstreams with an approved or running action: one at a time per service. */
  private readonly active = new Map<string, string>();
  private readonly running = new Map<string, Promise<ActionView>>();
  private readonly sweeper: Disposable;
  private readonly opts: Required<LifecycleOptions>;
  private disposed = false;

  constructor(private readonly deps: LifecycleDeps) {
    this.repo = createActionRepository(deps.store.db);
    this.opts = {
      proposalTtlMs: 15 * 60_000,
      drainDeadlineMs: 30_000,
      verifyDeadlineMs: (expected) => 3 * expected + 15_000,
      pollMs: 250,
      vramMinDeltaMiB: 512,
      sweepIntervalMs: 1_000,
      portReleaseGraceMs: 2_000,
      engineMaxAgeMs: 5_000,
      ...deps.options,
    };
    const { store, clock, fleet } = deps;
    this.journal = new ActionJournal({ repo: this.repo, store, clock, fleet, targets: () => deps.targets(), onAction: (v) => deps.onAction(v), notify: (n) => deps.notify(n) });
    this.standing = new StandingApprovals({ repo: this.repo, store, clock, onStanding: (s) => deps.onStanding(s), osUser: deps.osUser });
    const { drainDeadlineMs, verifyDeadlineMs, pollMs, vramMinDeltaMiB, portReleaseGraceMs, engineMaxAgeMs } = this.opts;
    this.runner = new ActionRunner({
      clock,
      logger: deps.logger,
      fleet,
      proxy: deps.proxy,
      offPrem: deps.offPrem ?? null,
      journal: this.journal,
      drainDeadlineMs,
      verifyDeadlineMs,
      pollMs,
      vramMinDeltaMiB,
      settleMs: portReleaseGraceMs,
      engineMaxAgeMs,
    });
    // A console that stopped mid-action cannot say how it ended: closed as interrupted with each step's
    // fate, never resumed (its nonce is spent, and only `proposed` can be approved).
    for (const rec of this.repo.inStates(['approved', 'running'])) this.journal.interrupt(rec);
    this.sweeper = deps.clock.setInterval(() => {
      // A write the store refuses (a full data folder) is tried again next interval, never thrown out of a timer.
      try {
        this.sweep();
        this.refreshLoads(); // a proposal can wait minutes for a person: what its dialog says is running follows along
      } catch (err) {
        deps.logger.warn('lifecycle sweep failed; tried again next interval', { error: (err as Error).message });
      }
    }, this.opts.sweepIntervalMs);
  }

  // --- reading -------------------------------------------------------------

  /** The services, the kinds each offers and why the others are not (the contract's shape). */
  targets(): LifecycleTarget[] {
    return this.targetDetails();
  }

  /** The services, the kinds each offers, and why each other kind is not offered. */
  targetDetails(): LifecycleTargetDetail[] {
    return this.deps.targets().map((t) => {
      const d = driverFor(t);
      return {
        upstream: t.upstream,
        label: t.label,
        serviceId: t.serviceId,
        model: t.model,
        driver: t.driver,
        supported: supportedKinds(d),
        unavailable: unavailableKinds(d),
      };
    });
  }

  /** Whether `upstream` is configured and its driver can do `kind` (policies ask before proposing). */
  supports(upstream: string, kind: ActionKind): boolean {
    const target = this.deps.targets().find((t) => t.upstream === upstream);
    return target !== undefined && driverFor(target).supports(kind);
  }

  /** Actions proposed in [fromMs, toMs), oldest first, nonces removed (evidence reports). */
  proposedBetween(fromMs: number, toMs: number): ActionView[] {
    return this.repo.createdBetween(fromMs, toMs).map((r) => ({ ...r.view, nonce: null }));
  }

  /** Proposals waiting for a person (tray and badges). */
  pendingCount(): number {
    return this.repo.inStates(['proposed']).length;
  }

  list(limit: number): { actions: ActionView[]; standing: StandingApprovalView[]; targets: LifecycleTarget[] } {
    this.sweep();
    return { actions: this.repo.list(limit).map((r) => r.view), standing: this.standing.list(), targets: this.targets() };
  }

  get(id: string): ActionView {
    return this.require(id).view;
  }

  /** Resolves when the action is verified or failed (tests, CLI --wait). */
  settled(id: string): Promise<ActionView> {
    return this.running.get(id) ?? Promise.resolve(this.require(id).view);
  }

  /** Expected wake time of a sleeping upstream (for the proxy's Retry-After); null if unknown. */
  expectedWakeMs(upstream: string): number | null {
    const target = this.deps.targets().find((t) => t.upstream === upstream);
    if (!target) return null;
    const variant = variantOf('wake', target.sleepLevel, sleepLevel(this.deps.fleet, target));
    return estimate(variant, this.repo.durations(upstream, variant, 3)).expectedMs;
  }

  // --- proposing -----------------------------------------------------------

  /**
   * What a proposal of `kind` on `upstream` would be, without creating one:
   * nothing is stored, audited or notified (the dialog shows a draft until the
   * operator presses Propose or Approve). `existing` names an open proposal of
   * the same kind, which proposing would join.
   */
  preview(input: { upstream: string; kind: ActionKind }): ActionDraft {
    this.sweep();
    const { target, facts } = this.plan({ ...input, proposer: 'preview' });
    const view = newProposal({ ...facts, nonce: 'preview' }).view;
    const open = this.openOf(target.upstream, input.kind);
    return {
      kind: view.kind,
      upstream: view.upstream,
      label: view.label,
      driver: view.driver,
      requiresTypedLabel: view.requiresTypedLabel,
      expectedEffect: view.expectedEffect,
      expectedDowntimeMs: view.expectedDowntimeMs,
      downtimeBasis: view.downtimeBasis,
      steps: view.steps,
      inFlight: view.inFlight,
      queued: view.queued,
      load: view.load ?? null,
      existing: open ? { id: open.view.id, state: open.view.state } : null,
      standing: this.standingFor(target.upstream, input.kind)?.id ?? null,
    };
  }

  /**
   * Creates the proposal (audited). With `approveNow` the operator approved it
   * in the same dialog: the typed label is checked first (a wrong one creates
   * nothing), then it is proposed and approved at once, with no "approval
   * needed" notice in between.
   */
  propose(input: ProposeInput, approveNow?: Omit<ApproveInput, 'id' | 'nonce'>): { action: ActionView; collapsed: boolean } {
    this.assertLive();
    this.sweep();
    const { target, facts } = this.plan(input);
    const rec = newProposal({ ...facts, nonce: issueNonce(this.deps.nonce) });
    if (approveNow) checkTypedLabel(rec.view, approveNow.typedLabel);

    // The same action already waiting or under way: one proposal however many ask.
    const open = this.openOf(target.upstream, input.kind);
    if (open) {
      open.view = { ...open.view, repeats: open.view.repeats + 1 };
      this.journal.save(open);
      if (approveNow && open.view.state === 'proposed' && open.view.nonce) return { action: this.approve({ ...approveNow, id: open.view.id, nonce: open.view.nonce }), collapsed: true };
      return { action: open.view, collapsed: true };
    }

    const view = rec.view;
    this.journal.record(rec, 'lifecycle.proposed', input.proposer, {
      reason: view.reason,
      steps: view.steps.map((s) => s.text),
      expectedDowntimeMs: view.expectedDowntimeMs,
      downtimeBasis: view.downtimeBasis,
      inFlight: view.inFlight,
      queued: view.queued,
      load: view.load,
      before: observe(this.deps.fleet, target),
    });

    const standing = this.standingFor(target.upstream, input.kind);
    if (standing) {
      this.approveWith(rec, target, { osUser: standing.grantedBy, displayName: `standing approval ${standing.id}`, via: 'standing' }, standing);
      return { action: this.require(view.id).view, collapsed: false };
    }
    if (approveNow) {
      const osUser = osUserOf(this.deps.osUser);
      return { action: this.approveWith(rec, target, { osUser, displayName: approveNow.displayName ?? osUser, via: approveNow.caller }, null), collapsed: false };
    }
    this.deps.notify({
      key: `action:${view.id}`,
      severity: DESTRUCTIVE.has(view.kind) ? 'warning' : 'info',
      title: `Approval needed: ${view.kind} ${view.upstream}`,
      body: `${view.reason}. Proposed by ${view.proposer}; expected downtime ${Math.round(view.expectedDowntimeMs / 100) / 10} s.`,
      route: 'actions',
      event: 'approval.waiting',
    });
    return { action: view, collapsed: false };
  }

  /** Everything a proposal is made of, from the target's driver, state and measured timings (nothing stored). */
  private plan(input: ProposeInput): { target: LifecycleTargetConfig; facts: Omit<ProposalFacts, 'nonce'> } {
    const target = this.requireTarget(input.upstream);
    const driver = driverFor(target);
    const why = driver.unavailable(input.kind);
    if (why !== null) {
      throw new AppError(LifecycleErrorCode.UNSUPPORTED_ACTION, `the ${driver.name} driver of ${target.upstream} cannot ${input.kind}: ${why}`, {
        details: { upstream: target.upstream, kind: input.kind, driver: driver.name, supported: supportedKinds(driver), reason: why },
      });
    }
    const level = sleepLevel(this.deps.fleet, target);
    // A router's models load and unload behind one awake server: its sleep state says nothing about them.
    if (driver.name !== 'llama-router') assertApplicable(target.upstream, input.kind, level);
    const steps = driver.plan(input.kind, { sleepLevel: level });
    const now = this.deps.clock.now();
    const variant = variantOf(input.kind, target.sleepLevel, level);
    const timing = estimate(variant, this.repo.durations(target.upstream, variant, 3));
    const both = this.loadOf(target);
    const load = { inFlight: both.proxyInFlight ?? 0, queued: both.proxyQueued ?? 0 };
    return { target, facts: { ...input, target, driver, level, steps, variant, timing, load, both, now, ttlMs: this.opts.proposalTtlMs, drainDeadlineMs: this.opts.drainDeadlineMs } };
  }

  private openOf(upstream: string, kind: ActionKind): ActionRecord | undefined {
    return this.repo.inStates(OPEN_STATES).find((r) => r.view.upstream === upstream && r.view.kind === kind);
  }

  // --- deciding ------------------------------------------------------------

  approve(input: ApproveInput): ActionView {
    this.assertLive();
    const rec = this.decidable(input.id, input.nonce);
    const target = this.deps.targets().find((t) => t.upstream === rec.view.upstream);
    if (!target) {
      this.journal.finish(rec, 'expired', { decision: 'expired', error: 'the service is no longer configured' }, 'system');
      throw new AppError(LifecycleErrorCode.TARGET_GONE, `${rec.view.upstream} is no longer configured; the proposal was closed`, {
        details: { id: rec.view.id, upstream: rec.view.upstream },
      });
    }
    checkTypedLabel(rec.view, input.typedLabel);
    const osUser = osUserOf(this.deps.osUser);
    return this.approveWith(rec, target, { osUser, displayName: input.displayName ?? osUser, via: input.caller }, null);
  }

  reject(input: { id: string; nonce: string; reason: string; caller: string }): ActionView {
    this.assertLive();
    const rec = this.decidable(input.id, input.nonce);
    const osUser = osUserOf(this.deps.osUser);
    // The decider is the rejecter, never the approver: reports count approvals from `decision`.
    const rejectedBy = { osUser, displayName: osUser, via: input.caller };
    this.journal.finish(rec, 'rejected', { decision: 'rejected', rejectedBy, rejectReason: input.reason }, actorFor(osUser, input.caller), { reason: input.reason });
    return rec.view;
  }

  /**
   * The operator takes a waiting proposal back (Withdraw in its dialog): it
   * closes as `withdrawn`, audited with who and why, and leaves the inbox.
   */
  withdraw(input: { id: string; nonce: string; reason?: string; caller: string }): ActionView {
    this.assertLive();
    const rec = this.decidable(input.id, input.nonce);
    const osUser = osUserOf(this.deps.osUser);
    const withdrawnBy = { osUser, displayName: osUser, via: input.caller };
    const reason = input.reason ?? null;
    this.journal.finish(rec, 'withdrawn', { decision: 'withdrawn', withdrawnBy, withdrawReason: reason }, actorFor(osUser, input.caller), { reason });
    return rec.view;
  }

  /**
   * Verify now, on an action the console stopped in the middle of: reads the service's real state with the
   * checks of the action's kind and records what they saw on the action (audited as `lifecycle.checked`).
   * Changes nothing on the server and never resumes the action: the person decides what comes next.
   */
  async verifyNow(id: string, caller: string): Promise<ActionView> {
    this.assertLive();
    const rec = this.require(id);
    if (rec.view.state !== 'interrupted' || !rec.view.interruption) {
      throw new AppError(LifecycleErrorCode.NOT_INTERRUPTED, `${id} is ${rec.view.state}: Verify now is for an action the console stopped in the middle of`, {
        details: { id, state: rec.view.state },
      });
    }
    const target = this.requireTarget(rec.view.upstream);
    const actor = actorFor(osUserOf(this.deps.osUser), caller);
    const result = await this.runner.check(rec, target);
    // Read again: another check may have been recorded while this one ran.
    const latest = this.require(id);
    const check = { at: this.deps.clock.now(), by: actor, ok: result.ok, observed: result.observed };
    latest.view = { ...latest.view, interruption: { ...latest.view.interruption!, check } };
    this.journal.record(latest, 'lifecycle.checked', actor, { ok: result.ok, observed: result.observed, code: result.error?.code ?? null, after: observe(this.deps.fleet, target) });
    return latest.view;
  }

  // --- standing approvals --------------------------------------------------

  grantStanding(input: { upstream: string; kind: ActionKind; durationMinutes: number; typedLabel?: string; caller: string }): StandingApprovalView {
    this.assertLive();
    const target = this.requireTarget(input.upstream);
    const driver = driverFor(target);
    const why = driver.unavailable(input.kind);
    if (why !== null) {
      throw new AppError(LifecycleErrorCode.UNSUPPORTED_ACTION, `the ${driver.name} driver of ${target.upstream} cannot ${input.kind}: ${why}`, { details: { upstream: target.upstream, kind: input.kind, reason: why } });
    }
    return this.standing.grant(target, input);
  }

  revokeStanding(id: string, caller: string): StandingApprovalView {
    return this.standing.revoke(id, caller);
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    void this.sweeper.dispose();
    this.runner.abortAll();
    await Promise.allSettled([...this.running.values()]);
    await this.runner.close();
  }

  // --- internals -----------------------------------------------------------

  /**
   * The standing approval that would run `kind` on `upstream` now. None while an interrupted action on it
   * waits for a person to look (Verify now): after a crash, nothing on that service runs unasked.
   */
  private standingFor(upstream: string, kind: ActionKind): StandingApprovalView | null {
    const unchecked = this.repo.inStates(['interrupted']).some((r) => r.view.upstream === upstream && !r.view.interruption?.check);
    return unchecked ? null : (this.standing.active(upstream, kind) ?? null);
  }

  private assertLive(): void {
    if (this.disposed) throw new AppError(LifecycleErrorCode.DISPOSED, 'the console is shutting down');
  }

  private require(id: string): ActionRecord {
    const rec = this.repo.get(id);
    if (!rec) throw new AppError(LifecycleErrorCode.NOT_FOUND, `no action ${id}`, { details: { id } });
    return rec;
  }

  private requireTarget(upstream: string): LifecycleTargetConfig {
    const target = this.deps.targets().find((t) => t.upstream === upstream);
    if (!target) throw new AppError(LifecycleErrorCode.UNKNOWN_SERVICE, `no service ${upstream} in the config`, { details: { upstream } });
    return target;
  }

  /** The proposal `id`, if it may be decided with `nonce` now (expired ones are closed first). */
  private decidable(id: string, nonce: string): ActionRecord {
    this.sweep();
    return checkDecision(this.require(id), nonce);
  }

  private approveWith(rec: ActionRecord, target: LifecycleTargetConfig, approver: Approver, standing: StandingApprovalView | null): ActionView {
    const busy = this.active.get(target.upstream);
    if (busy && busy !== rec.view.id) {
      throw new AppError(LifecycleErrorCode.BUSY, `${target.upstream} already has an action under way (${busy}); one at a time`, {
        retryable: true,
        details: { upstream: target.upstream, running: busy },
      });
    }
    const now = this.deps.clock.now();
    rec.view = { ...rec.view, state: 'approved', decision: 'approved', nonce: null, decidedAt: now, approver, standingApprovalId: standing?.id ?? null };
    const actor = standing ? `standing:${standing.id}` : actorFor(approver.osUser, approver.via);
    // Stored and audited together, before anything runs: an approval the log cannot record is not made.
    this.journal.record(rec, 'lifecycle.approved', actor, { approver, standingApprovalId: standing?.id ?? null, steps: rec.view.steps.map((s) => s.text), load: rec.view.load ?? null });
    this.active.set(target.upstream, rec.view.id);
    if (standing) this.standing.use(standing, rec.view.id, rec.view.kind);
    this.deps.notify({ key: `action:${rec.view.id}`, severity: 'info', title: `Approved: ${rec.view.kind} ${rec.view.upstream}`, body: `by ${approver.displayName} (${approver.osUser})`, route: 'actions' });
    const run = this.runner.run(rec, target).finally(() => {
      this.running.delete(rec.view.id);
      if (this.active.get(target.upstream) === rec.view.id) this.active.delete(target.upstream);
    });
    this.running.set(rec.view.id, run);
    fireAndForget(run, this.deps.logger, `lifecycle action ${rec.view.id}`);
    return rec.view;
  }

  /** Proxy and engine counts of one service now (direct tunnel clients included). */
  private loadOf(target: LifecycleTargetConfig): ActionLoad {
    const now = this.deps.clock.now();
    const engine = engineFigure(this.deps.fleet.state(), target, now, this.opts.engineMaxAgeMs);
    return mergeLoad(this.deps.proxy?.load(target.upstream) ?? null, engine, now);
  }

  /** Re-reads the counts of each waiting proposal; publishes only those whose sentence changed. */
  private refreshLoads(): void {
    if (this.disposed) return;
    for (const rec of this.repo.inStates(['proposed'])) {
      const target = this.deps.targets().find((t) => t.upstream === rec.view.upstream);
      if (!target) continue;
      const load = this.loadOf(target);
      if (sameLoad(rec.view.load, load)) continue;
      rec.view = { ...rec.view, load };
      this.journal.save(rec);
    }
  }

  private sweep(): void {
    const now = this.deps.clock.now();
    for (const rec of this.repo.inStates(['proposed'])) {
      if (rec.view.expiresAt <= now) this.journal.finish(rec, 'expired', { decision: 'expired' }, 'system', { reason: 'no decision before the proposal expired' });
    }
    this.standing.announceExpired(now, this.opts.sweepIntervalMs * 2);
  }
}

export type { TimingVariant };
