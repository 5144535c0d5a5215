// The answers the proxy gives from what it knows, without an upstream:
// GET /v1/models (and /v1/models/{id}) and GET /v1/queue.
import { perClass } from '../classes.js';
import { wire, type Exchange } from '../exchange.js';
import type { PriorityPool } from '../pool.js';
import type { ModelEntry, ModelRegistry } from '../registry.js';
import type { UpstreamResolver } from '../resolver.js';
import { fail, ok, type StageResult } from './stage.js';

/**
 * The model list, or the one model `modelId` names (by id or alias, any case; recorded on `ex`), or 404
 * model_not_found. Each entry carries the context length its servers report, when the resolver knows it.
 */
export function modelsView(
  ex: Exchange,
  registry: ModelRegistry,
  modelId: string | null,
  nowMs: number,
  resolver?: Pick<UpstreamResolver, 'contextLength'>,
): StageResult<ModelEntry | { object: 'list'; data: ModelEntry[] }> {
  const all = withContextLengths(registry, registry.models(Math.floor(nowMs / 1000)), resolver);
  if (modelId === null) return ok({ object: 'list', data: all });
  const one = all.find((m) => m.id.toLowerCase() === modelId.toLowerCase());
  if (!one) {
    return fail(wire(404, 'model_not_found', `The model \`${modelId.slice(0, 200)}\` does not exist. GET /v1/models lists the models served here.`, { param: 'model' }));
  }
  ex.model = one.root;
  return ok(one);
}

/**
 * `max_model_len` on each entry: the smallest any of its replicas reports (a prompt sized to it fits
 * wherever the request goes); absent — never 0 — when a replica's is unknown.
 */
function withContextLengths(registry: ModelRegistry, entries: ModelEntry[], resolver: Pick<UpstreamResolver, 'contextLength'> | undefined): ModelEntry[] {
  const lengthOf = resolver?.contextLength?.bind(resolver);
  if (!lengthOf) return entries;
  return entries.map((entry) => {
    let min: number | null = null;
    for (const key of entry.replicas) {
      const spec = registry.get(key);
      const len = spec ? lengthOf(spec) : null;
      if (len === null) return entry;
      min = min === null ? len : Math.min(min, len);
    }
    return min === null ? entry : { ...entry, max_model_len: min };
  });
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
