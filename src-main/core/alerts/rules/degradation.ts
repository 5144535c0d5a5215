// Degradation, like with like: per-sequence generation speed against the
// model's baseline per-sequence speed at a comparable load.
//
// - Live per-sequence speed per tick: 1 / the server's median inter-token
//   latency where it has one (vLLM's histogram), else generation tok/s ÷
//   requests running. Idle ticks (nothing running) carry no speed.
// - Window: the newest `busyMs` of busy time within the last `windowMs`
//   (60 busy s of the last 5 min): traffic with gaps is still judged, idle
//   time neither raises nor clears, and the verdict follows a slowdown within
//   about one busy minute. Fewer busy seconds than that: no verdict.
// - Running-weighted mean over the window (a second with 8 sequences weighs
//   8 times one with 1), and the mean running count is the load it is at.
// - The baseline's levels (per-sequence speed by concurrency) give the speed
//   expected at that load: interpolated between measured levels, the nearest
//   one within ×bandFactor outside them; beyond every band, no verdict.
import type { Baseline, BaselineLevel } from '../../../../src-preload/contract/index.js';
import type { ServiceTick } from '../alert-tick.js';
import type { RuleSettings } from '../rule-settings.js';
import type { RuleVerdict } from '../tracks.js';

/** A tick longer than this after the previous one is a gap in the readings, not busy time. */
const MAX_TICK_MS = 10_000;

interface Sample {
  at: number;
  dtMs: number;
  perSeq: number;
  running: number;
}

/** Per-sequence speed of one tick; null when idle or unknown. */
export function perSequenceSpeed(s: Pick<ServiceTick, 'genTokPerS' | 'running' | 'itlP50S'>): number | null {
  if (s.running === null || s.running <= 0) return null;
  if (s.itlP50S != null && s.itlP50S > 0) return 1 / s.itlP50S;
  if (s.genTokPerS === null || s.genTokPerS < 0) return null;
  return s.genTokPerS / s.running;
}

/** The per-sequence speed expected at `running` from the baseline's levels; null outside every band. */
export function expectedPerSeq(levels: readonly BaselineLevel[], running: number, bandFactor: number): number | null {
  if (levels.length === 0 || !(running > 0)) return null;
  const sorted = [...levels].sort((a, b) => a.concurrency - b.concurrency);
  const first = sorted[0]!;
  const last = sorted[sorted.length - 1]!;
  if (running <= first.concurrency) return running >= first.concurrency / bandFactor ? first.perSeqTokPerS : null;
  if (running >= last.concurrency) return running <= last.concurrency * bandFactor ? last.perSeqTokPerS : null;
  for (let i = 0; i + 1 < sorted.length; i++) {
    const a = sorted[i]!;
    const b = sorted[i + 1]!;
    if (running > b.concurrency) continue;
    const f = (running - a.concurrency) / (b.concurrency - a.concurrency);
    return a.perSeqTokPerS + f * (b.perSeqTokPerS - a.perSeqTokPerS);
  }
  return null;
}

/** One service's busy samples of the last window. */
export class DegradationWindow {
  private samples: Sample[] = [];
  private start = 0;
  private lastAt: number | null = null;

  /** Records a tick; returns its per-sequence speed (the series point). */
  push(now: number, s: ServiceTick, windowMs: number): number | null {
    const dtMs = this.lastAt === null ? 1000 : Math.min(Math.max(now - this.lastAt, 0), MAX_TICK_MS);
    this.lastAt = now;
    const perSeq = perSequenceSpeed(s);
    if (perSeq !== null && dtMs > 0) this.samples.push({ at: now, dtMs, perSeq, running: s.running! });
    while (this.start < this.samples.length && this.samples[this.start]!.at <= now - windowMs) this.start++;
    if (this.start > 512) {
      this.samples = this.samples.slice(this.start);
      this.start = 0;
    }
    return perSeq;
  }

  /** Running-weighted per-sequence speed and mean running over the newest `busyMs`; null with fewer busy ms. */
  judge(busyMs: number): { perSeq: number; running: number; busyMs: number } | null {
    let busy = 0;
    let weighted = 0;
    let weight = 0;
    for (let i = this.samples.length - 1; i >= this.start && busy < busyMs; i--) {
      const x = this.samples[i]!;
      busy += x.dtMs;
      weighted += x.perSeq * x.running * x.dtMs;
      weight += x.running * x.dtMs;
    }
    if (busy < busyMs || weight <= 0) return null;
    return { perSeq: weighted / weight, running: weight / busy, busyMs: busy };
  }
}

/** The verdict of the degradation rule for one service. */
export function degradationVerdict(window: DegradationWindow, base: Baseline | undefined, s: ServiceTick, r: RuleSettings['throughput']): RuleVerdict {
  // No baseline, or one stored before per-sequence levels (kept and shown, never guessed at): nothing to compare.
  if (base === undefined || base.levels === undefined || base.levels.length === 0) return null;
  const live = window.judge(r.busyMs);
  if (live === null) return 'unknown';
  const expected = expectedPerSeq(base.levels, live.running, r.bandFactor);
  if (expected === null) return 'unknown';
  const drop = 1 - live.perSeq / expected;
  const severity = drop * 100 >= r.criticalBelowPct ? 'critical' : drop * 100 >= r.warnBelowPct ? 'warning' : null;
  if (severity === null) return null;
  const below = severity === 'critical' ? r.criticalBelowPct : r.warnBelowPct;
  return {
    severity,
    model: s.model,
    value: round1(live.perSeq),
    threshold: round1(expected * (1 - below / 100)),
    message:
      `${s.model}: ${live.perSeq.toFixed(1)} tok/s per sequence at ~${live.running.toFixed(1)} running is ${Math.round(drop * 100)}% below ` +
      `the baseline's ${expected.toFixed(1)} tok/s per sequence at that load (${Math.round(live.busyMs / 1000)} busy s)`,
  };
}

const round1 = (x: number): number => Math.round(x * 10) / 10;
