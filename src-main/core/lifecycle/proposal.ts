// What a proposal says before anyone decides: the planned steps in words
// (drain, the driver's calls, verify), the expected effect and downtime, and
// the record it is saved as (with the nonce issued for it).
import { randomBytes } from 'node:crypto';
import type { ActionKind, ActionLoad, ActionView, PlannedStep } from '../../../src-preload/contract/index.js';
import { AppError } from '../base/index.js';
import { DESTRUCTIVE } from './approval.js';
import { LifecycleErrorCode } from './errors.js';
import { driverFor, stepText, type DriverStep, type LifecycleDriver, type LifecycleTargetConfig } from './drivers/index.js';
import { verificationText } from './verify.js';
import type { ActionRecord } from './repository.js';
import type { TimingVariant } from './timing.js';

const KINDS: readonly ActionKind[] = ['wake', 'sleep', 'offload', 'restart'];

/** The kinds a service's driver can perform. */
export const supportedKinds = (driver: LifecycleDriver): ActionKind[] => KINDS.filter((k) => driver.supports(k));

/** The kinds it cannot, each with the sentence why. */
export const unavailableKinds = (driver: LifecycleDriver): { kind: ActionKind; reason: string }[] =>
  KINDS.flatMap((kind) => {
    const reason = driver.unavailable(kind);
    return reason === null ? [] : [{ kind, reason }];
  });

export interface ProposalFacts {
  kind: ActionKind;
  proposer: string;
  reason?: string;
  target: LifecycleTargetConfig;
  driver: LifecycleDriver;
  /** The service's sleep level now (what the steps were planned for). */
  level: 0 | 1 | 2 | null;
  steps: DriverStep[];
  variant: TimingVariant;
  timing: { expectedMs: number; basis: string };
  /** The proxy's own counts (the view's inFlight / queued). */
  load: { inFlight: number; queued: number };
  /** Proxy and engine counts together (direct tunnel clients too). */
  both: ActionLoad;
  nonce: string;
  now: number;
  ttlMs: number;
  drainDeadlineMs: number;
}

export function newProposal(f: ProposalFacts): ActionRecord {
  const view: ActionView = {
    id: `act_${randomBytes(9).toString('base64url')}`,
    kind: f.kind,
    upstream: f.target.upstream,
    label: f.target.label,
    serviceId: f.target.serviceId,
    model: f.target.model,
    driver: f.driver.name,
    state: 'proposed',
    proposer: f.proposer,
    reason: f.reason ?? `requested by ${f.proposer}`,
    repeats: 0,
    nonce: f.nonce,
    requiresTypedLabel: DESTRUCTIVE.has(f.kind),
    expectedEffect: f.driver.effect?.(f.kind) ?? effectOf(f.kind, f.target, f.level),
    expectedDowntimeMs: f.timing.expectedMs,
    downtimeBasis: f.timing.basis,
    steps: describe(f.kind, f.steps, f.target, f.drainDeadlineMs),
    inFlight: f.load.inFlight,
    queued: f.load.queued,
    load: f.both,
    createdAt: f.now,
    expiresAt: f.now + f.ttlMs,
    decidedAt: null,
    decision: null,
    approver: null,
    standingApprovalId: null,
    rejectedBy: null,
    rejectReason: null,
    withdrawnBy: null,
    withdrawReason: null,
    startedAt: null,
    finishedAt: null,
    progress: null,
    drained: null,
    aborted: null,
    observed: [],
    error: null,
  };
  return { view, issuedNonce: f.nonce, variant: f.variant, planLevel: f.level, durationMs: null };
}

function describe(kind: ActionKind, steps: DriverStep[], target: LifecycleTargetConfig, drainDeadlineMs: number): PlannedStep[] {
  const out: PlannedStep[] = [];
  if (kind !== 'wake') {
    const s = Math.round(drainDeadlineMs / 1000);
    out.push({
      kind: 'drain',
      text: `drain ${target.upstream} in the proxy: stop admitting, let in-flight requests finish for up to ${s} s, then cut the rest; within the same ${s} s, wait for direct tunnel clients until the engine reports none running`,
      body: null,
    });
  }
  for (const s of steps) out.push({ kind: s.kind, text: stepText(s, target), body: s.kind === 'http' ? s.body : null });
  out.push({ kind: 'verify', text: verificationText(driverFor(target), kind, target), body: null });
  return out;
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

/**
 * A change that would do nothing is refused before it becomes a proposal (the
 * UI offers only valid ones; the CLI, the API and policies are held to the
 * same): wake needs a sleeping service, sleep an awake one, offload one not
 * offloaded yet (level 1 may go on to level 2). An unknown state (host down,
 * never read) does not refuse: the runner checks.
 */
export function assertApplicable(upstream: string, kind: ActionKind, level: 0 | 1 | 2 | null): void {
  if (level === null || kind === 'restart') return;
  if (kind === 'wake' && level === 0) {
    throw new AppError(LifecycleErrorCode.NOT_APPLICABLE, `${upstream} is awake: there is nothing to wake`, { details: { upstream, kind, sleepLevel: level } });
  }
  if ((kind === 'sleep' && level > 0) || (kind === 'offload' && level === 2)) {
    throw new AppError(LifecycleErrorCode.NOT_APPLICABLE, `${upstream} is already asleep (level ${level}): there is nothing to ${kind}`, { details: { upstream, kind, sleepLevel: level } });
  }
}
