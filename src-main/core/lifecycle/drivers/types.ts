import type { ActionKind, LifecycleDriverName, ServiceKind } from '../../../../src-preload/contract/index.js';
import type { AppError } from '../../base/index.js';
import type { ExecResult } from '../../ssh/index.js';

/** Where a restart command came from: written out, or built from a systemd unit or compose service. */
export type RestartSource = 'restartCommand' | 'systemd' | 'compose';

/** A model service as the lifecycle capability sees it (from config). */
export interface LifecycleTargetConfig {
  label: string;
  serviceId: string;
  upstream: string;
  kind: ServiceKind;
  model: string;
  /** Where health is read (config healthPath, else the kind's default); absent: /health. */
  healthPath?: string;
  remoteHost: string;
  remotePort: number;
  driver: LifecycleDriverName;
  routerBaseUrl: string | null;
  /** A template ({service}, {model}, {host}, {port}); literal braces doubled. */
  restartCommand: string | null;
  /** Absent: written out (older callers). */
  restartSource?: RestartSource | null;
  sleepLevel: 1 | 2;
}

/**
 * One call an action makes, fixed at proposal time and shown verbatim to the
 * approver. `path` HTTP steps go through the service's SSH tunnel; `url` steps
 * (router admin API) go to that URL.
 */
export type DriverStep =
  | { kind: 'http'; method: 'GET' | 'POST'; path: string | null; url: string | null; body: string | null }
  | { kind: 'ssh'; command: string };

export interface PlanContext {
  /** Sleep level the fleet last saw: 0 awake, 1 or 2 asleep, null unknown. */
  sleepLevel: 0 | 1 | 2 | null;
}

export interface HttpAnswer {
  status: number;
  text: string;
}

/** I/O a driver may use to read state; steps are executed by the queue, never by the driver. */
export interface DriverIo {
  /** Through the service's tunnel (`path`) or to an absolute URL. */
  http(method: 'GET' | 'POST', where: { path?: string; url?: string }, body: string | null, timeoutMs: number): Promise<HttpAnswer>;
  /** A read-only command on the service's host over SSH (`ss -ltnp`); absent where there is no SSH. */
  exec?(command: string, timeoutMs: number): Promise<ExecResult>;
}

/** What one verification check saw. */
export interface CheckOutcome {
  ok: boolean;
  line: string;
  /** Waiting will not make it right (a ghost on the port, a model the router failed to load): stop, failed with this. */
  fatal?: AppError;
}

export interface CheckTiming {
  /** Deadline for this one call. */
  timeoutMs: number;
  /** Since the action's calls ended. */
  sinceStepsMs: number;
  /** How long after the calls the old state may still be seen before it counts as final (the old pid on the port). */
  settleMs: number;
}

/**
 * One thing verification checks after the calls, retried on each poll until it
 * holds or the deadline passes.
 */
export interface DriverCheck {
  name: string;
  /** What the approver reads in the proposal's verify step. */
  text: string;
  /** Checks that must hold before this one is tried (a probe waits for health). */
  after?: readonly string[];
  /** The line when it was never tried because its `after` checks did not hold in time. */
  notAttempted?: string;
  /** Once, after the drain and before the calls: what the check compares against (who holds the port). Never throws. */
  before?(io: DriverIo, timeoutMs: number): Promise<void>;
  run(io: DriverIo, t: CheckTiming): Promise<CheckOutcome>;
}

export interface LifecycleDriver {
  readonly name: LifecycleDriverName;
  supports(kind: ActionKind): boolean;
  /** Why `kind` is not offered (a sentence the UI can show); null when it is. */
  unavailable(kind: ActionKind): string | null;
  /** The calls, verbatim. Throws LIFECYCLE_UNSUPPORTED_ACTION or LIFECYCLE_TEMPLATE_INVALID. */
  plan(kind: ActionKind, ctx: PlanContext): DriverStep[];
  /** Whether the engine sleeps now; null when this driver cannot tell. */
  readSleeping(io: DriverIo, timeoutMs: number): Promise<boolean | null>;
  /** The checks after `kind` (fresh objects per run); absent: sleep state, /health and a completion probe. */
  checks?(kind: ActionKind): DriverCheck[];
  /** What `kind` does to the service, for the proposal; absent: the generic sentence. */
  effect?(kind: ActionKind): string | null;
}

/** A driver from its availability rule: `supports` is "no reason why not". */
export function withAvailability(d: Omit<LifecycleDriver, 'supports'>): LifecycleDriver {
  return { ...d, supports: (kind) => d.unavailable(kind) === null };
}

/** The step as the confirmation dialog and the audit rows show it. */
export function stepText(step: DriverStep, target: LifecycleTargetConfig): string {
  if (step.kind === 'ssh') return step.command;
  if (step.url) return `${step.method} ${step.url}`;
  return `${step.method} http://${target.remoteHost}:${target.remotePort}${step.path ?? ''}  (on ${target.label}, through the SSH tunnel)`;
}
