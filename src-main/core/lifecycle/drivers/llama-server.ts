import type { ActionKind } from '../../../../src-preload/contract/index.js';
import { AppError } from '../../base/index.js';
import { LifecycleErrorCode } from '../errors.js';
import { restartStep } from './restart-command.js';
import type { DriverStep, LifecycleDriver, LifecycleTargetConfig } from './types.js';

/**
 * llama-server has no manual sleep endpoint (it sleeps by itself with
 * --sleep-idle-seconds and wakes on the next request), so the console can
 * only restart it, by its SSH command; the sleep state is read from /props.
 */
export function llamaServerDriver(target: LifecycleTargetConfig): LifecycleDriver {
  return {
    name: 'llama-server',
    supports: (kind) => kind === 'restart' && target.restartCommand !== null,
    plan(kind: ActionKind): DriverStep[] {
      if (kind !== 'restart') {
        throw new AppError(LifecycleErrorCode.UNSUPPORTED_ACTION, `llama-server (${target.upstream}) has no ${kind} endpoint; it sleeps and wakes by itself`, {
          details: { upstream: target.upstream, kind, driver: 'llama-server' },
        });
      }
      return [restartStep(target)];
    },
    async readSleeping(io, timeoutMs) {
      const r = await io.http('GET', { path: '/props' }, null, timeoutMs);
      if (r.status !== 200) return null;
      const body = JSON.parse(r.text) as { is_sleeping?: unknown };
      return typeof body.is_sleeping === 'boolean' ? body.is_sleeping : false;
    },
  };
}

/** Restart only, by the SSH command template; no sleep state. */
export function sshCommandDriver(target: LifecycleTargetConfig): LifecycleDriver {
  return {
    name: 'ssh-command',
    supports: (kind) => kind === 'restart' && target.restartCommand !== null,
    plan(kind: ActionKind): DriverStep[] {
      if (kind !== 'restart') {
        throw new AppError(LifecycleErrorCode.UNSUPPORTED_ACTION, `the ssh-command driver of ${target.upstream} only restarts`, {
          details: { upstream: target.upstream, kind, driver: 'ssh-command' },
        });
      }
      return [restartStep(target)];
    },
    readSleeping: () => Promise.resolve(null),
  };
}
