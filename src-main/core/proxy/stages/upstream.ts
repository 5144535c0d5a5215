// Stage: resolve upstream. The model named in the body → its placement (a model's
// replicas, or a group's models in fallback order) → the replica that takes
// the request now. When none can, the request is held only while the most
// hopeful one is expected back within the request's hold budget (a tunnel
// reconnecting, a model being woken on request, a restart behind a drain);
// otherwise, or past the budget, it is refused at once with Retry-After.
// Then the body the upstream gets (the served model name, and usage asked for
// on every stream).
import type { IncomingHttpHeaders } from 'node:http';
import type { Disposable } from '../../base/index.js';
import type { ProxyConfig } from '../../config/index.js';
import type { TrafficClass } from '../classes.js';
import { wire, type Endpoint, type Exchange } from '../exchange.js';
import type { PriorityPool } from '../pool.js';
import type { ModelRegistry, ModelPlacement, UpstreamSpec } from '../registry.js';
import type { HoldReason, UpstreamResolver } from '../resolver.js';
import type { Choice, ReplicaRouter } from '../router.js';
import { isWireError, shapeMaxTokens, shapingFor, withMembers } from '../shaping.js';
import { withIncludeUsage } from '../sse.js';
import { spliceModel } from '../body-splice.js';
import type { JsonBody } from './body.js';
import { holdLeftMs, worthHolding } from './hold-limit.js';
import { drainingError, unavailableError } from './refusals.js';
import { commitSse, sendSse } from './respond.js';
import { DONE, fail, ok, type StageEnv, type StageResult } from './stage.js';

export interface Target {
  spec: UpstreamSpec;
  pool: PriorityPool;
}

/** What choosing needs from the server: its pools, the router and the resolver. */
export interface ChooseContext {
  pools: ReadonlyMap<string, PriorityPool>;
  router: ReplicaRouter;
  resolver: UpstreamResolver;
  env: StageEnv;
}

/**
 * Records the model and stream flag on `ex`; 404 model_not_found; 400 max_tokens_over_ceiling when
 * the first model refuses what the body asks (now, before any hold or wake on its behalf).
 */
export function lookupPlacement(ex: Exchange, body: JsonBody, registry: ModelRegistry, endpoint?: Endpoint, settings?: ProxyConfig): StageResult<ModelPlacement> {
  const placement = registry.lookup(body.model);
  if (!placement) {
    return fail(wire(404, 'model_not_found', `The model \`${body.model.slice(0, 200)}\` does not exist. GET /v1/models lists the models served here.`, { param: 'model' }));
  }
  ex.model = placement.chain[0] ?? placement.name;
  ex.stream = body.json['stream'] === true;
  const first = placement.replicas[0]?.[0];
  if (endpoint !== undefined && settings !== undefined && first !== undefined) {
    const shape = shapeMaxTokens(body.json, endpoint, first.model, shapingFor(settings, first));
    if (isWireError(shape)) return fail(shape);
  }
  return ok(placement);
}

/**
 * The first model of the placement with a ready replica (later models of a group only when the earlier
 * ones cannot take it), skipping `exclude`d replicas (ones that failed this request). A degraded or
 * recently failing replica is a last resort here too: the next model's ready replica goes first,
 * and only when no model has one does the first model's last resort take it. Null when every
 * replica is excluded.
 */
export function chooseNow(placement: ModelPlacement, cls: TrafficClass, ctx: ChooseContext, exclude: ReadonlySet<string>): Choice | null {
  // One model with one replica (most fleets): no candidate lists, no ranking.
  if (placement.replicas.length === 1 && placement.replicas[0]!.length === 1 && exclude.size === 0) {
    const spec = placement.replicas[0]![0]!;
    const pool = ctx.pools.get(spec.key);
    if (!pool) return null;
    if (pool.isDraining) return { ok: false, spec, pool, why: 'draining' };
    const avail = ctx.resolver.resolve(spec);
    return avail.ok ? { ok: true, spec, pool, url: avail.url, lastResort: false } : { ok: false, spec, pool, why: avail };
  }
  const now = ctx.env.clock.now();
  const rankAt = (c: Refused) => rank(c, now);
  let best: Extract<Choice, { ok: false }> | null = null;
  let lastResort: Extract<Choice, { ok: true }> | null = null;
  for (const replicas of placement.replicas) {
    const candidates = replicas.flatMap((spec) => {
      const pool = ctx.pools.get(spec.key);
      return pool ? [{ spec, pool }] : [];
    });
    const choice = ctx.router.choose(candidates, cls, ctx.resolver, exclude, rankAt);
    if (!choice) continue;
    if (choice.ok) {
      if (!choice.lastResort) return choice;
      lastResort ??= choice;
      continue;
    }
    if (!best || rankAt(choice) < rankAt(best)) best = choice;
  }
  return lastResort ?? best;
}

type Refused = Pick<Extract<Choice, { ok: false }>, 'pool' | 'why'>;

/** How soon a refused choice is expected back (ms); people-must-act and unknown last. */
function rank(c: Refused, now: number): number {
  if (c.why === 'draining') return c.pool.drainInfo?.purpose === 'restart' ? expectedBackMs(c.pool, now) : 1e12;
  return c.why.recovery ? c.why.recovery.expectedMs : 1e13;
}

/** A restart behind a drain: until the drain deadline plus the restart's expected time. */
function expectedBackMs(pool: PriorityPool, now: number): number {
  const d = pool.drainInfo;
  if (!d) return 1e12;
  return Math.max(0, d.deadlineAt - now) + (d.expectedActionMs ?? 0);
}

/** Why a refused choice would be worth waiting for, and how long (ms); null: refuse at once. */
function recoveryOf(c: Extract<Choice, { ok: false }>, now: number): { reason: HoldReason; expectedMs: number } | null {
  if (c.why !== 'draining') return c.why.recovery ?? null;
  const d = c.pool.drainInfo;
  if (!d || d.purpose !== 'restart') return null;
  return { reason: d.deadlineAt > now ? 'draining' : 'restarting', expectedMs: expectedBackMs(c.pool, now) };
}

/**
 * The replica for this request, holding it while a recovery it can wait for runs (streams get
 * keep-alives, and queue frames with the reason under X-Queue-Events: on). Records the upstream,
 * hold time and reason on `ex`. DONE when the client left while held.
 */
export async function chooseUpstream(
  ex: Exchange,
  placement: ModelPlacement,
  cls: TrafficClass,
  headers: IncomingHttpHeaders,
  ctx: ChooseContext,
  exclude: ReadonlySet<string> = EMPTY,
): Promise<StageResult<Target>> {
  const first = chooseNow(placement, cls, ctx, exclude);
  if (first?.ok) return chosen(ex, first);
  if (!first) return fail(wire(503, 'upstream_unreachable', `no replica of ${placement.name} is left to try`, { retryAfterS: 1 }));
  const { clock, mono, settings } = ctx.env;
  const budgetMs = holdLeftMs(settings.holdBudgetMs[cls], headers, ex.heldMs);
  let refused = first;
  let recovery = recoveryOf(refused, clock.now());
  if (!worthHolding(recovery, budgetMs) || ctx.env.closing) return fail(refusal(ex, refused, ctx, false));

  // Hold: re-check on every fleet change and every 250 ms until a replica takes it or the budget is spent.
  const start = mono();
  ex.holdReason = recovery.reason;
  if (recovery.reason === 'waking' && ctx.resolver.requestWake) ctx.resolver.requestWake(refused.spec);
  const queueEvents = String(headers['x-queue-events'] ?? '').toLowerCase() === 'on';
  const timers: Disposable[] = [];
  let wake: (() => void) | null = null;
  const poke = () => wake?.();
  const sub = ctx.resolver.onDidChange?.(poke);
  const frame = () => {
    if (!queueEvents || !ex.committed) return;
    const waited = mono() - start;
    const eta = Math.max(0, Math.round(recovery!.expectedMs - waited));
    sendSse(ex, `event: queue\ndata: ${JSON.stringify({ position: 1, eta_ms: eta, reason: recovery!.reason, upstream: refused.spec.key, request_id: ex.traceId ?? ex.id })}\n\n`);
  };
  if (ex.stream) {
    if (queueEvents) {
      commitSse(ex, start, mono);
      frame();
    }
    timers.push(
      clock.setInterval(() => {
        commitSse(ex, start, mono);
        sendSse(ex, ': keep-alive\n\n');
        frame();
      }, settings.keepAliveIntervalMs),
    );
  }
  const gone = new Promise<void>((resolve) => {
    if (ex.clientGone) resolve();
    ex.res.once('close', () => resolve());
  });
  try {
    for (;;) {
      const left = budgetMs - (mono() - start);
      if (left <= 0 || ex.clientGone || ctx.env.closing) break;
      await Promise.race([
        gone,
        new Promise<void>((resolve) => {
          const t = clock.setTimeout(resolve, Math.min(250, left));
          wake = () => {
            void t.dispose();
            resolve();
          };
        }),
      ]);
      wake = null;
      if (ex.clientGone) return DONE;
      const next = chooseNow(placement, cls, ctx, exclude);
      if (next?.ok) {
        ex.heldMs += mono() - start;
        return chosen(ex, next);
      }
      if (!next) break;
      refused = next;
      const r = recoveryOf(refused, clock.now());
      // Released with the answer a new request gets: the link's failure turned hard (sshd refuses,
      // a login failed), a person must act, or a reconnect's next attempt falls past what is left
      // (a wake's expectation is its whole length, judged once when the hold began).
      if (!r || (r.reason === 'reconnecting' && !worthHolding(r, budgetMs - (mono() - start)))) break;
      if (r.reason !== recovery.reason) {
        recovery = r;
        ex.holdReason = r.reason;
        frame();
      } else recovery = r;
    }
  } finally {
    sub?.dispose();
    for (const t of timers) void t.dispose();
  }
  ex.heldMs += mono() - start;
  if (ex.clientGone) return DONE;
  return fail(refusal(ex, refused, ctx, true));
}

const EMPTY: ReadonlySet<string> = new Set();

/** Records the chosen replica on `ex` (exported for the server's synchronous fast path and failovers). */
export function chosen(ex: Exchange, c: Extract<Choice, { ok: true }>): StageResult<Target> & { ok: true } {
  ex.upstream = c.spec.key;
  ex.model = c.spec.model;
  ex.url = c.url;
  return ok({ spec: c.spec, pool: c.pool }) as StageResult<Target> & { ok: true };
}

/** The refusal for a choice nobody could take: draining / restarting, or the resolver's reason; `held` past a hold budget. */
function refusal(ex: Exchange, c: Extract<Choice, { ok: false }>, ctx: ChooseContext, held: boolean) {
  // The row names the upstream that refused (the wake-on-demand policy and the Proxy view count by it).
  ex.upstream = c.spec.key;
  ex.model = c.spec.model;
  if (c.why === 'draining') return drainingError(c.spec.key, c.pool, ctx.env.closing, ctx.env.clock.now());
  return unavailableError(c.why, c.pool, held);
}

export interface UpstreamBody {
  body: Buffer;
  /** The proxy asked for usage the client did not: take the usage chunk out of the stream again. */
  stripUsage: boolean;
}

/**
 * The body as the upstream gets it: unchanged when it names the served model, needs no usage option
 * and no max_tokens shaping (proxy.models); members it lacks spliced into the bytes when that is the
 * only change; else re-serialised. 400 max_tokens_over_ceiling when the model's rule is to refuse.
 * Records what was done to max_tokens on `ex` (the answer's x-gpu-console-max-tokens).
 */
export function upstreamBody(ex: Exchange, endpoint: Endpoint, body: JsonBody, spec: UpstreamSpec, settings: ProxyConfig): StageResult<UpstreamBody> {
  // body.json stays as the client sent it: a failover to another model builds its own body from it.
  const sent = body.json;
  const shape = shapeMaxTokens(sent, endpoint, spec.model, shapingFor(settings, spec));
  if (isWireError(shape)) return fail(shape);
  ex.maxTokensNote = shape.note;
  const changes: Record<string, unknown> = shape.changed ? { ...shape.changed } : {};
  let rewrite = shape.changed !== null;
  // Members the body lacks (max_tokens, stream_options): spliced after its opening brace when nothing else changes.
  let injectUsage = false;
  let stripUsage = false;
  const renamed = body.model !== spec.model;
  if (renamed) changes['model'] = spec.model;
  if (ex.stream && endpoint !== 'embeddings') {
    const so = sent['stream_options'];
    const asks = typeof so === 'object' && so !== null && (so as Record<string, unknown>)['include_usage'] === true;
    if (!asks) {
      stripUsage = true;
      if (so === undefined) injectUsage = true;
      else {
        changes['stream_options'] = { ...(typeof so === 'object' && so !== null ? so : {}), include_usage: true };
        rewrite = true;
      }
    }
  }
  // An alias alone: the served name goes into the bytes as sent (spliceModel), else the body is re-serialised.
  const raw = rewrite || !renamed ? body.raw : spliceModel(body.raw, spec.model);
  if (rewrite || raw === null) {
    const added = injectUsage ? { ...shape.added, stream_options: { include_usage: true } } : shape.added;
    return ok({ body: Buffer.from(JSON.stringify({ ...sent, ...added, ...changes })), stripUsage });
  }
  if (shape.added === null) return ok({ body: injectUsage ? withIncludeUsage(raw) : raw, stripUsage });
  const members = JSON.stringify(shape.added).slice(1, -1) + ',' + (injectUsage ? '"stream_options":{"include_usage":true},' : '');
  return ok({ body: withMembers(raw, members), stripUsage });
}
