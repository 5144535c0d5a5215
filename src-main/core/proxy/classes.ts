// Traffic classes: who waits for whom. Interactive (a person waits) goes
// first, then system (probes), then batch (pipelines).
import type { TrafficClass } from '../../../src-preload/contract/index.js';

export type { TrafficClass };

/** Dispatch order. */
export const CLASS_ORDER: readonly TrafficClass[] = ['interactive', 'system', 'batch'];

/** Higher may do more: a token allowed `interactive` may also send `system` and `batch`. */
export const CLASS_RANK: Readonly<Record<TrafficClass, number>> = { batch: 0, system: 1, interactive: 2 };

export function isTrafficClass(value: unknown): value is TrafficClass {
  return value === 'interactive' || value === 'system' || value === 'batch';
}

/** The X-Priority header: a class name (any case); undefined when absent, null when unreadable. */
export function parsePriorityHeader(value: string | string[] | undefined): TrafficClass | null | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return null;
  const v = value.trim().toLowerCase();
  return isTrafficClass(v) ? v : null;
}

export function allows(maxClass: TrafficClass, wanted: TrafficClass): boolean {
  return CLASS_RANK[wanted] <= CLASS_RANK[maxClass];
}

export function perClass<T>(make: (cls: TrafficClass) => T): Record<TrafficClass, T> {
  return { interactive: make('interactive'), system: make('system'), batch: make('batch') };
}
