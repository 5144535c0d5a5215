// The answers the proxy gives from what it knows, without an upstream:
// GET /v1/models (and /v1/models/{id}) and GET /v1/queue.
import { perClass } from '../classes.js';
import { wire, type Exchange } from '../exchange.js';
import type { PriorityPool } from '../pool.js';
import type { ModelEntry, ModelRegistry } from '../registry.js';
import { fail, ok, type StageResult } from './stage.js';

/** The model list, or the one model `modelId` names (by id or alias, any case; recorded on `ex`), or 404 model_not_found. */
export function modelsView(ex: Exchange, registry: ModelRegistry, modelId: string | null, nowMs: number): StageResult<ModelEntry | { object: 'list'; data: ModelEntry[] }> {
  const all = registry.models(Math.floor(nowMs / 1000));
  if (modelId === null) return ok({ object: 'list', data: all });
  const one = all.find((m) => m.id.toLowerCase() === modelId.toLowerCase());
  if (!one) {
    return fail(wire(404, 'model_not_found', `The model \`${modelId.slice(0, 200)}\` does not exist. GET /v1/models lists the models served here.`, { param: 'model' }));
  }
  ex.model = one.root;
  return ok(one);
}

/** Slots, in-flight and queued requests per class, for every upstream. */
export function queueView(registry: ModelRegistry, pools: ReadonlyMap<string, PriorityPool>) {
  return {
    object: 'queue',
    upstreams: registry.upstreams.map((spec) => {
      const pool = pools.get(spec.key)!;
      return {
        upstream: spec.key,
        model: spec.model,
        slots: pool.slots,
        draining: pool.isDraining,
        service_ms_estimate: pool.serviceMsEstimate === null ? null : Math.round(pool.serviceMsEstimate),
        in_flight: perClass((c) => pool.inFlightOf(c)),
        queued: perClass((c) => pool.queuedOf(c)),
      };
    }),
  };
}
