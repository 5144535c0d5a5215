// One upstream's figures in the proxy's snapshot (ProxyStats.upstreams): its
// pool, state, per-class windows, routing and requests in flight, read from
// what the server holds for it.
import type { ProxyConfig } from '../config/index.js';
import type { ProxyStats, UpstreamState } from '../../../src-preload/contract/index.js';
import type { AnswerWindow } from './answer-window.js';
import { CLASS_ORDER } from './classes.js';
import type { Exchange } from './exchange.js';
import { inFlightView, type InFlightView } from './in-flight.js';
import type { LiveList } from './live-list.js';
import type { PriorityPool } from './pool.js';
import type { UpstreamSpec } from './registry.js';
import type { UpstreamResolver } from './resolver.js';
import type { ReplicaRouter } from './router.js';
import type { UpstreamStats } from './stats.js';

/** What the server holds per upstream, read-only here. */
export interface FigureSources {
  pools: ReadonlyMap<string, PriorityPool>;
  stats: ReadonlyMap<string, UpstreamStats>;
  answers: ReadonlyMap<string, AnswerWindow>;
  resolver: UpstreamResolver;
  router: ReplicaRouter;
  runningOn(key: string): LiveList<Exchange> | undefined;
}

/** `live`, when given, gets the upstream's in-flight view (what /metrics writes per class). */
export function upstreamFigures(
  spec: UpstreamSpec,
  src: FigureSources,
  holdBudgetMs: ProxyConfig['holdBudgetMs'],
  now: number,
  mono: number,
  live: Map<string, InFlightView> | null,
): ProxyStats['upstreams'][number] {
  const pool = src.pools.get(spec.key)!;
  const st = src.stats.get(spec.key)!;
  let state: UpstreamState = 'ready';
  if (pool.isDraining) state = 'draining';
  else {
    const avail = src.resolver.resolve(spec);
    if (!avail.ok) state = avail.code === 'model_sleeping' ? 'sleeping' : 'down';
  }
  const running = inFlightView(src.runningOn(spec.key), mono);
  live?.set(spec.key, running);
  return {
    upstream: spec.key,
    label: spec.label,
    serviceId: spec.serviceId,
    model: spec.model,
    aliases: [...spec.aliases],
    state,
    slots: pool.slots,
    caps: pool.caps,
    inFlight: pool.inFlightTotal,
    queued: pool.queuedTotal,
    serviceMsEstimate: pool.serviceMsEstimate === null ? null : Math.round(pool.serviceMsEstimate),
    classes: CLASS_ORDER.map((cls) => ({ class: cls, inFlight: pool.inFlightOf(cls), queued: pool.queuedOf(cls), ...st[cls].figures(now), holdBudgetMs: holdBudgetMs[cls] })),
    weight: spec.weight,
    routed: src.router.routed(spec.key),
    failing: src.router.isFailing(spec.key),
    errors: src.answers.get(spec.key)!.figures(now),
    stalled: running.stalled,
  };
}
