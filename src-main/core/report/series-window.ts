// A report's series: the window's buckets of a store query (means only), and
// another query answered from rows already read when it asks for nothing more.
import { SERIES_RANGES, type SeriesQuery, type SeriesRange, type SeriesResult } from '../../../src-preload/contract/index.js';
import type { Clock, Logger } from '../base/index.js';
import type { ReportSeries, ReportSources } from './builder.js';

/** The series store as a report reads it. */
export interface ReportSeriesStore {
  query(q: SeriesQuery): SeriesResult;
  /** query() and, per bucket, whether any series matching `anyOf` holds a value (SeriesStore.queryWithPresence). */
  queryWithPresence(q: SeriesQuery, anyOf: readonly string[]): { result: SeriesResult; present: boolean[] };
}

const RANGES: SeriesRange[] = ['15m', '1h', '24h', '7d'];

/**
 * One build's reads of the series store: `series` for charts and coverage (the finest range spanning the
 * window), and `reader(host)` for that host's cost, which reads the rows its charts were read from.
 */
export function reportSeriesReads(
  store: ReportSeriesStore,
  clock: Clock,
  logger: Logger,
): { series: ReportSources['series']; reader(host: string): ((q: SeriesQuery) => SeriesResult) | undefined } {
  const held = new Map<string, SeriesHeld>();
  const series = (host: string, fromMs: number, toMs: number, metrics: string[], anyOf?: string[]): ReportSeries | null => {
    const range = RANGES.find((r) => SERIES_RANGES[r].spanMs >= toMs - fromMs) ?? '7d';
    try {
      const q = { host, range, metrics, endMs: Math.min(toMs, clock.now()) };
      const { result, present } = anyOf ? store.queryWithPresence(q, anyOf) : { result: store.query(q), present: undefined };
      held.set(host, { query: q, result });
      return windowOf(result, present, fromMs, toMs);
    } catch (err) {
      logger.warn('series query for a report failed', { host, error: (err as Error).message });
      return null;
    }
  };
  const reader = (host: string) => {
    const h = held.get(host);
    return h ? (q: SeriesQuery) => projected(h, q) ?? store.query(q) : undefined;
  };
  return { series, reader };
}

/** A query and what the store answered. */
export interface SeriesHeld {
  query: SeriesQuery;
  result: SeriesResult;
}

/**
 * The buckets of `r` inside [fromMs, toMs). Reports read the means only: the maxima are dropped rather than
 * copied (a 7-day window of 64 hosts holds 129,000 buckets of each series until the build ends).
 */
export function windowOf(r: SeriesResult, present: readonly boolean[] | undefined, fromMs: number, toMs: number): ReportSeries {
  const keep: number[] = [];
  r.t.forEach((t, i) => {
    if (t + r.stepMs > fromMs && t < toMs) keep.push(i);
  });
  const all = keep.length === r.t.length;
  const pick = <T>(values: readonly T[]): T[] => (all ? [...values] : keep.map((i) => values[i]!));
  return {
    ...r,
    t: all ? r.t : keep.map((i) => r.t[i]!),
    series: r.series.map((c) => ({ ...c, avg: all ? c.avg : keep.map((i) => c.avg[i] ?? null), max: null })),
    ...(present ? { present: pick(present) } : {}),
  };
}

/**
 * `q` answered from `held` when it asks the same host, range and end for exact series names that the held
 * query named too: the store's answer to `q` itself (a bucket's presence and a column's values do not depend
 * on the other columns read). Null when it cannot be.
 */
export function projected(held: SeriesHeld, q: SeriesQuery): SeriesResult | null {
  const h = held.query;
  if (q.host !== h.host || q.range !== h.range || q.endMs !== h.endMs || q.metrics === undefined || h.metrics === undefined) return null;
  if (!q.metrics.every((m) => !m.includes('*') && h.metrics!.includes(m))) return null;
  const wanted = new Set(q.metrics);
  const series = held.result.series.filter((c) => wanted.has(c.metric));
  // The store answers a query none of whose series it holds with no buckets at all.
  return series.length ? { ...held.result, series } : { ...held.result, t: [], series: [], tiers: [] };
}
