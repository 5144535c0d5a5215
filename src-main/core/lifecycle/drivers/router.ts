import type { ActionKind } from '../../../../src-preload/contract/index.js';
import { AppError } from '../../base/index.js';
import { LifecycleErrorCode } from '../errors.js';
import { withAvailability, type DriverStep, type LifecycleDriver, type LifecycleTargetConfig } from './types.js';

const VERB: Record<ActionKind, string> = { wake: 'up', sleep: 'sleep', offload: 'down', restart: 'restart' };
const ASLEEP = new Set(['sleeping', 'asleep', 'down', 'offloaded', 'unloaded']);

/**
 * A front-door router's admin API (plain HTTP on the host's loopback, reached
 * at `routerBaseUrl`): `POST {base}/models/{model}/up|sleep|down|restart`,
 * `GET {base}/models/{model}/status` → `{"state": "awake" | "sleeping" | "down" | …}`.
 */
export function routerDriver(target: LifecycleTargetConfig): LifecycleDriver {
  const base = (target.routerBaseUrl ?? '').replace(/\/+$/, '');
  const modelUrl = `${base}/models/${encodeURIComponent(target.model)}`;
  return withAvailability({
    name: 'router',
    unavailable: () => (base !== '' ? null : `${target.upstream} uses the router driver but has no lifecycle.routerBaseUrl (the router's admin API)`),
    plan(kind: ActionKind): DriverStep[] {
      if (!base) {
        throw new AppError(LifecycleErrorCode.UNSUPPORTED_ACTION, `${target.upstream} uses the router driver but has no lifecycle.routerBaseUrl`, {
          details: { upstream: target.upstream, kind },
        });
      }
      const query = kind === 'sleep' ? `?level=${target.sleepLevel}` : '';
      return [{ kind: 'http', method: 'POST', path: null, url: `${modelUrl}/${VERB[kind]}${query}`, body: null }];
    },
    async readSleeping(io, timeoutMs) {
      if (!base) return null;
      const r = await io.http('GET', { url: `${modelUrl}/status` }, null, timeoutMs);
      if (r.status !== 200) return null;
      let body: { state?: unknown };
      try {
        body = JSON.parse(r.text) as { state?: unknown };
      } catch {
        throw new AppError(LifecycleErrorCode.STEP_FAILED, `GET ${modelUrl}/status answered 200 without JSON: ${JSON.stringify(r.text.slice(0, 80))}`, {
          details: { url: `${modelUrl}/status` },
        });
      }
      return typeof body?.state === 'string' ? ASLEEP.has(body.state.toLowerCase()) : null;
    },
  });
}
