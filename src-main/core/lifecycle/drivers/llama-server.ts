import type { ActionKind } from '../../../../src-preload/contract/index.js';
import { AppError } from '../../base/index.js';
import { LifecycleErrorCode } from '../errors.js';
import { chatProbeCheck, llamaHealthCheck, llamaPropsCheck } from './llama-checks.js';
import { portOwnerCheck } from './port-owner.js';
import { restartStep, restartUnavailable } from './restart-command.js';
import { withAvailability, type DriverCheck, type DriverStep, type LifecycleDriver, type LifecycleTargetConfig } from './types.js';

/** How the restart is done, in words, for the proposal. */
export function restartHow(target: LifecycleTargetConfig): string {
  switch (target.restartSource) {
    case 'systemd':
      return 'its systemd unit';
    case 'compose':
      return 'its compose service';
    default:
      return 'its restart command';
  }
}

/** Not a llama-server service: nothing of this driver applies. */
export function notLlama(target: LifecycleTargetConfig, driver: string): string | null {
  return target.kind === 'llama-server' ? null : `the ${driver} driver is for llama-server services; ${target.upstream} is ${target.kind}`;
}

/**
 * llama-server has no sleep endpoint: it sleeps by itself with
 * --sleep-idle-seconds and wakes on the next request (state from /props
 * is_sleeping), so the console offers only a restart, by the unit, compose
 * service or command configured, verified by the port's owner changing,
 * /health, /props and one token of chat.
 */
export function llamaServerDriver(target: LifecycleTargetConfig): LifecycleDriver {
  const unavailable = (kind: ActionKind): string | null => {
    const wrong = notLlama(target, 'llama-server');
    if (wrong) return wrong;
    switch (kind) {
      case 'restart':
        return restartUnavailable(target);
      case 'sleep':
      case 'wake':
        return 'llama-server sleeps by itself after --sleep-idle-seconds without requests and wakes on the next one; there is no endpoint to ask it (its state is read from /props is_sleeping). To load and unload models on request, run it in router mode (lifecycle.driver: llama-router)';
      case 'offload':
        return 'llama-server cannot drop its weights on request; in router mode (lifecycle.driver: llama-router) sleep unloads the model';
    }
  };
  return withAvailability({
    name: 'llama-server',
    unavailable,
    plan(kind: ActionKind): DriverStep[] {
      const why = unavailable(kind);
      if (why) throw new AppError(LifecycleErrorCode.UNSUPPORTED_ACTION, `${target.upstream}: ${why}`, { details: { upstream: target.upstream, kind, driver: 'llama-server', reason: why } });
      return [restartStep(target)];
    },
    async readSleeping(io, timeoutMs) {
      const r = await io.http('GET', { path: '/props' }, null, timeoutMs);
      if (r.status !== 200) return null;
      const body = JSON.parse(r.text) as { is_sleeping?: unknown };
      return typeof body.is_sleeping === 'boolean' ? body.is_sleeping : false;
    },
    checks(kind: ActionKind): DriverCheck[] {
      if (kind !== 'restart') return [];
      return [portOwnerCheck(target), llamaHealthCheck(), llamaPropsCheck(), chatProbeCheck(target.model, ['health', 'props'])];
    },
    effect(kind: ActionKind): string | null {
      if (kind !== 'restart') return null;
      return `llama-server on ${target.label} (${target.model}) is stopped and started by ${restartHow(target)}: unavailable until it has loaded the model again (/health answers 503 "Loading model" meanwhile)`;
    },
  });
}
