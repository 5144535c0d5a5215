// Running an approved action: re-plan and refuse if the calls changed, drain
// (the proxy, then direct tunnel clients at the engine, within one deadline),
// the planned calls exactly as approved, verify, resume admission; each step
// is audited. Owns the router URLs' clients and the cancel signal of each run.
import type { ActionView } from '../../../src-preload/contract/index.js';
import { AppError, DisposableStore, toAppError, type Clock, type Logger, type OnPremGuard } from '../base/index.js';
import type { FleetState } from '../fleet/index.js';
import { driverFor, restartFailureHint, stepText, type DriverIo, type DriverStep, type LifecycleDriver, type LifecycleTargetConfig } from './drivers/index.js';
import { errorText } from './drivers/llama-checks.js';
import { LifecycleErrorCode } from './errors.js';
import { UrlClients, httpIo } from './io.js';
import { waitForDirectClients } from './direct-drain.js';
import { freshProgress, stepIndexes, withStep } from './interruption.js';
import type { ActionJournal } from './journal.js';
import { observe, sleepLevel, sleepLevelIn } from './observe.js';
import type { LifecycleFleet, LifecycleProxy } from './ports.js';
import type { ActionRecord } from './repository.js';
import { hostVram, verificationChecks, verifyAction, type VerifyResult } from './verify.js';

export interface RunnerDeps {
  clock: Clock;
  logger: Logger;
  fleet: LifecycleFleet;
  proxy: LifecycleProxy | null;
  journal: ActionJournal;
  drainDeadlineMs: number;
  verifyDeadlineMs: (expectedMs: number) => number;
  pollMs: number;
  vramMinDeltaMiB: number;
  /** How long after a restart command the old process may still hold the port before it is a ghost. */
  settleMs: number;
  /** An engine request count older than this is stale (a few fleet poll intervals). */
  engineMaxAgeMs: number;
  /** Counts (and refuses) calls outside loopback and the tunnels. */
  offPrem?: OnPremGuard | null;
}

interface StepOutcome {
  ok: boolean;
  message: string;
  record: Record<string, unknown>;
}

const BEFORE_TIMEOUT_MS = 5_000;
/** Verify now: how long the checks may take to hold (they are retried within it). */
const CHECK_WINDOW_MS = 5_000;
/** How long a verified sleep waits for a fleet tick (what the proxy learns from) to show it before admission re-opens. */
const FLEET_CATCH_UP_MS = 5_000;

export class ActionRunner {
  /** Clients of the router URLs drivers call; services are reached through the fleet's clients. */
  private readonly urls: UrlClients;
  private readonly aborts = new Set<AbortController>();

  constructor(private readonly deps: RunnerDeps) {
    this.urls = new UrlClients(deps.offPrem ?? null);
  }

  /** Runs `rec` (approved) through to verified or failed, updating it as it goes. */
  async run(rec: ActionRecord, target: LifecycleTargetConfig): Promise<ActionView> {
    const { clock, journal } = this.deps;
    const abort = new AbortController();
    this.aborts.add(abort);
    const driver: LifecycleDriver = driverFor(target);
    const io: DriverIo = httpIo(target, this.deps.fleet, this.urls);
    const upstream = target.upstream;
    const runner = `lifecycle:${rec.view.id}`;
    const before = observe(this.deps.fleet, target);
    const vramBefore = hostVram(this.deps.fleet, target.label)?.usedMiB ?? null;
    let drained = false;
    const at = stepIndexes(rec.view);
    try {
      rec.view = { ...rec.view, state: 'running', startedAt: clock.now(), progress: 'starting', stepProgress: freshProgress(rec.view) };
      journal.record(rec, 'lifecycle.running', runner, { before });

      const steps = this.replan(rec, target, driver);

      if (rec.view.kind !== 'wake') {
        // One deadline for both halves: the proxy's own requests, then direct tunnel clients at the engine.
        const deadlineAt = clock.now() + this.deps.drainDeadlineMs;
        let r: { drained: number; aborted: number } | null = null;
        if (this.deps.proxy) {
          journal.progress(rec, `draining ${upstream}`, withStep(rec.view, at.drain, 'started'));
          drained = true;
          r = await this.deps.proxy.drain(upstream, { deadlineMs: this.deps.drainDeadlineMs, purpose: rec.view.kind }, runner);
          journal.progress(rec, `drained: ${r.drained} finished, ${r.aborted} cut; waiting for direct tunnel clients at the engine`, { drained: r.drained, aborted: r.aborted });
        } else {
          journal.progress(rec, 'waiting for direct tunnel clients at the engine', withStep(rec.view, at.drain, 'started'));
        }
        const direct = await waitForDirectClients({
          clock,
          fleet: this.deps.fleet,
          target,
          deadlineAt,
          readAfter: r && r.drained + r.aborted > 0 ? clock.now() : null,
          pollMs: this.deps.pollMs,
          maxAgeMs: this.deps.engineMaxAgeMs,
          signal: abort.signal,
        });
        const proxyPart = r ? `drained: ${r.drained} finished, ${r.aborted} cut; ` : '';
        rec.view = { ...rec.view, progress: `${proxyPart}${direct.text}`, directAtDrain: direct, ...withStep(rec.view, at.drain, 'done') };
        journal.record(rec, 'lifecycle.drained', runner, { drained: r?.drained ?? null, aborted: r?.aborted ?? null, direct });
      }

      // What the checks compare against afterwards (who holds the port), read at the last moment before the calls.
      const checks = verificationChecks(driver, rec.view.kind, target);
      for (const c of checks) {
        if (!c.before) continue;
        journal.progress(rec, `before the calls: ${c.name}`);
        await c.before(io, BEFORE_TIMEOUT_MS);
      }

      const stepsStart = clock.now();
      const deadlineAt = stepsStart + this.deps.verifyDeadlineMs(rec.view.expectedDowntimeMs);
      await this.runSteps(rec, steps, { target, io, deadlineAt, runner, signal: abort.signal, indexes: at.calls });
      const stepsEndedAt = clock.now();

      journal.progress(rec, 'verifying', withStep(rec.view, at.verify, 'started'));
      const result = await verifyAction({
        kind: rec.view.kind,
        target,
        driver,
        io,
        checks,
        settleMs: this.deps.settleMs,
        fleet: this.deps.fleet,
        clock,
        vramBeforeMiB: vramBefore,
        stepsEndedAt,
        deadlineAt: Math.max(deadlineAt, stepsEndedAt + 2_000),
        pollMs: this.deps.pollMs,
        vramMinDeltaMiB: this.deps.vramMinDeltaMiB,
        // A few fleet polls: a GPU reading taken after the server passed its checks is due by then.
        memoryWaitMs: this.deps.engineMaxAgeMs,
        onProgress: (text) => journal.progress(rec, text),
        signal: abort.signal,
      });
      const durationMs = clock.now() - stepsStart;
      if (result.ok) {
        rec.durationMs = durationMs;
        journal.finish(rec, 'verified', { observed: result.observed, ...withStep(rec.view, at.verify, 'done') }, runner, { before, durationMs });
        // The proxy tells asleep from awake by the fleet's view: re-open admission only once that view has
        // caught up, or a request held through the drain reaches the sleeping engine instead of an honest 503.
        if (drained && (rec.view.kind === 'sleep' || rec.view.kind === 'offload')) await this.fleetSeesAsleep(target, abort.signal);
      } else {
        // A check that says waiting is pointless (its code), or the deadline with what was still not right.
        const e = result.error;
        const error = e ? `${e.code}: ${e.message}` : `not verified within ${Math.round((clock.now() - stepsStart) / 100) / 10} s: ${result.observed.filter((l) => l.startsWith('✗')).join('; ')}`;
        const extra = e ? { before, durationMs, code: e.code, details: e.details } : { before, durationMs };
        journal.finish(rec, 'failed', { observed: result.observed, error, ...withStep(rec.view, at.verify, 'failed') }, runner, extra);
      }
    } catch (err) {
      const e = toAppError(err);
      journal.finish(rec, 'failed', { error: `${e.code}: ${e.message}` }, runner, { before, code: e.code });
    } finally {
      this.aborts.delete(abort);
      if (drained && this.deps.proxy) {
        try {
          this.deps.proxy.resume(upstream, runner);
          journal.audit('lifecycle.resumed', runner, rec, {});
        } catch (err) {
          this.deps.logger.warn('could not resume admission', { upstream, error: toAppError(err).message });
        }
      }
    }
    return rec.view;
  }

  /** Re-plan against the server as it is now: if that is not what was approved, stop. */
  private replan(rec: ActionRecord, target: LifecycleTargetConfig, driver: LifecycleDriver): DriverStep[] {
    const steps = driver.plan(rec.view.kind, { sleepLevel: sleepLevel(this.deps.fleet, target) ?? rec.planLevel });
    const approvedCalls = rec.view.steps.filter((s) => s.kind === 'http' || s.kind === 'ssh').map((s) => s.text);
    const nowCalls = steps.map((s) => stepText(s, target));
    if (JSON.stringify(approvedCalls) !== JSON.stringify(nowCalls)) {
      throw new AppError(LifecycleErrorCode.PLAN_CHANGED, 'the server changed since approval (the calls would differ from what was approved); propose again', {
        details: { approved: approvedCalls, now: nowCalls },
      });
    }
    return steps;
  }

  /**
   * The planned calls, in order, each audited; the first that fails ends the run. Each call's progress is
   * saved as started before it is sent, and as done or failed with its audit row, so a console that stops
   * in between knows that call's outcome is unknown (`indexes`: where each call sits in the view's steps).
   */
  private async runSteps(
    rec: ActionRecord,
    steps: readonly DriverStep[],
    at: { target: LifecycleTargetConfig; io: DriverIo; deadlineAt: number; runner: string; signal: AbortSignal; indexes: readonly number[] },
  ): Promise<void> {
    const { clock, journal } = this.deps;
    for (const [i, step] of steps.entries()) {
      const text = stepText(step, at.target);
      const index = at.indexes[i] ?? -1;
      journal.progress(rec, `step ${i + 1}/${steps.length}: ${text}`, withStep(rec.view, index, 'started'));
      const t0 = clock.now();
      const remaining = Math.max(1_000, at.deadlineAt - t0);
      const outcome = await this.runStep(step, at.target, at.io, remaining, at.signal);
      rec.view = { ...rec.view, ...withStep(rec.view, index, outcome.ok ? 'done' : 'failed') };
      journal.record(rec, 'lifecycle.step', at.runner, { index: i + 1, step: text, ...outcome.record, ms: clock.now() - t0 });
      if (!outcome.ok) throw new AppError(LifecycleErrorCode.STEP_FAILED, `step ${i + 1} (${text}) failed: ${outcome.message}`, { details: outcome.record });
    }
  }

  /**
   * Until the fleet publishes a state showing `target` asleep (the same object the proxy routes by, given
   * to it first), for at most FLEET_CATCH_UP_MS; a fleet without the event is polled.
   */
  private fleetSeesAsleep(target: LifecycleTargetConfig, signal: AbortSignal): Promise<void> {
    const { clock, fleet, pollMs } = this.deps;
    const asleep = (state: FleetState) => {
      const level = sleepLevelIn(state, target);
      return level === 1 || level === 2;
    };
    return new Promise<void>((resolve) => {
      const store = new DisposableStore();
      const done = () => {
        signal.removeEventListener('abort', done);
        void store.dispose();
        resolve();
      };
      if (signal.aborted) return done();
      signal.addEventListener('abort', done, { once: true });
      store.add(clock.setTimeout(done, FLEET_CATCH_UP_MS));
      if (fleet.onDidChange) {
        store.add(fleet.onDidChange((state) => asleep(state) && done()));
      } else {
        store.add(clock.setInterval(() => asleep(fleet.state()) && done(), Math.min(pollMs, 100)));
        if (asleep(fleet.state())) done();
      }
    });
  }

  /**
   * Verify now, for an interrupted action: the checks of its kind against the service as it is, retried for a
   * few seconds. Reads only (sleep state, /health, a short completion probe, who holds the port); nothing
   * before the run is known, so nothing is compared with it.
   */
  async check(rec: ActionRecord, target: LifecycleTargetConfig): Promise<VerifyResult> {
    const { clock } = this.deps;
    const abort = new AbortController();
    this.aborts.add(abort);
    try {
      const now = clock.now();
      return await verifyAction({
        kind: rec.view.kind,
        target,
        driver: driverFor(target),
        io: httpIo(target, this.deps.fleet, this.urls),
        fleet: this.deps.fleet,
        clock,
        vramBeforeMiB: null,
        stepsEndedAt: now,
        deadlineAt: now + CHECK_WINDOW_MS,
        pollMs: this.deps.pollMs,
        vramMinDeltaMiB: this.deps.vramMinDeltaMiB,
        settleMs: 0,
        memoryWaitMs: this.deps.engineMaxAgeMs,
        signal: abort.signal,
      });
    } finally {
      this.aborts.delete(abort);
    }
  }

  /** Cancels every run in flight (shutdown): steps not started are skipped, verification stops waiting. */
  abortAll(): void {
    for (const a of this.aborts) a.abort();
  }

  /** Closes the router URLs' clients, once the runs have ended. */
  async close(): Promise<void> {
    await this.urls.close();
  }

  private async runStep(step: DriverStep, target: LifecycleTargetConfig, io: DriverIo, timeoutMs: number, signal: AbortSignal): Promise<StepOutcome> {
    if (signal.aborted) return { ok: false, message: 'cancelled (console shutting down)', record: { cancelled: true } };
    try {
      if (step.kind === 'ssh') {
        const r = await this.deps.fleet.exec(target.label, step.command, { timeoutMs, maxOutputBytes: 64 * 1024, signal });
        const tail = (r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ');
        const hint = r.exitCode === 0 ? null : restartFailureHint(target, `${r.stderr}\n${r.stdout}`);
        return {
          ok: r.exitCode === 0,
          message: `exited ${r.exitCode ?? r.signal}${tail ? `: ${tail}` : ''}${hint ? ` — ${hint}` : ''}`,
          record: { exitCode: r.exitCode, signal: r.signal, output: tail.slice(0, 500), ...(hint ? { hint } : {}) },
        };
      }
      const r = await io.http(step.method, step.url ? { url: step.url } : { path: step.path ?? '' }, step.body, timeoutMs);
      const ok = r.status >= 200 && r.status < 300;
      return { ok, message: `HTTP ${r.status} ${ok ? r.text.slice(0, 200) : errorText(r.text)}`, record: { status: r.status, body: r.text.slice(0, 300) } };
    } catch (err) {
      const e = toAppError(err);
      return { ok: false, message: e.message, record: { code: e.code, error: e.message } };
    }
  }
}
