// The fleet snapshot (one store write per tick) plus per-host UI bookkeeping:
// the last host.status message and in-flight connect/disconnect calls.
import type { StateCreator } from 'zustand/vanilla';
import type { EventPayload, FleetSnapshot, HostView } from '../../../src-preload/contract/index.js';
import { medianGapMs } from '../format/source.js';
import { replaceEqualDeep } from './share.js';

export type HostOperation = 'connect' | 'disconnect';

export interface HostOpState {
  readonly pending: HostOperation | null;
  readonly error: string | null;
}

export interface FleetSlice {
  fleet: {
    snapshot: FleetSnapshot | null;
    /** Last `host.status` message per host (e.g. why it failed), until the next change. */
    statusMessages: Readonly<Record<string, string | null>>;
    ops: Readonly<Record<string, HostOpState>>;
    /** Gaps between the last few snapshots taken (one per poll): how old "a few polls" is. */
    tickGapsMs: readonly number[];
  };
  applySnapshot(snapshot: FleetSnapshot): void;
  applyHostStatus(event: EventPayload<'host.status'>): void;
  setHostOp(label: string, op: HostOpState): void;
}

/** Newer snapshots replace older ones; a late answer to `fleet.snapshot` never rolls a tick back. */
export function reduceSnapshot(current: FleetSnapshot | null, next: FleetSnapshot): FleetSnapshot | null {
  if (current !== null && next.at < current.at) return current;
  return current === null ? next : replaceEqualDeep(current, next);
}

/** How many snapshot gaps are kept for the poll-interval estimate. */
export const TICK_GAPS_KEPT = 9;

/** The gaps with the one between two accepted snapshots added (oldest dropped past the bound). */
export function recordTickGap(gaps: readonly number[], current: FleetSnapshot | null, next: FleetSnapshot | null): readonly number[] {
  if (current === null || next === null || next === current || !(next.at > current.at)) return gaps;
  const out = [...gaps, next.at - current.at];
  return out.length > TICK_GAPS_KEPT ? out.slice(out.length - TICK_GAPS_KEPT) : out;
}

/** A host.status event changes that host's state at once, ahead of the next tick. */
export function reduceHostStatus(current: FleetSnapshot | null, event: EventPayload<'host.status'>): FleetSnapshot | null {
  if (current === null) return current;
  let changed = false;
  const hosts = current.hosts.map((host): HostView => {
    if (host.label !== event.label || host.state === event.state) return host;
    changed = true;
    return { ...host, state: event.state };
  });
  return changed ? { ...current, hosts } : current;
}

export const createFleetSlice: StateCreator<FleetSlice, [], [], FleetSlice> = (set) => ({
  fleet: { snapshot: null, statusMessages: {}, ops: {}, tickGapsMs: [] },
  applySnapshot: (snapshot) =>
    set((state) => {
      const current = state.fleet.snapshot;
      const next = reduceSnapshot(current, snapshot);
      if (next === current) return state;
      return { fleet: { ...state.fleet, snapshot: next, tickGapsMs: recordTickGap(state.fleet.tickGapsMs, current, next) } };
    }),
  applyHostStatus: (event) =>
    set((state) => ({
      fleet: {
        ...state.fleet,
        snapshot: reduceHostStatus(state.fleet.snapshot, event),
        statusMessages: { ...state.fleet.statusMessages, [event.label]: event.message },
      },
    })),
  setHostOp: (label, op) => set((state) => ({ fleet: { ...state.fleet, ops: { ...state.fleet.ops, [label]: op } } })),
});

export function hostByLabel(state: FleetSlice, label: string): HostView | undefined {
  return state.fleet.snapshot?.hosts.find((host) => host.label === label);
}

export function selectHostLabels(state: FleetSlice): string[] {
  return state.fleet.snapshot?.hosts.map((host) => host.label) ?? [];
}

/** The console's poll interval as seen from here (median snapshot gap), null before two snapshots. */
export function selectPollIntervalMs(state: FleetSlice): number | null {
  return medianGapMs(state.fleet.tickGapsMs);
}

export const IDLE_OP: HostOpState = { pending: null, error: null };
