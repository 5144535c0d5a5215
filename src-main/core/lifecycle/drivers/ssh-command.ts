import { SERVICE_KIND_NAME, type ActionKind } from '../../../../src-preload/contract/index.js';
import { AppError } from '../../base/index.js';
import { LifecycleErrorCode } from '../errors.js';
import { kindRestartChecks } from './kind-checks.js';
import { restartStep, restartUnavailable } from './restart-command.js';
import { withAvailability, type DriverCheck, type DriverStep, type LifecycleDriver, type LifecycleTargetConfig } from './types.js';

/** Kinds the console has no wake/sleep driver for: ssh-command is their default, and restart is all it offers. */
const NO_DRIVER_KINDS = new Set<LifecycleTargetConfig['kind']>(['sglang', 'tei', 'openai']);

/** Why `kind` cannot be done by this driver: the kind named when the server has no driver of its own. */
function cannot(target: LifecycleTargetConfig, kind: ActionKind): string {
  if (NO_DRIVER_KINDS.has(target.kind)) {
    return `${target.upstream} is kind ${target.kind}: the console has no driver to ${kind} a ${SERVICE_KIND_NAME[target.kind]}; it can only restart it (by its restartCommand, systemd unit or compose service)`;
  }
  return `the ssh-command driver only restarts ${target.upstream} (by its command); it cannot ${kind}`;
}

/** Restart only, by the SSH command template; no sleep state. */
export function sshCommandDriver(target: LifecycleTargetConfig): LifecycleDriver {
  return withAvailability({
    name: 'ssh-command',
    unavailable: (kind) => (kind === 'restart' ? restartUnavailable(target) : cannot(target, kind)),
    plan(kind: ActionKind): DriverStep[] {
      if (kind !== 'restart') {
        throw new AppError(LifecycleErrorCode.UNSUPPORTED_ACTION, cannot(target, kind), {
          details: { upstream: target.upstream, kind, driver: 'ssh-command', serviceKind: target.kind },
        });
      }
      return [restartStep(target)];
    },
    readSleeping: () => Promise.resolve(null),
    // vLLM and llama-server keep the default checks (/health and a completion probe); the other kinds are checked at their own health path.
    ...(NO_DRIVER_KINDS.has(target.kind) ? { checks: (kind: ActionKind): DriverCheck[] => (kind === 'restart' ? kindRestartChecks(target) : []) } : {}),
  });
}
