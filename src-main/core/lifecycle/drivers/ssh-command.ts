import type { ActionKind } from '../../../../src-preload/contract/index.js';
import { AppError } from '../../base/index.js';
import { LifecycleErrorCode } from '../errors.js';
import { restartStep, restartUnavailable } from './restart-command.js';
import { withAvailability, type DriverStep, type LifecycleDriver, type LifecycleTargetConfig } from './types.js';

/** Restart only, by the SSH command template; no sleep state. */
export function sshCommandDriver(target: LifecycleTargetConfig): LifecycleDriver {
  return withAvailability({
    name: 'ssh-command',
    unavailable: (kind) => (kind === 'restart' ? restartUnavailable(target) : `the ssh-command driver only restarts ${target.upstream} (by its command); it cannot ${kind}`),
    plan(kind: ActionKind): DriverStep[] {
      if (kind !== 'restart') {
        throw new AppError(LifecycleErrorCode.UNSUPPORTED_ACTION, `the ssh-command driver of ${target.upstream} only restarts`, {
          details: { upstream: target.upstream, kind, driver: 'ssh-command' },
        });
      }
      return [restartStep(target)];
    },
    readSleeping: () => Promise.resolve(null),
  });
}
