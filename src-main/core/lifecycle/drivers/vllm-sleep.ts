import type { ActionKind } from '../../../../src-preload/contract/index.js';
import { AppError } from '../../base/index.js';
import { LifecycleErrorCode } from '../errors.js';
import { restartStep, restartUnavailable } from './restart-command.js';
import { withAvailability, type DriverStep, type LifecycleDriver, type LifecycleTargetConfig, type PlanContext } from './types.js';

const post = (path: string, body: string | null = null): DriverStep => ({ kind: 'http', method: 'POST', path, url: null, body });

/** vLLM's reload step between waking the weights and the KV cache after level 2 (vllm#29341). */
export const RELOAD_WEIGHTS_BODY = JSON.stringify({ method: 'reload_weights', args: [], kwargs: {}, timeout: null });

/**
 * vLLM sleep mode (VLLM_SERVER_DEV_MODE=1, --enable-sleep-mode): sleep is
 * `POST /sleep?level=N`, offload is level 2 (weights dropped). Waking from
 * level 2 — or from an unknown level, where the long way is the safe way — is
 * weights → reload_weights → KV cache; a plain /wake_up there gives garbage.
 * Restart goes through the service's SSH command template.
 */
export function vllmSleepDriver(target: LifecycleTargetConfig): LifecycleDriver {
  return withAvailability({
    name: 'vllm-sleep',
    unavailable: (kind) => (kind === 'restart' ? restartUnavailable(target) : null),
    plan(kind: ActionKind, ctx: PlanContext): DriverStep[] {
      switch (kind) {
        case 'sleep':
          return [post(`/sleep?level=${target.sleepLevel}`)];
        case 'offload':
          return [post('/sleep?level=2')];
        case 'wake':
          if (ctx.sleepLevel === 1) return [post('/wake_up')];
          return [post('/wake_up?tags=weights'), post('/collective_rpc', RELOAD_WEIGHTS_BODY), post('/wake_up?tags=kv_cache')];
        case 'restart':
          return [restartStep(target)];
        default:
          throw new AppError(LifecycleErrorCode.UNSUPPORTED_ACTION, `vllm-sleep cannot ${String(kind)}`);
      }
    },
    async readSleeping(io, timeoutMs) {
      const r = await io.http('GET', { path: '/is_sleeping' }, null, timeoutMs);
      if (r.status !== 200) return null;
      const body = JSON.parse(r.text) as { is_sleeping?: unknown };
      return typeof body.is_sleeping === 'boolean' ? body.is_sleeping : null;
    },
  });
}
