// What the advisor remembers of the last window, per upstream: each answered
// request's class and queue wait (from the proxy's answers), and each fleet
// round's slot use, caps and GPU / KV-cache figures. Both rings are bounded
// (oldest dropped) and pruned to the window; figuresOf() turns them into the
// percentiles and shares the rules judge.
import type { PoolCaps, TrafficClass } from '../../../src-preload/contract/index.js';

/**
 * Answers kept per upstream: a 15-minute window at 22 requests a second; busier upstreams are judged on
 * their newest 20,000 answers (about 1 MB each at most).
 */
export const MAX_ANSWERS = 20_000;
/** Rounds kept per upstream (15 minutes of 1 s rounds is 900). */
export const MAX_ROUNDS = 4_096;

const CLASSES: readonly TrafficClass[] = ['interactive', 'system', 'batch'];

export interface RoundSample {
  at: number;
  slots: number;
  caps: PoolCaps;
  inFlight: Record<TrafficClass, number>;
  queued: Record<TrafficClass, number>;
  /** The busiest GPU serving the upstream (%); null when unknown this round. */
  gpuUtilPct: number | null;
  gpuMemoryPct: number | null;
  kvCachePct: number | null;
  /** Slots the server itself reports (llama-server total_slots); null when it says none. */
  serverSlots: number | null;
}

/** The window's figures of one upstream: what the contract shows plus what only the rules read. */
export interface WindowFigures {
  samples: number;
  requests: Record<TrafficClass, number>;
  waitP95Ms: Record<TrafficClass, number | null>;
  batchQueuedPct: number | null;
  interactiveQueuedPct: number | null;
  idleReserveP50: number | null;
  gpuUtilP95Pct: number | null;
  gpuMemoryP95Pct: number | null;
  kvCacheP95Pct: number | null;
  slotLimit: number;
  /** p95 of interactive requests in flight and queued per round. */
  interactiveInFlightP95: number;
  interactiveQueuedP95: number;
  /** Of the rounds where interactive queued, the share (0–100) in which batch held slots and every slot was taken. */
  batchCrowdsPct: number | null;
  /** The caps and slots of the newest round (what a proposal starts from). */
  caps: PoolCaps;
  slots: number;
  /** How far back the figures reach: the window, or less since the caps changed. */
  spanMs: number;
  /** Whether the caps changed inside the window (the figures start at the change). */
  capsChanged: boolean;
}

interface Answer {
  at: number;
  cls: TrafficClass;
  queueMs: number;
}

/** A bounded FIFO pruned by age; over its bound it drops the oldest quarter at once (no shift per push). */
class Ring<T extends { at: number }> {
  private items: T[] = [];
  constructor(private readonly max: number) {}

  push(item: T): void {
    this.items.push(item);
    if (this.items.length > this.max + (this.max >> 2)) this.items.splice(0, this.items.length - this.max);
  }

  prune(since: number): void {
    let drop = 0;
    while (drop < this.items.length && this.items[drop]!.at < since) drop++;
    if (drop > 0) this.items.splice(0, drop);
  }

  /** The newest `max` items no older than `since`. */
  since(since: number): T[] {
    const kept = this.items.filter((x) => x.at >= since);
    return kept.length > this.max ? kept.slice(kept.length - this.max) : kept;
  }

  get size(): number {
    return this.items.length;
  }
}

export function percentileOf(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

const pctOf = (part: number, whole: number): number | null => (whole === 0 ? null : Math.round((part / whole) * 1000) / 10);
const known = (xs: readonly (number | null)[]): number[] => xs.filter((x): x is number => x !== null && Number.isFinite(x));

export class AdvisorWindow {
  private readonly answers = new Map<string, Ring<Answer>>();
  private readonly rounds = new Map<string, Ring<RoundSample>>();

  constructor(private readonly windowMs: () => number) {}

  recordAnswer(upstream: string, cls: TrafficClass, queueMs: number, at: number): void {
    let ring = this.answers.get(upstream);
    if (!ring) this.answers.set(upstream, (ring = new Ring<Answer>(MAX_ANSWERS)));
    ring.push({ at, cls, queueMs: Math.max(0, queueMs) });
  }

  recordRound(upstream: string, sample: RoundSample): void {
    let ring = this.rounds.get(upstream);
    if (!ring) this.rounds.set(upstream, (ring = new Ring<RoundSample>(MAX_ROUNDS)));
    ring.push(sample);
  }

  /** Drops what fell out of the window, and the upstreams with nothing left in it. */
  prune(now: number): void {
    const since = now - this.windowMs();
    for (const map of [this.answers, this.rounds] as const) {
      for (const [key, ring] of map) {
        ring.prune(since);
        if (ring.size === 0) map.delete(key);
      }
    }
  }

  upstreams(): string[] {
    return [...this.rounds.keys()];
  }

  /**
   * The figures of one upstream over the window ending at `now`, since its caps were last changed; null when
   * no round of it is in the window.
   */
  figuresOf(upstream: string, now: number): WindowFigures | null {
    const all = this.rounds.get(upstream)?.since(now - this.windowMs()) ?? [];
    const last = all[all.length - 1];
    if (!last) return null;
    // Only the rounds under the caps in force: what queued under other caps says nothing of these.
    let first = all.length - 1;
    while (first > 0 && sameLimits(all[first - 1]!, last)) first--;
    const rounds = all.slice(first);
    const answers = this.answers.get(upstream)?.since(rounds[0]!.at) ?? [];
    const requests = { interactive: 0, system: 0, batch: 0 };
    const waits: Record<TrafficClass, number[]> = { interactive: [], system: [], batch: [] };
    for (const a of answers) {
      requests[a.cls]++;
      waits[a.cls].push(a.queueMs);
    }
    const waitP95Ms = Object.fromEntries(CLASSES.map((c) => [c, percentileOf(waits[c], 95)])) as Record<TrafficClass, number | null>;
    const batchQueued = rounds.filter((r) => r.queued.batch > 0);
    const interactiveQueued = rounds.filter((r) => r.queued.interactive > 0);
    const crowded = interactiveQueued.filter((r) => r.inFlight.batch > 0 && r.inFlight.interactive + r.inFlight.system + r.inFlight.batch >= r.slots);
    const serverSlots = known(rounds.map((r) => r.serverSlots));
    return {
      samples: rounds.length,
      requests,
      waitP95Ms,
      batchQueuedPct: pctOf(batchQueued.length, rounds.length),
      interactiveQueuedPct: pctOf(interactiveQueued.length, rounds.length),
      idleReserveP50: percentileOf(
        batchQueued.map((r) => Math.max(0, r.caps.reservedInteractive - r.inFlight.interactive)),
        50,
      ),
      gpuUtilP95Pct: percentileOf(known(rounds.map((r) => r.gpuUtilPct)), 95),
      gpuMemoryP95Pct: roundPct(percentileOf(known(rounds.map((r) => r.gpuMemoryPct)), 95)),
      kvCacheP95Pct: roundPct(percentileOf(known(rounds.map((r) => r.kvCachePct)), 95)),
      slotLimit: serverSlots.length > 0 ? Math.min(last.slots, serverSlots[serverSlots.length - 1]!) : last.slots,
      interactiveInFlightP95: percentileOf(rounds.map((r) => r.inFlight.interactive), 95) ?? 0,
      interactiveQueuedP95: percentileOf(rounds.map((r) => r.queued.interactive), 95) ?? 0,
      batchCrowdsPct: pctOf(crowded.length, interactiveQueued.length),
      caps: last.caps,
      slots: last.slots,
      spanMs: Math.max(0, now - rounds[0]!.at),
      capsChanged: first > 0,
    };
  }
}

function sameLimits(a: RoundSample, b: RoundSample): boolean {
  return a.slots === b.slots && a.caps.reservedInteractive === b.caps.reservedInteractive && CLASSES.every((c) => a.caps[c] === b.caps[c]);
}

function roundPct(x: number | null): number | null {
  return x === null ? null : Math.round(x * 10) / 10;
}
