// What the requests running on one upstream look like now: how long each has
// been with the server and since its last byte (the hanging-requests rule's
// figures, contract UpstreamFigures.stalled), and per class the longest of each
// for /metrics. Computed from the dispatch stage's live list when stats are
// taken (about once a second), never on the request path: the path itself only
// stamps Exchange.sentAt once and Exchange.lastByteAt per chunk.
import type { TrafficClass } from './classes.js';
import type { Exchange } from './exchange.js';
import type { LiveList } from './live-list.js';

/** Most requests listed per upstream in UpstreamFigures.stalled (the contract's bound). */
export const STALLED_MAX = 20;

export interface StalledRequest {
  class: TrafficClass;
  /** Since the request was sent to the upstream (its latest attempt; queue wait not included). */
  inFlightMs: number;
  /** Since the last byte from the upstream; before the first, since it was sent. */
  sinceByteMs: number;
}

/** One class's in-flight requests on one upstream, in the form /metrics writes them. */
export interface ClassSilence {
  /** The longest time since a byte, among them. */
  longestSilenceMs: number;
  /** The longest in flight, among them. */
  longestInFlightMs: number;
  /** How long the one with the longest silence has been in flight (the hanging rule checks both on one request). */
  silentInFlightMs: number;
}

export interface InFlightView {
  /** Longest silence first, at most STALLED_MAX. */
  stalled: StalledRequest[];
  /** Only the classes with a request in flight. */
  byClass: Partial<Record<TrafficClass, ClassSilence>>;
}

/** `nowMono`: the same monotonic clock the exchanges were stamped with. */
export function inFlightView(running: LiveList<Exchange> | undefined, nowMono: number): InFlightView {
  if (running === undefined || running.size === 0) return { stalled: [], byClass: {} };
  const all: StalledRequest[] = [];
  const byClass: Partial<Record<TrafficClass, ClassSilence>> = {};
  for (const ex of running.values()) {
    // Admitted requests always have a class; one without is not the rule's business.
    if (ex.cls === null || ex.sentAt < 0) continue;
    const inFlightMs = Math.max(0, Math.round(nowMono - ex.sentAt));
    const sinceByteMs = Math.max(0, Math.round(nowMono - Math.max(ex.sentAt, ex.lastByteAt)));
    all.push({ class: ex.cls, inFlightMs, sinceByteMs });
    const c = byClass[ex.cls];
    if (c === undefined) {
      byClass[ex.cls] = { longestSilenceMs: sinceByteMs, longestInFlightMs: inFlightMs, silentInFlightMs: inFlightMs };
      continue;
    }
    if (inFlightMs > c.longestInFlightMs) c.longestInFlightMs = inFlightMs;
    // Equal silence: the older request speaks for the class (it is the nearer to hanging).
    if (sinceByteMs > c.longestSilenceMs || (sinceByteMs === c.longestSilenceMs && inFlightMs > c.silentInFlightMs)) {
      c.longestSilenceMs = sinceByteMs;
      c.silentInFlightMs = inFlightMs;
    }
  }
  all.sort((a, b) => b.sinceByteMs - a.sinceByteMs || b.inFlightMs - a.inFlightMs);
  return { stalled: all.slice(0, STALLED_MAX), byClass };
}
