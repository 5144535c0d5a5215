// The one cost function of the host view's cost summary (`cost.summary`) and
// of evidence reports: a host's usage over a window from its own readings,
// and every cost figure of that window. The window is cut at now, and only
// the time the console holds a reading of the host's generation counts as
// observed: reserved time it never saw is neither priced nor divided by, and
// the coverage says how much of the window that was. Tokens nobody measured
// stay unknown (null), never 0.
import { SERIES_RANGES, hostSeries, type CostWindowFigures, type Estimate, type HostCost, type SeriesQuery, type SeriesRange, type SeriesResult } from '../../../src-preload/contract/index.js';
import { budgetComputeHours, costPerMillionOutputTokens, hostPricePerHour, hoursUntilBudgetGate, runRate, type HostPrice } from './cost-math.js';
import { estimate, unavailable } from './estimate.js';
import { shareGpuTime, type RequestSpan } from './request-share.js';

export interface WindowCostSources {
  /** The series store's query (host.gen_tok_s, host.busy_pct). */
  series(q: SeriesQuery): SeriesResult;
  /** The proxy's answered requests (status < 400) that started in [fromMs, toMs), as spans. */
  requestSpans(fromMs: number, toMs: number): RequestSpan[];
  now(): number;
  /** How often the fleet reads each host: a bucket finer than that would hold a reading only now and then. */
  pollIntervalMs?(): number;
}

/** A host's usage in a window, and what it was measured over. */
export interface WindowUsage {
  fromMs: number;
  toMs: number;
  windowSeconds: number;
  observedSeconds: number;
  outputTokens: number | null;
  busySeconds: number | null;
  /** The seconds the tokens were generated in: the observed time; null when they come from proxy rows (no telemetry). */
  tokensOverSeconds: number | null;
  tokensBasis: string;
}

const RANGES: readonly SeriesRange[] = ['1h', '24h', '7d'];
const LONGEST_MS = SERIES_RANGES['7d'].spanMs;
const TIER_MS: Record<string, number> = { '1s': 1_000, '10s': 10_000, '5m': 300_000 };

/**
 * The series of [start, end) in buckets no finer than the readings behind
 * them: one reading a poll, and stored tiers of 10 s and 5 min (a 5-minute
 * row in a 10-second bucket would count 10 s for 300 s of readings).
 */
function readBuckets(src: WindowCostSources, host: string, start: number, end: number): SeriesResult {
  const minStep = Math.max(10_000, src.pollIntervalMs?.() ?? 0);
  const pick = (stepAtLeast: number) => RANGES.find((r) => SERIES_RANGES[r].spanMs >= end - start && SERIES_RANGES[r].stepMs >= stepAtLeast) ?? '7d';
  const query = (range: SeriesRange) => src.series({ host, range, metrics: [hostSeries('gen_tok_s'), hostSeries('busy_pct')], endMs: end });
  const first = query(pick(minStep));
  const coarsest = Math.max(0, ...first.tiers.map((t) => TIER_MS[t] ?? 0));
  return coarsest > first.stepMs ? query(pick(coarsest)) : first;
}

/**
 * Usage of `host` in [fromMs, min(toMs, now)). Each series bucket with a
 * generation reading counts for its overlap with the window (a bucket
 * straddling an edge counts only its inside part); a window longer than the
 * longest series range is read in 7-day pieces.
 */
export function windowUsage(src: WindowCostSources, host: string, fromMs: number, toMs: number): WindowUsage {
  const to = Math.max(fromMs, Math.min(toMs, src.now()));
  const windowSeconds = (to - fromMs) / 1000;
  let observed = 0;
  let tokens = 0;
  let busy = 0;
  for (let end = to; end > fromMs; end -= LONGEST_MS) {
    const start = Math.max(fromMs, end - LONGEST_MS);
    const r = readBuckets(src, host, start, end);
    const col = (m: string) => r.series.find((c) => c.metric === m)?.avg ?? [];
    const gen = col(hostSeries('gen_tok_s'));
    const busyPct = col(hostSeries('busy_pct'));
    for (let i = 0; i < r.t.length; i++) {
      const g = gen[i];
      if (g === null || g === undefined || !Number.isFinite(g)) continue;
      const t = r.t[i]!;
      const secs = (Math.min(t + r.stepMs, end) - Math.max(t, start)) / 1000;
      if (!(secs > 0)) continue;
      observed += secs;
      tokens += g * secs;
      busy += ((busyPct[i] ?? (g > 0 ? 100 : 0)) / 100) * secs;
    }
  }
  const base = { fromMs, toMs: to, windowSeconds, observedSeconds: observed };
  if (observed > 0) {
    return { ...base, outputTokens: tokens, busySeconds: busy, tokensOverSeconds: observed, tokensBasis: 'generation rate readings × the observed time (all traffic, through the proxy or not)' };
  }
  return { ...base, ...fromProxyRows(src.requestSpans(fromMs, to).filter((s) => s.host === host), fromMs, to) };
}

/** Without telemetry: the proxy's own counts (only what passed through it), over no known observed time. */
function fromProxyRows(spans: RequestSpan[], fromMs: number, toMs: number): Pick<WindowUsage, 'outputTokens' | 'busySeconds' | 'tokensOverSeconds' | 'tokensBasis'> {
  if (spans.length === 0) {
    return { outputTokens: null, busySeconds: null, tokensOverSeconds: null, tokensBasis: 'unknown: the console holds no reading of this host in the window and the proxy answered no request from it' };
  }
  const counted = spans.filter((s) => s.completionTokens !== null);
  const missing = spans.length - counted.length;
  const { busySecondsByHost } = shareGpuTime(spans, { fromMs, toMs });
  const host = spans[0]!.host;
  const outputTokens = counted.length ? counted.reduce((n, s) => n + s.completionTokens!, 0) : null;
  const left = missing ? `; ${missing} of ${spans.length} requests reported no token count and are not in it` : '';
  return {
    outputTokens,
    busySeconds: busySecondsByHost.get(host) ?? 0,
    tokensOverSeconds: null,
    tokensBasis:
      outputTokens === null
        ? `unknown: no generation readings, and none of the proxy's ${spans.length} requests reported a token count`
        : `the proxy's completion token counts (no generation readings in the window; traffic past the proxy is not in it)${left}`,
  };
}

/** "1.93 h"; under six minutes in seconds, so a short observation never reads "0.00 h". */
const hoursText = (s: number): string => (s < 360 ? `${Math.round(s)} s` : `${(s / 3600).toFixed(2)} h`);

/** The window's figures in the contract's shape (shared by HostCost and the report's cost rows). */
export function windowFigures(u: WindowUsage, pricePerHourUsd: number | null): CostWindowFigures {
  const coveragePct = u.windowSeconds > 0 ? Math.min(100, (u.observedSeconds / u.windowSeconds) * 100) : null;
  let observedUsd: Estimate;
  if (pricePerHourUsd === null || !(pricePerHourUsd > 0)) observedUsd = unavailable('USD', 'no price configured');
  else if (u.windowSeconds <= 0) observedUsd = unavailable('USD', 'the window has not started yet');
  else if (u.observedSeconds <= 0) observedUsd = unavailable('USD', 'the console holds no reading of this host in the window (never observed)');
  else {
    observedUsd = estimate((pricePerHourUsd * u.observedSeconds) / 3600, 'USD', `price per hour × ${hoursText(u.observedSeconds)} observed of the window's ${hoursText(u.windowSeconds)} (${(coveragePct ?? 0).toFixed(1)} %)`);
  }
  return {
    fromMs: u.fromMs,
    toMs: u.toMs,
    windowSeconds: u.windowSeconds,
    observedSeconds: u.observedSeconds,
    coveragePct,
    outputTokens: u.outputTokens,
    outputTokensBasis: u.tokensBasis,
    observedUsd,
  };
}

/** Per 1M output tokens over busy time and over the observed time, with the reason when either cannot be computed. */
function perMillion(price: number | null, u: WindowUsage): { usageBased: Estimate; reservationBased: Estimate } {
  const usageBasis = 'busy time only: price ÷ (3600 × tokens ÷ busy seconds)';
  const reservedBasis = 'observed time, idle included: price ÷ (3600 × tokens ÷ observed seconds)';
  const tokS = (secs: number | null): number | null =>
    u.outputTokens === null || secs === null ? null : secs <= 0 ? (u.outputTokens > 0 ? null : 0) : u.outputTokens / secs;
  const why = u.outputTokens === null ? 'output tokens unknown' : null;
  const usageBased = why ? unavailable('USD/1M tok', why, usageBasis) : costPerMillionOutputTokens(price, tokS(u.busySeconds), usageBasis);
  const reservationBased = why
    ? unavailable('USD/1M tok', why, reservedBasis)
    : u.tokensOverSeconds === null
      ? unavailable('USD/1M tok', 'no generation readings of this host in the window: the time it was observed is unknown', reservedBasis)
      : costPerMillionOutputTokens(price, tokS(u.tokensOverSeconds), reservedBasis);
  return { usageBased, reservationBased };
}

export interface HostCostInput extends HostPrice {
  host: string;
  usage: WindowUsage;
  monthlyBudgetUsd?: number | null;
  spentThisMonthUsd?: number | null;
}

/** Every cost figure of one host over one window, as the contract's HostCost. */
export function hostCost(input: HostCostInput): HostCost {
  const price = hostPricePerHour(input);
  const rate = runRate(price);
  const both = perMillion(price.value, input.usage);
  return {
    host: input.host,
    perHour: rate.perHour,
    perDay: rate.perDay,
    perMonth: rate.perMonth,
    perMillionOutputUsageBased: both.usageBased,
    perMillionOutputReservationBased: both.reservationBased,
    budgetComputeHours: budgetComputeHours(input.monthlyBudgetUsd ?? null, price.value),
    hoursUntilBudgetGate: hoursUntilBudgetGate(input.monthlyBudgetUsd ?? null, input.spentThisMonthUsd ?? null, price.value),
    window: windowFigures(input.usage, price.value),
  };
}
