// Recent generation tok/s per service for the sparklines, kept outside React:
// fed by a store subscription once per tick, read by charts imperatively.
import type { FleetSnapshot } from '../../../../src-preload/contract/index.js';
import type { AppStore } from '../../store/store.js';

export type TokPoint = readonly [atMs: number, tokPerS: number | null];

export const TOK_HISTORY_WINDOW_MS = 120_000;

export function serviceKey(label: string, serviceId: string): string {
  return `${label}\u0000${serviceId}`;
}

export class TokHistory {
  private readonly series = new Map<string, TokPoint[]>();
  private readonly listeners = new Map<string, Set<(points: readonly TokPoint[], atMs: number) => void>>();
  private lastAt = -Infinity;

  constructor(
    readonly windowMs: number = TOK_HISTORY_WINDOW_MS,
    /** Bound per series whatever the tick rate (drop oldest). */
    private readonly maxPoints = 600,
  ) {}

  /** Appends one point per service; snapshots not newer than the last one are ignored. */
  record(snapshot: FleetSnapshot): void {
    if (snapshot.at <= this.lastAt) return;
    this.lastAt = snapshot.at;
    const cutoff = snapshot.at - this.windowMs;
    const seen = new Set<string>();
    for (const host of snapshot.hosts) {
      for (const service of host.services) {
        const key = serviceKey(host.label, service.id);
        seen.add(key);
        const points = this.series.get(key) ?? [];
        // a stale figure is the last good one repeated, not a new sample: show a gap
        points.push([snapshot.at, service.stale ? null : service.generationTokensPerS]);
        trim(points, cutoff, this.maxPoints);
        this.series.set(key, points);
      }
    }
    for (const [key, points] of this.series) {
      if (!seen.has(key)) {
        trim(points, cutoff, this.maxPoints);
        if (points.length === 0) this.series.delete(key);
      }
    }
    for (const [key, set] of this.listeners) {
      const points = this.series.get(key) ?? [];
      for (const listener of [...set]) listener(points, snapshot.at);
    }
  }

  points(key: string): readonly TokPoint[] {
    return this.series.get(key) ?? [];
  }

  get latestAt(): number | null {
    return Number.isFinite(this.lastAt) ? this.lastAt : null;
  }

  subscribe(key: string, listener: (points: readonly TokPoint[], atMs: number) => void): () => void {
    let set = this.listeners.get(key);
    if (!set) {
      set = new Set();
      this.listeners.set(key, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(key);
    };
  }
}

function trim(points: TokPoint[], cutoff: number, maxPoints: number): void {
  let drop = 0;
  while (drop < points.length && (points[drop]?.[0] ?? Infinity) < cutoff) drop++;
  if (points.length - drop > maxPoints) drop = points.length - maxPoints;
  if (drop > 0) points.splice(0, drop);
}

/** Records every new snapshot the store receives; returns the unsubscribe. */
export function attachTokHistory(store: AppStore, history: TokHistory): () => void {
  const initial = store.getState().fleet.snapshot;
  if (initial) history.record(initial);
  return store.subscribe((state, prev) => {
    const snapshot = state.fleet.snapshot;
    if (snapshot !== null && snapshot !== prev.fleet.snapshot) history.record(snapshot);
  });
}
