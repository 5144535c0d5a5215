// The action queue: every wake / sleep / offload / restart is proposed, then
// approved by a person with the nonce issued for that proposal (restart and
// offload also with the host label typed), then run — drain, the planned calls
// exactly as shown, verify, resume — and every step is an audit event. There is
// no other way in: drivers only plan, and the executor below is private.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { userInfo } from 'node:os';
import { Agent } from 'undici';
import type {
  ActionKind,
  ActionView,
  Approver,
  LifecycleTarget,
  PlannedStep,
  StandingApprovalView,
} from '../../../src-preload/contract/index.js';
import { AppError, fireAndForget, toAppError, type Clock, type Disposable, type Logger } from '../base/index.js';
import type { Store } from '../store/index.js';
import type { NotificationInput } from '../notify/index.js';
import { driverFor, stepText, type DriverIo, type DriverStep, type LifecycleDriver, type LifecycleTargetConfig } from './drivers/index.js';
import { LifecycleErrorCode } from './errors.js';
import { httpIo } from './io.js';
import type { LifecycleFleet, LifecycleProxy } from './ports.js';
import { createActionRepository, type ActionRecord, type ActionRepository } from './repository.js';
import { estimate, variantOf, type TimingVariant } from './timing.js';
import { hostVram, verifyAction } from './verify.js';

const KINDS: readonly ActionKind[] = ['wake', 'sleep', 'offload', 'restart'];
const DESTRUCTIVE = new Set<ActionKind>(['restart', 'offload']);
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
  /** How often expiry is checked. Default 1 s. */
  sweepIntervalMs?: number;
}

export interface LifecycleDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  /** The configured services, read at each call (config reloads apply at once). */
  targets(): LifecycleTargetConfig[];
  fleet: LifecycleFleet;
  proxy: LifecycleProxy | null;
  onAction(view: ActionView): void;
  onStanding(view: StandingApprovalView): void;
  notify(input: NotificationInput): void;
  /** Default: random 18 bytes, base64url. */
  nonce?: () => string;
  osUser?: () => string;
  options?: LifecycleOptions;
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

function defaultOsUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

const sameSecret = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

const sleepLevelOf = (s: string | undefined): 0 | 1 | 2 | null => (s === 'awake' ? 0 : s === 'asleep-1' ? 1 : s === 'asleep-2' ? 2 : null);

export class LifecycleService implements Disposable {
  private readonly repo: ActionRepository;
  private readonly agent = new Agent({ connections: 4, keepAliveTimeout: 2_000 });
  /** Upstreams with an approved or running action: one at a time per service. */
  private readonly active = new Map<string, string>();
  private readonly running = new Map<string, Promise<ActionView>>();
  private readonly aborts = new Set<AbortController>();
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
      ...deps.options,
    };
    // A console that stopped mid-action cannot say how it ended: record that honestly.
    for (const rec of this.repo.inStates(['approved', 'running'])) {
      this.finish(rec, 'failed', { error: 'the console stopped while this action was running; its outcome was not verified' }, 'system');
    }
    this.sweeper = deps.clock.setInterval(() => this.sweep(), this.opts.sweepIntervalMs);
  }

  // --- reading -------------------------------------------------------------

  targets(): LifecycleTarget[] {
    return this.deps.targets().map((t) => {
      const d = driverFor(t);
      return { upstream: t.upstream, label: t.label, serviceId: t.serviceId, model: t.model, driver: t.driver, supported: KINDS.filter((k) => d.supports(k)) };
    });
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
    return { actions: this.repo.list(limit).map((r) => r.view), standing: this.repo.listStanding(), targets: this.targets() };
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
    const variant = variantOf('wake', target.sleepLevel, this.sleepLevel(target));
    return estimate(variant, this.repo.durations(upstream, variant, 3)).expectedMs;
  }

  // --- proposing -----------------------------------------------------------

  propose(input: ProposeInput): { action: ActionView; collapsed: boolean } {
    this.assertLive();
    this.sweep();
    const target = this.requireTarget(input.upstream);
    const driver = driverFor(target);
    if (!driver.supports(input.kind)) {
      throw new AppError(LifecycleErrorCode.UNSUPPORTED_ACTION, `the ${driver.name} driver of ${target.upstream} cannot ${input.kind}`, {
        details: { upstream: target.upstream, kind: input.kind, driver: driver.name, supported: KINDS.filter((k) => driver.supports(k)) },
      });
    }
    const level = this.sleepLevel(target);
    const steps = driver.plan(input.kind, { sleepLevel: level });

    // The same action already waiting or under way: one proposal however many ask.
    const open = this.repo.inStates(OPEN_STATES).find((r) => r.view.upstream === target.upstream && r.view.kind === input.kind);
    if (open) {
      open.view = { ...open.view, repeats: open.view.repeats + 1 };
      this.repo.save(open);
      this.deps.onAction(open.view);
      return { action: open.view, collapsed: true };
    }

    const now = this.deps.clock.now();
    const variant = variantOf(input.kind, target.sleepLevel, level);
    const timing = estimate(variant, this.repo.durations(target.upstream, variant, 3));
    const load = this.deps.proxy?.load(target.upstream) ?? { inFlight: 0, queued: 0 };
    const nonce = (this.deps.nonce ?? (() => randomBytes(18).toString('base64url')))();
    const view: ActionView = {
      id: `act_${randomBytes(9).toString('base64url')}`,
      kind: input.kind,
      upstream: target.upstream,
      label: target.label,
      serviceId: target.serviceId,
      model: target.model,
      driver: driver.name,
      state: 'proposed',
      proposer: input.proposer,
      reason: input.reason ?? `requested by ${input.proposer}`,
      repeats: 0,
      nonce,
      requiresTypedLabel: DESTRUCTIVE.has(input.kind),
      expectedEffect: effectOf(input.kind, target, level),
      expectedDowntimeMs: timing.expectedMs,
      downtimeBasis: timing.basis,
      steps: this.describe(input.kind, steps, target),
      inFlight: load.inFlight,
      queued: load.queued,
      createdAt: now,
      expiresAt: now + this.opts.proposalTtlMs,
      decidedAt: null,
      approver: null,
      standingApprovalId: null,
      rejectReason: null,
      startedAt: null,
      finishedAt: null,
      progress: null,
      drained: null,
      aborted: null,
      observed: [],
      error: null,
    };
    const rec: ActionRecord = { view, issuedNonce: nonce, variant, planLevel: level, durationMs: null };
    this.repo.save(rec);
    this.audit('lifecycle.proposed', input.proposer, rec, {
      reason: view.reason,
      steps: view.steps.map((s) => s.text),
      expectedDowntimeMs: view.expectedDowntimeMs,
      downtimeBasis: view.downtimeBasis,
      inFlight: view.inFlight,
      queued: view.queued,
      before: this.observe(target),
    });
    this.deps.onAction(view);

    const standing = this.activeStanding(target.upstream, input.kind);
    if (standing) {
      this.approveWith(rec, target, { osUser: standing.grantedBy, displayName: `standing approval ${standing.id}`, via: 'standing' }, standing);
      return { action: this.require(view.id).view, collapsed: false };
    }
    this.deps.notify({
      key: `action:${view.id}`,
      severity: DESTRUCTIVE.has(view.kind) ? 'warning' : 'info',
      title: `Approval needed: ${view.kind} ${view.upstream}`,
      body: `${view.reason}. Proposed by ${view.proposer}; expected downtime ${Math.round(view.expectedDowntimeMs / 100) / 10} s.`,
      route: 'actions',
    });
    return { action: view, collapsed: false };
  }

  // --- deciding ------------------------------------------------------------

  approve(input: ApproveInput): ActionView {
    this.assertLive();
    const rec = this.checkDecision(input.id, input.nonce);
    const target = this.deps.targets().find((t) => t.upstream === rec.view.upstream);
    if (!target) {
      this.finish(rec, 'expired', { error: 'the service is no longer configured' }, 'system');
      throw new AppError(LifecycleErrorCode.TARGET_GONE, `${rec.view.upstream} is no longer configured; the proposal was closed`, {
        details: { id: rec.view.id, upstream: rec.view.upstream },
      });
    }
    if (rec.view.requiresTypedLabel && input.typedLabel !== rec.view.label) {
      throw new AppError(LifecycleErrorCode.LABEL_MISMATCH, `${rec.view.kind} needs the host label typed exactly: "${rec.view.label}"`, {
        details: { id: rec.view.id, expected: rec.view.label.length },
      });
    }
    const osUser = (this.deps.osUser ?? defaultOsUser)();
    return this.approveWith(rec, target, { osUser, displayName: input.displayName ?? osUser, via: input.caller }, null);
  }

  reject(input: { id: string; nonce: string; reason: string; caller: string }): ActionView {
    this.assertLive();
    const rec = this.checkDecision(input.id, input.nonce);
    const osUser = (this.deps.osUser ?? defaultOsUser)();
    const actor = `operator:${osUser}@${input.caller}`;
    rec.view = { ...rec.view, rejectReason: input.reason, approver: { osUser, displayName: osUser, via: input.caller } };
    this.finish(rec, 'rejected', {}, actor, { reason: input.reason });
    return rec.view;
  }

  // --- standing approvals --------------------------------------------------

  grantStanding(input: { upstream: string; kind: ActionKind; durationMinutes: number; typedLabel?: string; caller: string }): StandingApprovalView {
    this.assertLive();
    const target = this.requireTarget(input.upstream);
    const driver = driverFor(target);
    if (!driver.supports(input.kind)) {
      throw new AppError(LifecycleErrorCode.UNSUPPORTED_ACTION, `the ${driver.name} driver of ${target.upstream} cannot ${input.kind}`, { details: { upstream: target.upstream, kind: input.kind } });
    }
    if (DESTRUCTIVE.has(input.kind) && input.typedLabel !== target.label) {
      throw new AppError(LifecycleErrorCode.LABEL_MISMATCH, `a standing ${input.kind} approval needs the host label typed exactly: "${target.label}"`);
    }
    const now = this.deps.clock.now();
    const actor = `operator:${(this.deps.osUser ?? defaultOsUser)()}@${input.caller}`;
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
    this.repo.saveStanding(s);
    this.deps.store.audit.append({ type: 'lifecycle.standing.granted', actor, target: s.upstream, payload: { standingId: s.id, kind: s.kind, expiresAt: s.expiresAt, durationMinutes: input.durationMinutes } });
    this.deps.onStanding(s);
    return s;
  }

  revokeStanding(id: string, caller: string): StandingApprovalView {
    const s = this.repo.getStanding(id);
    if (!s) throw new AppError(LifecycleErrorCode.STANDING_NOT_FOUND, `no standing approval ${id}`, { details: { id } });
    if (s.revokedAt !== null) return s;
    const actor = `operator:${(this.deps.osUser ?? defaultOsUser)()}@${caller}`;
    const next = { ...s, revokedAt: this.deps.clock.now() };
    this.repo.saveStanding(next);
    this.deps.store.audit.append({ type: 'lifecycle.standing.revoked', actor, target: s.upstream, payload: { standingId: s.id, kind: s.kind, uses: s.uses } });
    this.deps.onStanding(next);
    return next;
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    void this.sweeper.dispose();
    for (const a of this.aborts) a.abort();
    await Promise.allSettled([...this.running.values()]);
    await this.agent.destroy().catch(() => undefined);
  }

  // --- internals -----------------------------------------------------------

  private assertLive(): void {
    if (this.disposed) throw new AppError('LIFECYCLE_DISPOSED', 'the console is shutting down');
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

  private sleepLevel(target: LifecycleTargetConfig): 0 | 1 | 2 | null {
    const host = this.deps.fleet.snapshot().hosts.find((h) => h.label === target.label);
    return sleepLevelOf(host?.services.find((s) => s.id === target.serviceId)?.sleep);
  }

  /** What the audit rows record as before/after. */
  private observe(target: LifecycleTargetConfig): Record<string, unknown> {
    const host = this.deps.fleet.snapshot().hosts.find((h) => h.label === target.label);
    const svc = host?.services.find((s) => s.id === target.serviceId);
    return { sleep: svc?.sleep ?? 'unknown', health: svc?.health ?? 'unknown', vramUsedMiB: hostVram(this.deps.fleet, target.label)?.usedMiB ?? null, host: host?.state ?? 'unknown' };
  }

  private describe(kind: ActionKind, steps: DriverStep[], target: LifecycleTargetConfig): PlannedStep[] {
    const out: PlannedStep[] = [];
    if (kind !== 'wake') out.push({ kind: 'drain', text: `drain ${target.upstream} in the proxy: stop admitting, let in-flight requests finish for up to ${Math.round(this.opts.drainDeadlineMs / 1000)} s, then cut the rest`, body: null });
    for (const s of steps) out.push({ kind: s.kind, text: stepText(s, target), body: s.kind === 'http' ? s.body : null });
    out.push({ kind: 'verify', text: verifyText(kind, driverFor(target)), body: null });
    return out;
  }

  private checkDecision(id: string, nonce: string): ActionRecord {
    this.sweep();
    const rec = this.require(id);
    if (rec.view.state !== 'proposed') {
      if (sameSecret(nonce, rec.issuedNonce)) {
        throw new AppError(LifecycleErrorCode.NONCE_USED, `the nonce of ${id} was already used (the action is ${rec.view.state})`, { details: { id, state: rec.view.state } });
      }
      throw new AppError(LifecycleErrorCode.ALREADY_DECIDED, `${id} is ${rec.view.state}, not waiting for a decision`, { details: { id, state: rec.view.state } });
    }
    if (!sameSecret(nonce, rec.issuedNonce)) {
      throw new AppError(LifecycleErrorCode.BAD_NONCE, `the nonce does not match the one issued with ${id}; reload the proposal`, { details: { id } });
    }
    return rec;
  }

  private activeStanding(upstream: string, kind: ActionKind): StandingApprovalView | null {
    const now = this.deps.clock.now();
    return this.repo.listStanding().find((s) => s.upstream === upstream && s.kind === kind && s.revokedAt === null && s.expiresAt > now) ?? null;
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
    rec.view = { ...rec.view, state: 'approved', nonce: null, decidedAt: now, approver, standingApprovalId: standing?.id ?? null };
    this.repo.save(rec);
    this.active.set(target.upstream, rec.view.id);
    const actor = standing ? `standing:${standing.id}` : `operator:${approver.osUser}@${approver.via}`;
    if (standing) {
      const used = { ...standing, uses: standing.uses + 1 };
      this.repo.saveStanding(used);
      this.deps.store.audit.append({ type: 'lifecycle.standing.used', actor: standing.grantedBy, target: target.upstream, payload: { standingId: standing.id, actionId: rec.view.id, kind: rec.view.kind, uses: used.uses } });
      this.deps.onStanding(used);
    }
    this.audit('lifecycle.approved', actor, rec, { approver, standingApprovalId: standing?.id ?? null, steps: rec.view.steps.map((s) => s.text) });
    this.deps.onAction(rec.view);
    this.deps.notify({ key: `action:${rec.view.id}`, severity: 'info', title: `Approved: ${rec.view.kind} ${rec.view.upstream}`, body: `by ${approver.displayName} (${approver.osUser})`, route: 'actions' });
    const run = this.execute(rec, target).finally(() => {
      this.running.delete(rec.view.id);
      if (this.active.get(target.upstream) === rec.view.id) this.active.delete(target.upstream);
    });
    this.running.set(rec.view.id, run);
    fireAndForget(run, this.deps.logger, `lifecycle action ${rec.view.id}`);
    return rec.view;
  }

  private progress(rec: ActionRecord, text: string, patch: Partial<ActionView> = {}): void {
    rec.view = { ...rec.view, ...patch, progress: text };
    this.repo.save(rec);
    this.deps.onAction(rec.view);
  }

  private async execute(rec: ActionRecord, target: LifecycleTargetConfig): Promise<ActionView> {
    const { clock } = this.deps;
    const abort = new AbortController();
    this.aborts.add(abort);
    const driver: LifecycleDriver = driverFor(target);
    const io: DriverIo = httpIo(target, this.deps.fleet, this.agent);
    const upstream = target.upstream;
    const runner = `lifecycle:${rec.view.id}`;
    const before = this.observe(target);
    const vramBefore = hostVram(this.deps.fleet, target.label)?.usedMiB ?? null;
    let drained = false;
    try {
      rec.view = { ...rec.view, state: 'running', startedAt: clock.now() };
      this.progress(rec, 'starting');
      this.audit('lifecycle.running', runner, rec, { before });

      // Re-plan against the server as it is now: if that is not what was approved, stop.
      const steps = driver.plan(rec.view.kind, { sleepLevel: this.sleepLevel(target) ?? rec.planLevel });
      const approvedCalls = rec.view.steps.filter((s) => s.kind === 'http' || s.kind === 'ssh').map((s) => s.text);
      const nowCalls = steps.map((s) => stepText(s, target));
      if (JSON.stringify(approvedCalls) !== JSON.stringify(nowCalls)) {
        throw new AppError(LifecycleErrorCode.PLAN_CHANGED, 'the server changed since approval (the calls would differ from what was approved); propose again', {
          details: { approved: approvedCalls, now: nowCalls },
        });
      }

      if (rec.view.kind !== 'wake' && this.deps.proxy) {
        this.progress(rec, `draining ${upstream}`);
        drained = true;
        const r = await this.deps.proxy.drain(upstream, { deadlineMs: this.opts.drainDeadlineMs }, runner);
        this.progress(rec, `drained: ${r.drained} finished, ${r.aborted} cut`, { drained: r.drained, aborted: r.aborted });
        this.audit('lifecycle.drained', runner, rec, { drained: r.drained, aborted: r.aborted });
      }

      const stepsStart = clock.now();
      const deadlineAt = stepsStart + this.opts.verifyDeadlineMs(rec.view.expectedDowntimeMs);
      for (const [i, step] of steps.entries()) {
        const text = stepText(step, target);
        this.progress(rec, `step ${i + 1}/${steps.length}: ${text}`);
        const t0 = clock.now();
        const remaining = Math.max(1_000, deadlineAt - t0);
        const outcome = await this.runStep(step, target, io, remaining, abort.signal);
        this.audit('lifecycle.step', runner, rec, { index: i + 1, step: text, ...outcome.record, ms: clock.now() - t0 });
        if (!outcome.ok) throw new AppError(LifecycleErrorCode.STEP_FAILED, `step ${i + 1} (${text}) failed: ${outcome.message}`, { details: outcome.record });
      }
      const stepsEndedAt = clock.now();

      this.progress(rec, 'verifying');
      const result = await verifyAction({
        kind: rec.view.kind,
        target,
        driver,
        io,
        fleet: this.deps.fleet,
        clock,
        vramBeforeMiB: vramBefore,
        stepsEndedAt,
        deadlineAt: Math.max(deadlineAt, stepsEndedAt + 2_000),
        pollMs: this.opts.pollMs,
        vramMinDeltaMiB: this.opts.vramMinDeltaMiB,
        signal: abort.signal,
      });
      const durationMs = clock.now() - stepsStart;
      if (result.ok) {
        rec.durationMs = durationMs;
        this.finish(rec, 'verified', { observed: result.observed }, runner, { before, durationMs });
      } else {
        this.finish(
          rec,
          'failed',
          { observed: result.observed, error: `not verified within ${Math.round((clock.now() - stepsStart) / 100) / 10} s: ${result.observed.filter((l) => l.startsWith('✗')).join('; ')}` },
          runner,
          { before, durationMs },
        );
      }
    } catch (err) {
      const e = toAppError(err);
      this.finish(rec, 'failed', { error: `${e.code}: ${e.message}` }, runner, { before, code: e.code });
    } finally {
      this.aborts.delete(abort);
      if (drained && this.deps.proxy) {
        try {
          this.deps.proxy.resume(upstream, runner);
          this.audit('lifecycle.resumed', runner, rec, {});
        } catch (err) {
          this.deps.logger.warn('could not resume admission', { upstream, error: toAppError(err).message });
        }
      }
    }
    return rec.view;
  }

  private async runStep(
    step: DriverStep,
    target: LifecycleTargetConfig,
    io: DriverIo,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<{ ok: boolean; message: string; record: Record<string, unknown> }> {
    if (signal.aborted) return { ok: false, message: 'cancelled (console shutting down)', record: { cancelled: true } };
    try {
      if (step.kind === 'ssh') {
        const r = await this.deps.fleet.exec(target.label, step.command, { timeoutMs, maxOutputBytes: 64 * 1024, signal });
        const tail = (r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ');
        return { ok: r.exitCode === 0, message: `exited ${r.exitCode ?? r.signal}${tail ? `: ${tail}` : ''}`, record: { exitCode: r.exitCode, signal: r.signal, output: tail.slice(0, 500) } };
      }
      const r = await io.http(step.method, step.url ? { url: step.url } : { path: step.path ?? '' }, step.body, timeoutMs);
      const ok = r.status >= 200 && r.status < 300;
      return { ok, message: `HTTP ${r.status} ${r.text.slice(0, 200)}`, record: { status: r.status, body: r.text.slice(0, 300) } };
    } catch (err) {
      const e = toAppError(err);
      return { ok: false, message: e.message, record: { code: e.code, error: e.message } };
    }
  }

  private finish(rec: ActionRecord, state: ActionView['state'], patch: Partial<ActionView>, actor: string, extra: Record<string, unknown> = {}): void {
    const now = this.deps.clock.now();
    const decided = state === 'rejected' || state === 'expired';
    rec.view = {
      ...rec.view,
      ...patch,
      state,
      nonce: null,
      progress: null,
      decidedAt: decided ? now : rec.view.decidedAt,
      finishedAt: now,
    };
    this.repo.save(rec);
    const target = this.deps.targets().find((t) => t.upstream === rec.view.upstream);
    this.audit(`lifecycle.${state}`, actor, rec, {
      ...extra,
      after: target ? this.observe(target) : null,
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

  private audit(type: string, actor: string, rec: ActionRecord, payload: Record<string, unknown>): void {
    this.deps.store.audit.append({ type, actor, target: rec.view.upstream, payload: { actionId: rec.view.id, kind: rec.view.kind, state: rec.view.state, ...payload } });
  }

  private sweep(): void {
    const now = this.deps.clock.now();
    for (const rec of this.repo.inStates(['proposed'])) {
      if (rec.view.expiresAt <= now) this.finish(rec, 'expired', {}, 'system', { reason: 'no decision before the proposal expired' });
    }
    for (const s of this.repo.listStanding()) {
      if (s.revokedAt === null && s.expiresAt <= now && s.expiresAt > now - this.opts.sweepIntervalMs * 2) this.deps.onStanding(s);
    }
  }
}

function effectOf(kind: ActionKind, target: LifecycleTargetConfig, level: 0 | 1 | 2 | null): string {
  switch (kind) {
    case 'sleep':
      return target.sleepLevel === 1
        ? `${target.model} sleeps at level 1: weights move to host RAM, the KV cache is dropped, GPU memory is freed; requests get 503 model_sleeping until it is woken`
        : `${target.model} sleeps at level 2: weights and KV cache are dropped, GPU memory is freed; waking reloads the weights from disk`;
    case 'offload':
      return `${target.model} is offloaded (level 2): weights and KV cache are dropped and GPU memory is freed; waking reloads the weights from disk (slow)`;
    case 'wake':
      return level === 1
        ? `${target.model} wakes from level 1: weights come back from host RAM and it serves again`
        : `${target.model} wakes the long way (level 2 or unknown): weights, reload_weights, then the KV cache; it serves again`;
    case 'restart':
      return `${target.model} on ${target.label} is restarted: the process is stopped and started; it is unavailable until it has loaded again`;
  }
}

function verifyText(kind: ActionKind, driver: LifecycleDriver): string {
  const parts = [kind === 'sleep' || kind === 'offload' ? 'engine reports asleep' : 'engine reports awake', 'GET /health answers 200'];
  if (kind === 'sleep' || kind === 'offload') parts.push('VRAM in use falls (nvidia-smi)');
  if (kind === 'wake') parts.push('VRAM in use rises (nvidia-smi)');
  if (kind === 'wake' || kind === 'restart') parts.push('a short completion probe answers sensibly (not gibberish)');
  return `verify (${driver.name}): ${parts.join('; ')}; then re-open admission`;
}

export type { TimingVariant };
