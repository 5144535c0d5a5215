import { CounterRate } from './counter-rate.js';
import { histogramDelta, histogramQuantile } from './histogram.js';
import type { ServiceReading } from './readings.js';
import type { Histogram } from './vllm-metrics.js';

// Figures an operator reads, derived from one service's successive readings:
// counter rates per scrape interval (a reset skips one interval, see CounterRate),
// and windowed figures (prefix-cache hit rate, latency percentiles) from the
// DELTA of cumulative counters between the window's start and now.

export interface ServiceFigures {
  atMs: number;
  running: number | null;
  waiting: number | null;
  /** 0–100. */
  kvCachePct: number | null;
  kvTokensInUse: number | null;
  kvCapacityTokens: number | null;
  promptTokPerS: number | null;
  genTokPerS: number | null;
  /** Finished requests per second. */
  requestsPerS: number | null;
  /** 0–100 over the window; null with no queries in it. */
  prefixHitPct: number | null;
  ttftP50S: number | null;
  ttftP95S: number | null;
  itlP50S: number | null;
  itlP95S: number | null;
  e2eP50S: number | null;
  e2eP95S: number | null;
  /** Requests behind the latency figures (ttft count in the window). */
  latencySamples: number;
}

interface WindowEntry {
  atMs: number;
  ttft: Histogram | null;
  itl: Histogram | null;
  e2e: Histogram | null;
  hits: number | null;
  queries: number | null;
}

export interface ServiceDeriverOptions {
  /** Window for percentiles and the hit rate. Default 60 s. */
  windowMs?: number;
}

/** Keeps about this many snapshots per window whatever the poll rate (bounded memory). */
const SNAPSHOTS_PER_WINDOW = 30;

export class ServiceDeriver {
  readonly windowMs: number;
  private readonly prompt = new CounterRate();
  private readonly gen = new CounterRate();
  private readonly finished = new CounterRate();
  private readonly history: WindowEntry[] = [];

  constructor(options: ServiceDeriverOptions = {}) {
    this.windowMs = options.windowMs ?? 60_000;
  }

  /** Forget counters (the service was reconfigured or came back after a long gap). */
  reset(): void {
    this.prompt.reset();
    this.gen.reset();
    this.finished.reset();
    this.history.length = 0;
  }

  push(r: ServiceReading, atMs: number): ServiceFigures {
    const rate = (c: CounterRate, v: number | null): number | null => (v === null ? null : c.push(v, atMs));
    const entry: WindowEntry = { atMs, ttft: r.ttft, itl: r.itl, e2e: r.e2e, hits: r.prefixCacheHits, queries: r.prefixCacheQueries };
    const base = this.baseline(atMs);
    this.remember(entry);

    const kvPct = r.kvCacheUsage === null ? null : r.kvCacheUsage * 100;
    const kvTokensInUse =
      r.kvTokensInUse ?? (r.kvCacheUsage !== null && r.kvCapacityTokens !== null ? Math.round(r.kvCacheUsage * r.kvCapacityTokens) : null);
    const q = (h: Histogram | null, prev: Histogram | null | undefined, quant: number): number | null =>
      base === null ? null : histogramQuantile(quant, histogramDelta(prev ?? null, h)?.buckets ?? []).value;
    const ttftDelta = base === null ? null : histogramDelta(base.ttft, r.ttft);
    return {
      atMs,
      running: r.running,
      waiting: r.waiting,
      kvCachePct: kvPct,
      kvTokensInUse,
      kvCapacityTokens: r.kvCapacityTokens,
      promptTokPerS: rate(this.prompt, r.promptTokensTotal),
      genTokPerS: rate(this.gen, r.generationTokensTotal),
      requestsPerS: rate(this.finished, r.requestsFinishedTotal),
      prefixHitPct: base === null ? null : hitRate(base, entry),
      ttftP50S: q(r.ttft, base?.ttft, 0.5),
      ttftP95S: q(r.ttft, base?.ttft, 0.95),
      itlP50S: q(r.itl, base?.itl, 0.5),
      itlP95S: q(r.itl, base?.itl, 0.95),
      e2eP50S: q(r.e2e, base?.e2e, 0.5),
      e2eP95S: q(r.e2e, base?.e2e, 0.95),
      latencySamples: ttftDelta?.count ?? 0,
    };
  }

  /** The oldest snapshot inside the window (the window's start); null before a second reading. */
  private baseline(atMs: number): WindowEntry | null {
    const from = atMs - this.windowMs;
    while (this.history.length > 1 && this.history[1]!.atMs <= from) this.history.shift();
    const first = this.history[0];
    return first !== undefined && first.atMs < atMs ? first : null;
  }

  private remember(entry: WindowEntry): void {
    const last = this.history[this.history.length - 1];
    if (last !== undefined && entry.atMs <= last.atMs) return;
    // Thin out: keep a snapshot only every windowMs / SNAPSHOTS_PER_WINDOW.
    const spacing = this.windowMs / SNAPSHOTS_PER_WINDOW;
    if (last !== undefined && this.history.length > 1 && entry.atMs - this.history[this.history.length - 2]!.atMs < spacing) {
      this.history[this.history.length - 1] = entry;
      return;
    }
    this.history.push(entry);
    if (this.history.length > SNAPSHOTS_PER_WINDOW * 4) this.history.shift();
  }
}

function hitRate(start: WindowEntry, end: WindowEntry): number | null {
  if (start.hits === null || start.queries === null || end.hits === null || end.queries === null) return null;
  let dq = end.queries - start.queries;
  let dh = end.hits - start.hits;
  if (dq < 0 || dh < 0) {
    // counters restarted inside the window: count from the restart
    dq = end.queries;
    dh = end.hits;
  }
  if (dq <= 0) return null;
  return Math.min(100, Math.max(0, (dh / dq) * 100));
}
