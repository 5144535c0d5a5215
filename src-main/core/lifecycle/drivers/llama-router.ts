import type { ActionKind } from '../../../../src-preload/contract/index.js';
import { AppError } from '../../base/index.js';
import { LifecycleErrorCode } from '../errors.js';
import { chatProbeCheck, llamaHealthCheck, parseRouterModels, routerModelCheck } from './llama-checks.js';
import { notLlama, restartHow } from './llama-server.js';
import { portOwnerCheck } from './port-owner.js';
import { restartStep, restartUnavailable } from './restart-command.js';
import { withAvailability, type DriverCheck, type DriverStep, type LifecycleDriver, type LifecycleTargetConfig } from './types.js';

/**
 * llama-server in router mode (started without -m): wake is
 * `POST /models/load {"model": …}`, sleep is `POST /models/unload`, each
 * verified by the model's status in `GET /models`; the router's own errors
 * (a failed load and its exit code) are the action's error. Restart restarts
 * the whole router, by its unit, compose service or command.
 */
export function llamaRouterDriver(target: LifecycleTargetConfig): LifecycleDriver {
  const body = JSON.stringify({ model: target.model });
  const unavailable = (kind: ActionKind): string | null => {
    const wrong = notLlama(target, 'llama-router');
    if (wrong) return wrong;
    if (kind === 'restart') return restartUnavailable(target);
    if (kind === 'offload') return `in router mode sleep unloads ${target.model} (POST /models/unload), which frees all of its memory; there is no separate offload`;
    return null;
  };
  return withAvailability({
    name: 'llama-router',
    unavailable,
    plan(kind: ActionKind): DriverStep[] {
      const why = unavailable(kind);
      if (why) throw new AppError(LifecycleErrorCode.UNSUPPORTED_ACTION, `${target.upstream}: ${why}`, { details: { upstream: target.upstream, kind, driver: 'llama-router', reason: why } });
      if (kind === 'wake') return [{ kind: 'http', method: 'POST', path: '/models/load', url: null, body }];
      if (kind === 'sleep') return [{ kind: 'http', method: 'POST', path: '/models/unload', url: null, body }];
      return [restartStep(target)];
    },
    async readSleeping(io, timeoutMs) {
      const r = await io.http('GET', { path: '/models' }, null, timeoutMs);
      if (r.status !== 200) return null;
      const m = parseRouterModels(r.text)?.find((x) => x.id === target.model);
      if (!m) return null;
      if (m.value === 'loaded') return false;
      if (m.value === 'unloaded' || m.value === 'sleeping') return true;
      return null;
    },
    checks(kind: ActionKind): DriverCheck[] {
      switch (kind) {
        case 'wake':
          return [routerModelCheck(target, 'loaded'), llamaHealthCheck(), chatProbeCheck(target.model, ['model', 'health'])];
        case 'sleep':
          return [routerModelCheck(target, 'unloaded'), llamaHealthCheck()];
        case 'restart':
          return [portOwnerCheck(target), llamaHealthCheck(), { ...routerModelCheck(target, 'listed'), after: ['health'] }];
        default:
          return [];
      }
    },
    effect(kind: ActionKind): string | null {
      switch (kind) {
        case 'wake':
          return `the router on ${target.label} loads ${target.model} (POST /models/load): it starts a llama-server for it, which loads the weights; requests for it are answered once it is loaded`;
        case 'sleep':
          return `the router on ${target.label} unloads ${target.model} (POST /models/unload): its llama-server stops and all of its memory is freed; the next request for it loads it again (unless the router runs with --no-models-autoload)`;
        case 'restart':
          return `the whole llama-server router on ${target.label} is restarted by ${restartHow(target)}: every model it serves is unloaded, and ${target.model} is unavailable until the router is back; models load again on their next request`;
        default:
          return null;
      }
    },
  });
}
