import type { ActionKind, LifecycleDriverName } from '../../../../src-preload/contract/index.js';

/** A model service as the lifecycle capability sees it (from config). */
export interface LifecycleTargetConfig {
  label: string;
  serviceId: string;
  upstream: string;
  kind: 'vllm' | 'llama-server';
  model: string;
  remoteHost: string;
  remotePort: number;
  driver: LifecycleDriverName;
  routerBaseUrl: string | null;
  restartCommand: string | null;
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
}

export interface LifecycleDriver {
  readonly name: LifecycleDriverName;
  supports(kind: ActionKind): boolean;
  /** The calls, verbatim. Throws LIFECYCLE_UNSUPPORTED_ACTION or LIFECYCLE_TEMPLATE_INVALID. */
  plan(kind: ActionKind, ctx: PlanContext): DriverStep[];
  /** Whether the engine sleeps now; null when this driver cannot tell. */
  readSleeping(io: DriverIo, timeoutMs: number): Promise<boolean | null>;
}

/** The step as the confirmation dialog and the audit rows show it. */
export function stepText(step: DriverStep, target: LifecycleTargetConfig): string {
  if (step.kind === 'ssh') return step.command;
  if (step.url) return `${step.method} ${step.url}`;
  return `${step.method} http://${target.remoteHost}:${target.remotePort}${step.path ?? ''}  (on ${target.label}, through the SSH tunnel)`;
}
