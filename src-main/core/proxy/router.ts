// Which replica of a model takes a request. Replicas that are down, failing,
// draining or asleep are skipped (asleep ones are kept as a last resort when
// they can be woken on request); of the rest, the one with the most free slots
// by the proxy's own accounting wins, ties to the one picked longest ago — or,
// when weights are configured, a smooth weighted round-robin over the replicas
// with a free slot. Every choice is counted per replica, for the Proxy view.
import type { TrafficClass } from './classes.js';
import type { PriorityPool } from './pool.js';
import type { UpstreamSpec } from './registry.js';
import type { Unavailable, UpstreamAvailability, UpstreamResolver } from './resolver.js';

/** How long a replica that failed before the first byte is skipped (while another can take the request). */
export const FAILING_FOR_MS = 5_000;

export interface Candidate {
  spec: UpstreamSpec;
  pool: PriorityPool;
}

export type Choice =
  /** `lastResort`: a degraded or recently failing replica, chosen only because no other of the model is ready. */
  | { ok: true; spec: UpstreamSpec; pool: PriorityPool; url: string; lastResort: boolean }
  /** Nobody can take it now: the most hopeful refusal (soonest back), with its pool. */
  | { ok: false; spec: UpstreamSpec; pool: PriorityPool; why: Unavailable | 'draining' };

/** How soon a refused replica is expected back (ms, smaller is sooner): the most hopeful refusal is kept. */
export type RefusalRank = (refused: { spec: UpstreamSpec; pool: PriorityPool; why: Unavailable | 'draining' }) => number;

interface ReplicaState {
  failingUntil: number;
  current: number;
  routed: number;
  /** When it was last picked (a sequence number): ties go to the one picked longest ago. */
  picked: number;
}

const defaultRank: RefusalRank = ({ why }) => (why === 'draining' ? 1e12 : why.recovery ? why.recovery.expectedMs : 1e13);

export class ReplicaRouter {
  private readonly state = new Map<string, ReplicaState>();
  private seq = 0;

  constructor(private readonly mono: () => number) {}

  /** Requests sent to a replica since start. */
  routed(key: string): number {
    return this.state.get(key)?.routed ?? 0;
  }

  /** True while the replica is skipped after a failure. */
  isFailing(key: string): boolean {
    return (this.state.get(key)?.failingUntil ?? 0) > this.mono();
  }

  /** A failure before the first byte (refused connection, tunnel error): skip it for a while. */
  markFailing(key: string): void {
    this.of(key).failingUntil = this.mono() + FAILING_FOR_MS;
  }

  markHealthy(key: string): void {
    const s = this.state.get(key);
    if (s) s.failingUntil = 0;
  }

  /** Counts a request as sent to `key`. */
  count(key: string): void {
    this.of(key).routed++;
  }

  /**
   * The replica to use among `candidates` (one model's replicas, none of them in `exclude`); null when
   * every one is excluded. A sleeping replica the resolver may wake on request carries a recovery, so it
   * ranks by its wake time and becomes the one to wait for when nothing is awake. `rank` orders
   * refusals (default: the resolver's expected recovery; a drain after every recovery).
   */
  choose(
    candidates: readonly Candidate[],
    cls: TrafficClass,
    resolver: UpstreamResolver,
    exclude: ReadonlySet<string>,
    rank: RefusalRank = defaultRank,
  ): Choice | null {
    // One replica (the usual case): no scoring.
    if (candidates.length === 1 && exclude.size === 0) {
      const { spec, pool } = candidates[0]!;
      if (pool.isDraining) return { ok: false, spec, pool, why: 'draining' };
      const avail = resolver.resolve(spec);
      if (!avail.ok) return { ok: false, spec, pool, why: avail };
      this.of(spec.key).picked = ++this.seq;
      return { ok: true, spec, pool, url: avail.url, lastResort: avail.degraded === true || this.isFailing(spec.key) };
    }
    const ready: { c: Candidate; url: string; free: number }[] = [];
    const failing: { c: Candidate; url: string; free: number }[] = [];
    let best: { c: Candidate; why: Unavailable | 'draining'; rank: number } | null = null;
    const consider = (c: Candidate, why: Unavailable | 'draining') => {
      const r = rank({ spec: c.spec, pool: c.pool, why });
      if (!best || r < best.rank) best = { c, why, rank: r };
    };
    for (const c of candidates) {
      if (exclude.has(c.spec.key)) continue;
      if (c.pool.isDraining) {
        consider(c, 'draining');
        continue;
      }
      const avail: UpstreamAvailability = resolver.resolve(c.spec);
      if (!avail.ok) {
        consider(c, avail);
        continue;
      }
      const entry = { c, url: avail.url, free: c.pool.freeSlots(cls) };
      (avail.degraded || this.isFailing(c.spec.key) ? failing : ready).push(entry);
    }
    const pool = ready.length > 0 ? ready : failing;
    if (pool.length === 0) {
      const b = best as { c: Candidate; why: Unavailable | 'draining' } | null;
      return b ? { ok: false, spec: b.c.spec, pool: b.c.pool, why: b.why } : null;
    }
    const picked = this.pick(pool);
    this.of(picked.c.spec.key).picked = ++this.seq;
    return { ok: true, spec: picked.c.spec, pool: picked.c.pool, url: picked.url, lastResort: ready.length === 0 };
  }

  private pick(list: { c: Candidate; url: string; free: number }[]): { c: Candidate; url: string; free: number } {
    if (list.length === 1) return list[0]!;
    const weighted = list.some((e) => e.c.spec.weight !== 1);
    if (weighted) {
      const withFree = list.filter((e) => e.free > 0);
      if (withFree.length > 0) return this.smoothWeighted(withFree);
      // All full: queue where the wait per unit of weight is shortest.
      return minBy(list, (e) => (e.c.pool.queuedTotal + 1) / (e.c.pool.slots * e.c.spec.weight));
    }
    const most = Math.max(...list.map((e) => e.free));
    if (most > 0) return this.longestAgo(list.filter((e) => e.free === most));
    const shortest = Math.min(...list.map((e) => (e.c.pool.queuedTotal + 1) / e.c.pool.slots));
    return this.longestAgo(list.filter((e) => (e.c.pool.queuedTotal + 1) / e.c.pool.slots === shortest));
  }

  /**
   * Ties in turn: the one picked longest ago (config order among never-picked ones). Kept per
   * replica, so picks for other models in between do not skew the turn (a shared counter did).
   */
  private longestAgo<T extends { c: Candidate }>(ties: T[]): T {
    return minBy(ties, (e) => this.state.get(e.c.spec.key)?.picked ?? 0);
  }

  /** nginx's smooth weighted round-robin: spread by weight without bursts to one replica. */
  private smoothWeighted<T extends { c: Candidate }>(list: T[]): T {
    let total = 0;
    let chosen: T | null = null;
    let chosenState: ReplicaState | null = null;
    for (const e of list) {
      const s = this.of(e.c.spec.key);
      s.current += e.c.spec.weight;
      total += e.c.spec.weight;
      if (!chosenState || s.current > chosenState.current) {
        chosen = e;
        chosenState = s;
      }
    }
    chosenState!.current -= total;
    return chosen!;
  }

  private of(key: string): ReplicaState {
    let s = this.state.get(key);
    if (!s) {
      s = { failingUntil: 0, current: 0, routed: 0, picked: 0 };
      this.state.set(key, s);
    }
    return s;
  }
}

function minBy<T>(list: readonly T[], f: (x: T) => number): T {
  let best = list[0] as T;
  let bestV = f(best);
  for (const x of list.slice(1)) {
    const v = f(x);
    if (v < bestV) {
      best = x;
      bestV = v;
    }
  }
  return best;
}
