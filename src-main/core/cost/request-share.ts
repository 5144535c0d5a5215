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
  const gpuSeconds = new Array<number>(spans.length).fill(0);
  const busySecondsByHost = new Map<string, number>();
  const byHost = new Map<string, number[]>();
  spans.forEach((s, i) => {
    const list = byHost.get(s.host) ?? [];
    list.push(i);
    byHost.set(s.host, list);
  });
  for (const [host, idxs] of byHost) {
    const events: { at: number; delta: 1 | -1; i: number }[] = [];
    for (const i of idxs) {
      const s = spans[i]!;
      let a = s.startMs;
      let b = s.endMs;
      if (window) {
        a = Math.max(a, window.fromMs);
        b = Math.min(b, window.toMs);
      }
      if (!(b > a) || !Number.isFinite(a) || !Number.isFinite(b)) continue;
      events.push({ at: a, delta: 1, i }, { at: b, delta: -1, i });
    }
    // ends before starts at the same instant: back-to-back requests do not overlap
    events.sort((x, y) => x.at - y.at || x.delta - y.delta);
    const active = new Set<number>();
    let last = 0;
    let busy = 0;
    for (const e of events) {
      if (active.size > 0 && e.at > last) {
        const share = (e.at - last) / 1000 / active.size;
        for (const i of active) gpuSeconds[i]! += share;
        busy += (e.at - last) / 1000;
      }
      last = e.at;
      if (e.delta === 1) active.add(e.i);
      else active.delete(e.i);
    }
    busySecondsByHost.set(host, busy);
  }
  return { gpuSeconds, busySecondsByHost };
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
