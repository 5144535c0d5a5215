import { CounterRate } from './counter-rate.js';
import { histogramDelta, histogramQuantile } from './histogram.js';
import type { EngineReading, ServiceReading } from './readings.js';
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
  /** 0–100 over the window; since the server started when the window saw no queries; null with no queries at all. */
  prefixHitPct: number | null;
  prefixHitScope: 'window' | 'cumulative' | null;
  /** 0–100: accepted ÷ drafted speculative tokens over the window (cumulative when the window drafted none). */
  specAcceptancePct: number | null;
  /**
   * 0–100: prompt tokens served from cache ÷ prompt tokens, over the window (since the server started when the
   * window saw no prompt tokens); llama-server: of the running requests.
   */
  promptCacheReusePct: number | null;
  /** Rates include running requests' progress (llama-server /slots). */
  rateBasis: 'live' | 'counters' | null;
  /** Per data-parallel engine (vLLM), when the server has the `engine` label. */
  perEngine: EngineFigures[] | null;
  ttftP50S: number | null;
  ttftP95S: number | null;
  /** The histogram bucket bound the TTFT p95 falls under: the p95 is at most this (what the UI shows, "≤ bound"). */
  ttftP95LeS: number | null;
  itlP50S: number | null;
  itlP95S: number | null;
  e2eP50S: number | null;
  e2eP95S: number | null;
  /** Requests behind the latency figures (ttft count in the window). */
  latencySamples: number;
}

export interface EngineFigures {
  engine: string;
  running: number | null;
  waiting: number | null;
  /** 0–100 */
  kvCachePct: number | null;
  genTokPerS: number | null;
}

interface WindowEntry {
  atMs: number;
  drafts: number | null;
  accepted: number | null;
  prompt: number | null;
  cached: number | null;
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
  private readonly engineGen = new Map<string, CounterRate>();

  constructor(options: ServiceDeriverOptions = {}) {
    this.windowMs = options.windowMs ?? 60_000;
  }

  /** Forget counters (the service was reconfigured or came back after a long gap). */
  reset(): void {
    this.prompt.reset();
    this.gen.reset();
    this.finished.reset();
    this.history.length = 0;
    this.engineGen.clear();
  }

  push(r: ServiceReading, atMs: number): ServiceFigures {
    const rate = (c: CounterRate, v: number | null): number | null => (v === null ? null : c.push(v, atMs));
    const entry: WindowEntry = {
      atMs,
      ttft: r.ttft,
      itl: r.itl,
      e2e: r.e2e,
      hits: r.prefixCacheHits,
      queries: r.prefixCacheQueries,
      drafts: r.specDraftTokensTotal,
      accepted: r.specAcceptedTokensTotal,
      prompt: r.promptTokensTotal,
      cached: r.promptTokensCachedTotal,
    };
    const base = this.baseline(atMs);
    this.remember(entry);

    const kvPct = r.kvCacheUsage === null ? null : r.kvCacheUsage * 100;
    const kvTokensInUse =
      r.kvTokensInUse ?? (r.kvCacheUsage !== null && r.kvCapacityTokens !== null ? Math.round(r.kvCacheUsage * r.kvCapacityTokens) : null);
    const q = (h: Histogram | null, prev: Histogram | null | undefined, quant: number): number | null =>
      base === null ? null : histogramQuantile(quant, histogramDelta(prev ?? null, h)?.buckets ?? []).value;
    const ttftDelta = base === null ? null : histogramDelta(base.ttft, r.ttft);
    const ttftP95 = ttftDelta === null ? null : histogramQuantile(0.95, ttftDelta.buckets);
    const windowHit = base === null ? null : ratioPct(base.hits, base.queries, entry.hits, entry.queries);
    const cumulativeHit = windowHit === null ? ratioPct(0, 0, entry.hits, entry.queries) : null;
    const windowSpec = base === null ? null : ratioPct(base.accepted, base.drafts, entry.accepted, entry.drafts);
    const windowCached = base === null ? null : ratioPct(base.cached, base.prompt, entry.cached, entry.prompt);
    const cachedPct = r.promptCacheReuse !== null ? r.promptCacheReuse * 100 : (windowCached ?? ratioPct(0, 0, entry.cached, entry.prompt));
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
      prefixHitPct: windowHit ?? cumulativeHit,
      prefixHitScope: windowHit !== null ? 'window' : cumulativeHit !== null ? 'cumulative' : null,
      specAcceptancePct: windowSpec ?? ratioPct(0, 0, entry.accepted, entry.drafts),
      promptCacheReusePct: cachedPct,
      rateBasis: r.promptTokensTotal === null && r.generationTokensTotal === null ? null : r.countersIncludeLive ? 'live' : 'counters',
      perEngine: this.perEngineFigures(r.perEngine, atMs),
      ttftP50S: q(r.ttft, base?.ttft, 0.5),
      ttftP95S: ttftP95?.value ?? null,
      ttftP95LeS: ttftP95?.bucketLe ?? null,
      itlP50S: q(r.itl, base?.itl, 0.5),
      itlP95S: q(r.itl, base?.itl, 0.95),
      e2eP50S: q(r.e2e, base?.e2e, 0.5),
      e2eP95S: q(r.e2e, base?.e2e, 0.95),
      latencySamples: ttftDelta?.count ?? 0,
    };
  }

  private perEngineFigures(engines: readonly EngineReading[] | null, atMs: number): EngineFigures[] | null {
    if (engines === null) return null;
    // An engine that is gone takes its counter along (the map stays as large as the engine set).
    for (const id of this.engineGen.keys()) if (!engines.some((e) => e.engine === id)) this.engineGen.delete(id);
    return engines.map((e) => this.engineFigures(e, atMs));
  }

  private engineFigures(e: EngineReading, atMs: number): EngineFigures {
    let counter = this.engineGen.get(e.engine);
    if (!counter) this.engineGen.set(e.engine, (counter = new CounterRate()));
    return {
      engine: e.engine,
      running: e.running,
      waiting: e.waiting,
      kvCachePct: e.kvCacheUsage === null ? null : e.kvCacheUsage * 100,
      genTokPerS: e.generationTokensTotal === null ? null : counter.push(e.generationTokensTotal, atMs),
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

/**
 * 100 × Δpart ÷ Δwhole between two counter snapshots (prefix hits ÷ queries,
 * accepted ÷ drafted). Counters that went back restarted inside the window:
 * count from the restart. Null when unknown or when Δwhole is 0.
 */
function ratioPct(partStart: number | null, wholeStart: number | null, partEnd: number | null, wholeEnd: number | null): number | null {
  if (partStart === null || wholeStart === null || partEnd === null || wholeEnd === null) return null;
  let dw = wholeEnd - wholeStart;
  let dp = partEnd - partStart;
  if (dw < 0 || dp < 0) {
    dw = wholeEnd;
    dp = partEnd;
  }
  if (dw <= 0) return null;
  return Math.min(100, Math.max(0, (dp / dw) * 100));
}
