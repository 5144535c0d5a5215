// The advisor's rules: from one upstream's window figures to a verdict, and at
// most one caps change with the figures behind it. Pure (no clock, no I/O), so
// the replay traces judge exactly what the console judges.
//
// Order: interactive first (a person waits), then batch. A raise of slots needs
// known GPU headroom; a saturated GPU (utilisation or KV cache) gets no raise —
// more concurrency would only slow every sequence. Moving slots between classes
// (raising the reserve) adds no load and is allowed whatever the GPU does.
import type { AdvisorVerdict, PoolCaps, RecommendationKind } from '../../../src-preload/contract/index.js';
import type { WindowFigures } from './window.js';

export interface AdvisorSettings {
  /** The window the figures are taken over (default 15 min). */
  windowMs: number;
  /** Fewer answered requests (all classes) than this in the window: no verdict. */
  minRequests: number;
  /** Fewer fleet rounds than this in the window: no verdict. */
  minSamples: number;
  /** Batch queue-wait p95 at or over this (and queued in `queuedSharePct` of rounds): batch queues. */
  batchWaitMs: number;
  /** Interactive queue-wait p95 at or over this (and queued in `queuedSharePct` of rounds): interactive waits. */
  interactiveWaitMs: number;
  /** Interactive queue-wait p95 under this, and queued in fewer than `interactiveCalmQueuedPct` of rounds: interactive never waits. */
  interactiveCalmMs: number;
  interactiveCalmQueuedPct: number;
  queuedSharePct: number;
  /** GPU utilisation p95 or KV cache p95 at or over these: the GPU is the limit. */
  gpuSaturatedPct: number;
  kvSaturatedPct: number;
  /** A raise aims the busier of utilisation and KV cache at this, growing the cap at most by `maxGrowth` per step. */
  targetPct: number;
  maxGrowth: number;
  /** How often the rounds re-judge every upstream (and push `advisor.changed` on a change). */
  evaluateEveryMs: number;
}

export const DEFAULT_ADVISOR_SETTINGS: AdvisorSettings = {
  windowMs: 15 * 60_000,
  minRequests: 20,
  minSamples: 60,
  batchWaitMs: 5_000,
  interactiveWaitMs: 1_000,
  interactiveCalmMs: 250,
  interactiveCalmQueuedPct: 5,
  queuedSharePct: 20,
  gpuSaturatedPct: 95,
  kvSaturatedPct: 90,
  targetPct: 90,
  maxGrowth: 1.5,
  evaluateEveryMs: 15_000,
};

export interface Proposal {
  kind: RecommendationKind;
  title: string;
  proposed: PoolCaps;
  /** The figure the advice turns on (a queue-wait p95, ms): a rejection holds until it moves 20 %. */
  deciding: number;
}

export interface Judgement {
  verdict: AdvisorVerdict;
  because: string[];
  proposal: Proposal | null;
}

const secs = (ms: number | null): string => (ms === null ? 'unknown' : `${(ms / 1000).toFixed(1)} s`);
const pct = (x: number | null): string => (x === null ? 'unknown' : `${Math.round(x)} %`);
const mins = (ms: number): string => (ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`);

/** The span the figures cover, in words: the window, or the time since the caps changed. */
export function spanWords(f: WindowFigures, s: AdvisorSettings): string {
  return f.capsChanged ? `the ${mins(f.spanMs)} since the caps last changed` : `the last ${mins(s.windowMs)}`;
}

function gpuLine(f: WindowFigures): string {
  return `GPU utilisation p95 ${pct(f.gpuUtilP95Pct)}, KV cache p95 ${pct(f.kvCacheP95Pct)}, GPU memory p95 ${pct(f.gpuMemoryP95Pct)}`;
}

function capsLine(f: WindowFigures): string {
  const { caps } = f;
  const limit = f.slotLimit < f.slots ? ` (the server reports ${f.slotLimit})` : '';
  return `caps now: ${caps.reservedInteractive} reserved for interactive, batch ${caps.batch}, system ${caps.system}, interactive ${caps.interactive} of ${f.slots} slots${limit}`;
}

/** One upstream's verdict over its window figures. `ready` false: the upstream is draining, asleep or down. */
export function judge(f: WindowFigures, s: AdvisorSettings, ready: boolean): Judgement {
  const span = spanWords(f, s);
  if (!ready) return { verdict: 'not_ready', because: ['the upstream is not ready (draining, asleep or down): nothing to judge'], proposal: null };
  const total = f.requests.interactive + f.requests.system + f.requests.batch;
  if (total < s.minRequests || f.samples < s.minSamples) {
    return {
      verdict: 'insufficient_traffic',
      because: [`not enough traffic in ${span}: ${total} requests over ${f.samples} rounds (at least ${s.minRequests} requests and ${s.minSamples} rounds needed)`],
      proposal: null,
    };
  }
  return judgeInteractive(f, s, span) ?? judgeBatch(f, s, span) ?? balanced(f, s, span);
}

function interactiveWaits(f: WindowFigures, s: AdvisorSettings): boolean {
  const p95 = f.waitP95Ms.interactive;
  return p95 !== null && p95 >= s.interactiveWaitMs && (f.interactiveQueuedPct ?? 0) >= s.queuedSharePct;
}

function batchQueues(f: WindowFigures, s: AdvisorSettings): boolean {
  const p95 = f.waitP95Ms.batch;
  return p95 !== null && p95 >= s.batchWaitMs && (f.batchQueuedPct ?? 0) >= s.queuedSharePct;
}

function saturated(f: WindowFigures, s: AdvisorSettings): boolean {
  return (f.gpuUtilP95Pct !== null && f.gpuUtilP95Pct >= s.gpuSaturatedPct) || (f.kvCacheP95Pct !== null && f.kvCacheP95Pct >= s.kvSaturatedPct);
}

/** Interactive waits: batch crowding it out gets a bigger reserve; its own load is a slot limit. */
function judgeInteractive(f: WindowFigures, s: AdvisorSettings, span: string): Judgement | null {
  if (!interactiveWaits(f, s)) return null;
  const waited = `interactive queue wait p95 ${secs(f.waitP95Ms.interactive)} over ${span} (${f.requests.interactive} interactive requests; queued in ${pct(f.interactiveQueuedPct)} of ${f.samples} rounds)`;
  const { caps } = f;
  if ((f.batchCrowdsPct ?? 0) >= 50) {
    // Keep a slot for batch where batch has traffic (never below 1 for a class with traffic).
    const ceiling = Math.min(f.slotLimit, f.slots) - (f.requests.batch > 0 ? 1 : 0);
    const next = Math.min(ceiling, caps.reservedInteractive + Math.max(1, Math.ceil(f.interactiveQueuedP95)));
    if (next > caps.reservedInteractive) {
      const proposed = { ...caps, reservedInteractive: next, interactive: Math.max(caps.interactive, Math.min(f.slots, next)) };
      return {
        verdict: 'recommendation',
        because: [waited, `batch held slots with every slot taken in ${pct(f.batchCrowdsPct)} of the rounds where interactive queued`, gpuLine(f), capsLine(f)],
        proposal: { kind: 'raise_reserve', title: `raise the interactive reserve ${caps.reservedInteractive} → ${next}`, proposed, deciding: f.waitP95Ms.interactive! },
      };
    }
  }
  return {
    verdict: 'slot_limit',
    because: [waited, 'interactive requests fill the slots themselves: more slots on the server, or another replica, would help; a caps change would not', gpuLine(f), capsLine(f)],
    proposal: null,
  };
}

/** Batch queues: raise its cap where the reserve leaves room, else lower an idle reserve, else the slots are the limit. */
function judgeBatch(f: WindowFigures, s: AdvisorSettings, span: string): Judgement | null {
  if (!batchQueues(f, s)) return null;
  const queued = `batch queue wait p95 ${secs(f.waitP95Ms.batch)} over ${span} (${f.requests.batch} batch requests; queued in ${pct(f.batchQueuedPct)} of ${f.samples} rounds)`;
  if (saturated(f, s)) {
    return {
      verdict: 'gpu_limit',
      because: [queued, `${gpuLine(f)}: the GPU is the limit, more slots would not help — another replica would`, capsLine(f)],
      proposal: null,
    };
  }
  if (f.gpuUtilP95Pct === null && f.kvCacheP95Pct === null) {
    return { verdict: 'no_gpu_figures', because: [queued, 'no GPU utilisation or KV cache figure in the window: headroom unknown, so no raise is advised', capsLine(f)], proposal: null };
  }
  const { caps } = f;
  const batchRoom = f.slotLimit - caps.reservedInteractive;
  const deciding = f.waitP95Ms.batch!;
  if (caps.batch < batchRoom) {
    const busiest = Math.max(f.gpuUtilP95Pct ?? 0, f.kvCacheP95Pct ?? 0, 1);
    const growth = Math.min(s.maxGrowth, s.targetPct / busiest);
    const next = Math.min(batchRoom, Math.max(caps.batch + 1, Math.ceil(caps.batch * growth - 1e-9)));
    return {
      verdict: 'recommendation',
      because: [queued, `${gpuLine(f)}: headroom`, capsLine(f), `batch may use at most ${batchRoom} (the ${f.slotLimit} slots less the interactive reserve)`],
      proposal: { kind: 'raise_batch', title: `raise batch slots ${caps.batch} → ${next}`, proposed: { ...caps, batch: next }, deciding },
    };
  }
  const lowered = lowerReserve(f, s);
  if (lowered !== null) {
    const proposed = { ...caps, reservedInteractive: lowered, batch: Math.min(f.slots, Math.max(caps.batch, f.slotLimit - lowered)) };
    return {
      verdict: 'recommendation',
      because: [
        queued,
        `interactive never waits (p95 ${secs(f.waitP95Ms.interactive)}, at most ${f.interactiveInFlightP95} in flight at p95) while ${f.idleReserveP50} of its ${caps.reservedInteractive} reserved slots stood idle (median) as batch queued`,
        `${gpuLine(f)}: headroom`,
        capsLine(f),
      ],
      proposal: { kind: 'lower_reserve', title: `lower the interactive reserve ${caps.reservedInteractive} → ${lowered}`, proposed, deciding },
    };
  }
  return {
    verdict: 'slot_limit',
    because: [queued, `batch uses every slot the interactive reserve leaves (${batchRoom} of ${f.slotLimit}): the server's slots are the limit`, gpuLine(f), capsLine(f)],
    proposal: null,
  };
}

/** The smaller reserve an idle one allows, or null: never below what interactive used at p95, nor below 1 with interactive traffic. */
function lowerReserve(f: WindowFigures, s: AdvisorSettings): number | null {
  const calm = (f.waitP95Ms.interactive ?? 0) < s.interactiveCalmMs && (f.interactiveQueuedPct ?? 0) < s.interactiveCalmQueuedPct;
  if (!calm || f.idleReserveP50 === null || f.idleReserveP50 < 1) return null;
  const floor = Math.max(f.requests.interactive > 0 ? 1 : 0, Math.ceil(f.interactiveInFlightP95));
  const next = Math.max(floor, f.caps.reservedInteractive - Math.floor(f.idleReserveP50));
  return next < f.caps.reservedInteractive ? next : null;
}

function balanced(f: WindowFigures, s: AdvisorSettings, span: string): Judgement {
  return {
    verdict: 'balanced',
    because: [
      `balanced over ${span}: queue wait p95 interactive ${secs(f.waitP95Ms.interactive)}, batch ${secs(f.waitP95Ms.batch)} (${f.requests.interactive + f.requests.system + f.requests.batch} requests, ${f.samples} rounds)`,
      gpuLine(f),
    ],
    proposal: null,
  };
}
