// Stage: resolve upstream. The model named in the body → its upstream and
// pool, refused while that upstream drains or is unreachable; then the body
// the upstream gets (the served model name, and usage asked for on every stream).
import { wire, type Endpoint, type Exchange } from '../exchange.js';
import type { PriorityPool } from '../pool.js';
import type { ModelRegistry, UpstreamSpec } from '../registry.js';
import type { UpstreamResolver } from '../resolver.js';
import { withIncludeUsage } from '../sse.js';
import type { JsonBody } from './body.js';
import { drainingError, unavailableError } from './refusals.js';
import { fail, ok, type StageResult } from './stage.js';

export interface Target {
  spec: UpstreamSpec;
  pool: PriorityPool;
}

/**
 * Records the model, upstream and stream flag on `ex`; 404 model_not_found, 503 upstream_draining
 * (proxy_shutting_down while closing), tunnel_down or model_sleeping.
 */
export function resolveUpstream(
  ex: Exchange,
  body: JsonBody,
  registry: ModelRegistry,
  pools: ReadonlyMap<string, PriorityPool>,
  resolver: UpstreamResolver,
  closing: boolean,
): StageResult<Target> {
  const spec = registry.lookup(body.model);
  if (!spec) {
    return fail(wire(404, 'model_not_found', `The model \`${body.model.slice(0, 200)}\` does not exist. GET /v1/models lists the models served here.`, { param: 'model' }));
  }
  ex.model = spec.model;
  ex.upstream = spec.key;
  ex.stream = body.json['stream'] === true;
  const pool = pools.get(spec.key)!;
  if (pool.isDraining) return fail(drainingError(spec.key, pool, closing));
  const avail = resolver.resolve(spec);
  if (!avail.ok) return fail(unavailableError(avail, pool));
  return ok({ spec, pool });
}

export interface UpstreamBody {
  body: Buffer;
  /** The proxy asked for usage the client did not: take the usage chunk out of the stream again. */
  stripUsage: boolean;
}

/**
 * The body as the upstream gets it: unchanged when it names the served model and needs no usage
 * option; include_usage spliced into the bytes when that is the only change; else re-serialised.
 */
export function upstreamBody(ex: Exchange, endpoint: Endpoint, body: JsonBody, spec: UpstreamSpec): UpstreamBody {
  const parsed = body.json;
  let stripUsage = false;
  let rewrite = false;
  if (body.model !== spec.model) {
    parsed['model'] = spec.model;
    rewrite = true;
  }
  let injectUsage = false;
  if (ex.stream && endpoint !== 'embeddings') {
    const so = parsed['stream_options'];
    const asks = typeof so === 'object' && so !== null && (so as Record<string, unknown>)['include_usage'] === true;
    if (!asks) {
      stripUsage = true;
      if (so === undefined && !rewrite) injectUsage = true;
      else {
        parsed['stream_options'] = { ...(typeof so === 'object' && so !== null ? so : {}), include_usage: true };
        rewrite = true;
      }
    }
  }
  if (rewrite) return { body: Buffer.from(JSON.stringify(parsed)), stripUsage };
  return { body: injectUsage ? withIncludeUsage(body.raw) : body.raw, stripUsage };
}
