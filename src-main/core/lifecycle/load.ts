// What is running on a service, from both sides: the proxy's own count and the
// engine's (from the fleet's last reading), which also sees clients that use
// the SSH tunnel directly. The engine's figure includes the proxy's requests,
// so direct = max(0, engine running − proxy in flight). An engine figure that
// is old, failed or never read is said to be so — never taken for 0.
import type { ActionLoad } from '../../../src-preload/contract/index.js';
import { causeText, type FleetState } from '../fleet/index.js';

export interface ProxyLoad {
  inFlight: number;
  queued: number;
}

/** Why an engine figure is not fresh: too old, the last reading failed, the host is not connected, never read. */
export type EngineCause = 'age' | 'failed' | 'host' | 'none';

export interface EngineFigure {
  state: ActionLoad['engine'];
  /** Null when `unknown`; the last good figures when `stale`. */
  running: number | null;
  waiting: number | null;
  readAt: number | null;
  /** Why it is not fresh; null when fresh. */
  cause: EngineCause | null;
  note: string | null;
}

const count = (v: number | null): number | null => (v === null || !Number.isFinite(v) ? null : Math.max(0, Math.round(v)));
/** Coarse on purpose: a waiting proposal is re-published when its sentence changes, so an old figure ages by the second, then by the minute. */
const ago = (ms: number): string => (ms < 60_000 ? `${Math.round(ms / 1000)} s ago` : `${Math.round(ms / 60_000)} min ago`);

/**
 * The engine's request counts for one service in the fleet's state, read at the
 * reading's own time. Fresh means: host connected, last reading good, read at
 * most `maxAgeMs` before `now`.
 */
export function engineFigure(state: FleetState, target: { label: string; serviceId: string }, now: number, maxAgeMs: number): EngineFigure {
  const host = state.hosts.find((h) => h.label === target.label);
  const svc = host?.services.find((s) => s.id === target.serviceId) ?? null;
  if (!host || !svc) return { state: 'unknown', running: null, waiting: null, readAt: null, cause: 'none', note: 'the fleet has no view of this service' };
  const running = count(svc.figures?.running ?? svc.reading?.running ?? null);
  const waiting = count(svc.figures?.waiting ?? svc.reading?.waiting ?? null);
  const readAt = svc.readingAt;
  const staleReason = causeText(svc.stale);
  if (running === null) {
    const why = staleReason ? `the engine's request counts are unknown (${staleReason})` : 'the engine has not reported its request counts yet';
    return { state: 'unknown', running: null, waiting: null, readAt: null, cause: 'none', note: why };
  }
  const age = readAt === null ? null : Math.max(0, now - readAt);
  const when = age === null ? 'read at an unknown time' : `read ${ago(age)}`;
  const stale = (cause: EngineCause, why: string): EngineFigure => ({ state: 'stale', running, waiting, readAt, cause, note: why });
  if (host.session.state !== 'connected') return stale('host', `the host is ${host.session.state}; last ${when}`);
  if (svc.stale) return stale('failed', `the last reading failed${staleReason ? ` (${staleReason})` : ''}; last good one ${when}`);
  if (age === null || age > maxAgeMs) return stale('age', `the engine's figure was ${when}`);
  return { state: 'fresh', running, waiting, readAt, cause: null, note: null };
}

/** Both sides merged, with the sentence the approval dialog shows. `proxy` null: no proxy runs, or it has no figures for this upstream. */
export function mergeLoad(proxy: ProxyLoad | null, engine: EngineFigure, now: number): ActionLoad {
  const proxyInFlight = proxy ? Math.max(0, proxy.inFlight) : null;
  const proxyQueued = proxy ? Math.max(0, proxy.queued) : null;
  const through = proxyInFlight ?? 0;
  const direct = engine.state === 'fresh' && engine.running !== null ? Math.max(0, engine.running - through) : null;
  const inFlight = direct === null ? null : through + direct;
  const queued = proxyQueued ? `, ${proxyQueued} queued in the proxy` : '';
  let summary: string;
  if (inFlight !== null) {
    const waiting = engine.waiting === null ? 'waiting at the engine unknown' : `${engine.waiting} waiting at the engine`;
    summary = `${inFlight} in flight (${through} through the proxy, ${direct} from direct tunnel clients), ${waiting}${queued}`;
  } else {
    const last = engine.state === 'stale' ? `; it last said ${engine.running} running, ${engine.waiting ?? '?'} waiting` : '';
    summary = `${through} in flight through the proxy${queued}; direct tunnel clients unknown: ${engine.note ?? 'no engine figure'}${last}`;
  }
  return {
    at: now,
    proxyInFlight,
    proxyQueued,
    engine: engine.state,
    engineRunning: engine.running,
    engineWaiting: engine.waiting,
    engineReadAt: engine.readAt,
    engineNote: engine.note,
    direct,
    inFlight,
    summary,
  };
}

/** Whether two loads say the same to a reader (when they were read aside): a waiting proposal is re-published only on a change. */
export function sameLoad(a: ActionLoad | null | undefined, b: ActionLoad): boolean {
  return !!a && a.summary === b.summary && a.engine === b.engine;
}
