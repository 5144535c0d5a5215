import type { CostShare } from '../../../src-preload/contract/telemetry.js';
import { estimate, unavailable } from './estimate.js';

// GPU cost of requests (field-notes §5): price per hour × the request's share
// of GPU time ÷ 3600, sharing the time among concurrent requests on the same
// host so that no second is counted twice. A sweep over start/end events splits
// each host's time into pieces; a piece with k requests in flight gives each
// of them 1/k of its duration. Idle time is nobody's (reservation-based cost
// shows it).

export interface RequestSpan {
  startMs: number;
  endMs: number;
  model: string | null;
  client: string;
  completionTokens: number | null;
  /** Which host served it (its price applies; concurrency is shared per host). */
  host: string;
}

export interface ShareResult {
  /** GPU-seconds attributed to each request, in input order. */
  gpuSeconds: number[];
  /** Per host: seconds with at least one request in flight. */
  busySecondsByHost: Map<string, number>;
}

export function shareGpuTime(spans: readonly RequestSpan[], window?: { fromMs: number; toMs: number }): ShareResult {
  const startMs = new Float64Array(spans.length);
  const endMs = new Float64Array(spans.length);
  spans.forEach((s, i) => {
    startMs[i] = s.startMs;
    endMs[i] = s.endMs;
  });
  const { gpuSeconds, busySecondsByHost } = shareGpuTimeColumns({ startMs, endMs, host: spans.map((s) => s.host) }, window);
  return { gpuSeconds: Array.from(gpuSeconds), busySecondsByHost };
}

/** Spans as columns (a window of request rows read without an object per row): index i is one request. */
export interface SpanColumns {
  startMs: Float64Array;
  endMs: Float64Array;
  host: readonly string[];
}

/** shareGpuTime over columns; the figures are the same function's. */
export function shareGpuTimeColumns(spans: SpanColumns, window?: { fromMs: number; toMs: number }): { gpuSeconds: Float64Array; busySecondsByHost: Map<string, number> } {
  const gpuSeconds = new Float64Array(spans.startMs.length);
  const busySecondsByHost = new Map<string, number>();
  const byHost = new Map<string, number[]>();
  spans.host.forEach((host, i) => {
    const list = byHost.get(host);
    if (list) list.push(i);
    else byHost.set(host, [i]);
  });
  for (const [host, idxs] of byHost) busySecondsByHost.set(host, shareOneHost(spans, idxs, window, gpuSeconds));
  return { gpuSeconds, busySecondsByHost };
}

/**
 * One host's sweep. With k(t) requests in flight, a request's share is the integral of 1/k(t) over
 * its span, so it is C(end) − C(start) for the running integral C: starts and ends are sorted apart
 * (typed arrays, no object per event), merged once to give C at every start and end, and each request
 * looks its two values up. Ends count before starts at the same instant: back-to-back requests do not
 * overlap. Returns the host's busy seconds (time with at least one request in flight).
 */
function shareOneHost(spans: SpanColumns, idxs: readonly number[], window: { fromMs: number; toMs: number } | undefined, out: Float64Array): number {
  const from = new Float64Array(idxs.length);
  const to = new Float64Array(idxs.length);
  const kept: number[] = [];
  for (const i of idxs) {
    const a = window ? Math.max(spans.startMs[i]!, window.fromMs) : spans.startMs[i]!;
    const b = window ? Math.min(spans.endMs[i]!, window.toMs) : spans.endMs[i]!;
    if (!(b > a) || !Number.isFinite(a) || !Number.isFinite(b)) continue;
    from[kept.length] = a;
    to[kept.length] = b;
    kept.push(i);
  }
  const m = kept.length;
  const starts = from.slice(0, m).sort();
  const ends = to.slice(0, m).sort();
  const times = new Float64Array(2 * m);
  const cum = new Float64Array(2 * m);
  let si = 0;
  let ei = 0;
  let active = 0;
  let last = 0;
  let c = 0;
  let busy = 0;
  for (let p = 0; p < 2 * m; p++) {
    const isEnd = ei < m && (si >= m || ends[ei]! <= starts[si]!);
    const t = isEnd ? ends[ei]! : starts[si]!;
    if (active > 0 && t > last) {
      c += (t - last) / 1000 / active;
      busy += (t - last) / 1000;
    }
    last = t;
    times[p] = t;
    cum[p] = c;
    if (isEnd) {
      active--;
      ei++;
    } else {
      active++;
      si++;
    }
  }
  for (let r = 0; r < m; r++) out[kept[r]!] = cumulativeAt(times, cum, to[r]!) - cumulativeAt(times, cum, from[r]!);
  return busy;
}

/** C(t) at a time that is one of the breakpoints (all breakpoints at one instant hold the same C). */
function cumulativeAt(times: Float64Array, cum: Float64Array, t: number): number {
  let lo = 0;
  let hi = times.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (times[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return cum[lo]!;
}

/**
 * Cost per model or per client: Σ (GPU-seconds × that host's price ÷ 3600).
 * `priceOf(host)` null → that request's cost is unknown and the group's cost
 * is unavailable rather than understated.
 */
export function costShares(
  spans: readonly RequestSpan[],
  keyOf: (s: RequestSpan) => string,
  priceOf: (host: string) => number | null,
  window?: { fromMs: number; toMs: number },
): CostShare[] {
  const { gpuSeconds } = shareGpuTime(spans, window);
  const groups = new Map<string, { requests: number; tokens: number; tokensKnown: boolean; missing: number; secs: number; usd: number; priced: boolean }>();
  spans.forEach((s, i) => {
    const key = keyOf(s);
    const g = groups.get(key) ?? { requests: 0, tokens: 0, tokensKnown: false, missing: 0, secs: 0, usd: 0, priced: true };
    g.requests++;
    if (s.completionTokens !== null) {
      g.tokens += s.completionTokens;
      g.tokensKnown = true;
    } else g.missing++;
    const secs = gpuSeconds[i]!;
    g.secs += secs;
    const price = priceOf(s.host);
    if (price === null) g.priced = g.priced && secs === 0;
    else g.usd += (price * secs) / 3600;
    groups.set(key, g);
  });
  return [...groups.entries()]
    .map(([key, g]): CostShare => {
      const cost = g.priced
        ? estimate(g.usd, 'USD', 'GPU time shared among concurrent requests × host price')
        : unavailable('USD', 'a host that served these requests has no price configured');
      const perMillionOutput =
        cost.value === null
          ? unavailable('USD/1M tok', cost.unavailableReason ?? 'cost unknown')
          : !g.tokensKnown || g.tokens <= 0
            ? unavailable('USD/1M tok', 'no completion tokens recorded')
            : estimate((cost.value / g.tokens) * 1e6, 'USD/1M tok', 'shared GPU cost ÷ completion tokens × 10⁶');
      return { key, requests: g.requests, completionTokens: g.tokensKnown ? g.tokens : null, requestsWithoutTokens: g.missing, gpuSeconds: g.secs, cost, perMillionOutput };
    })
    .sort((a, b) => (b.cost.value ?? -1) - (a.cost.value ?? -1) || a.key.localeCompare(b.key));
}

/** What the cost split needs of one of the proxy's answered request rows (proxy's requestWindows().answered). */
export interface RequestSpanRow {
  ts: number;
  total_ms: number;
  model: string | null;
  client: string;
  tokens_out: number | null;
  upstream: string | null;
}

/** The proxy's request rows as spans. `upstream` is `label/serviceId`. */
export function spanFromRequestRow(row: RequestSpanRow): RequestSpan | null {
  if (row.upstream === null) return null;
  const host = row.upstream.split('/')[0] ?? row.upstream;
  return { startMs: row.ts, endMs: row.ts + row.total_ms, model: row.model, client: row.client, completionTokens: row.tokens_out, host };
}
