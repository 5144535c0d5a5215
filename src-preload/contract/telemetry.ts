import { z } from 'zod';
import { HostLabelSchema } from './primitives.js';

// Contract of the telemetry, cost and alerts capabilities: series queries for
// the host charts, the once-per-tick live values, cost estimates and
// degradation alerts. Merged into the channel table in channels.ts by spreading
// `telemetryInvokeChannels` / `telemetryEventChannels`.

const Label = HostLabelSchema;

// Series names (`gpu.<index>.<figure>`, `svc.<serviceId>.<figure>`, `host.<figure>`)
// and MetricNameSchema: series-names.ts.
/** A metric name, or a prefix ending in `*` (`gpu.*`, `svc.qwen.*`). */
export const MetricPatternSchema = z.string().regex(/^[A-Za-z0-9_.-]{0,120}\*?$/);

export const SeriesRangeSchema = z.enum(['15m', '1h', '24h', '7d']);
export type SeriesRange = z.infer<typeof SeriesRangeSchema>;

/** Span and point spacing of each chart range (points per series ≤ 2016). */
export const SERIES_RANGES: Readonly<Record<SeriesRange, { spanMs: number; stepMs: number }>> = {
  '15m': { spanMs: 15 * 60_000, stepMs: 1_000 },
  '1h': { spanMs: 3_600_000, stepMs: 10_000 },
  '24h': { spanMs: 86_400_000, stepMs: 60_000 },
  '7d': { spanMs: 7 * 86_400_000, stepMs: 300_000 },
};

export const MetricUnitSchema = z.enum(['MiB', '%', 'W', '°C', 'tok/s', 'req', 'req/s', 's', 'tokens', 'USD/h', 'USD/1M tok', '']);
export type MetricUnit = z.infer<typeof MetricUnitSchema>;

const UNIT_BY_SUFFIX: ReadonlyArray<readonly [RegExp, MetricUnit]> = [
  [/_mib$/, 'MiB'],
  [/_pct$/, '%'],
  [/_w$/, 'W'],
  [/_c$/, '°C'],
  [/_tok_s$/, 'tok/s'],
  [/_req_s$/, 'req/s'],
  [/_s$/, 's'],
  [/_tokens$/, 'tokens'],
  [/_usd_h$/, 'USD/h'],
  [/_usd_per_mtok$/, 'USD/1M tok'],
  [/\.(running|waiting)$/, 'req'],
];

/** The unit a series name implies (names carry their unit, STYLE "Units in names"). */
export function metricUnit(metric: string): MetricUnit {
  for (const [re, unit] of UNIT_BY_SUFFIX) if (re.test(metric)) return unit;
  return '';
}

export const SeriesQuerySchema = z
  .object({
    host: Label,
    range: SeriesRangeSchema,
    /** Exact names or `prefix*`; omitted: every series of the host. */
    metrics: z.array(MetricPatternSchema).max(256).optional(),
    /** End of the range (ms epoch); default now. */
    endMs: z.number().int().nonnegative().optional(),
  })
  .strict();
export type SeriesQuery = z.infer<typeof SeriesQuerySchema>;

export const SeriesColumnSchema = z
  .object({
    metric: z.string(),
    unit: MetricUnitSchema,
    /** One value per entry of `t`: the bucket's mean; null when unknown or stale. */
    avg: z.array(z.number().nullable()),
    /** The bucket's maximum where the tier keeps it (5 min rows, 1 s memory); else null. */
    max: z.array(z.number().nullable()).nullable(),
  })
  .strict();
export type SeriesColumn = z.infer<typeof SeriesColumnSchema>;

export const SeriesResultSchema = z
  .object({
    host: z.string(),
    range: SeriesRangeSchema,
    fromMs: z.number(),
    toMs: z.number(),
    stepMs: z.number().int().positive(),
    /** Bucket start times (ms epoch), ascending; only buckets that hold data. */
    t: z.array(z.number()),
    series: z.array(SeriesColumnSchema),
    /** Storage tiers the points came from, finest first. */
    tiers: z.array(z.enum(['1s', '10s', '5m'])),
  })
  .strict();
export type SeriesResult = z.infer<typeof SeriesResultSchema>;

export const HostTickSchema = z
  .object({
    host: z.string(),
    /** `CODE: message` when this host's telemetry could not be read this tick. */
    staleReason: z.string().nullable(),
    values: z.record(z.string(), z.number().nullable()),
  })
  .strict();
export type HostTick = z.infer<typeof HostTickSchema>;

/** One event per poll interval with every host's latest values (batched, not one per metric). */
export const TelemetryTickSchema = z.object({ at: z.number(), hosts: z.array(HostTickSchema) }).strict();
export type TelemetryTick = z.infer<typeof TelemetryTickSchema>;

// ── cost ────────────────────────────────────────────────────────────────────

/** Every cost figure is an estimate; without data it is unavailable (null + reason), never 0. */
export const EstimateSchema = z
  .object({
    value: z.number().nullable(),
    unit: z.enum(['USD', 'USD/h', 'USD/day', 'USD/month', 'USD/1M tok', 'h']),
    estimate: z.literal(true),
    /** Why `value` is null. */
    unavailableReason: z.string().nullable(),
    /** How it was computed, in words an operator can check. */
    basis: z.string(),
  })
  .strict();
export type Estimate = z.infer<typeof EstimateSchema>;

export const CostWindowSchema = z.enum(['1h', '24h', '7d', '30d']);
export type CostWindow = z.infer<typeof CostWindowSchema>;

export const CostSummaryQuerySchema = z
  .object({
    window: CostWindowSchema.default('24h'),
    host: Label.optional(),
    monthlyBudgetUsd: z.number().positive().optional(),
    /** Where the window ends (ms epoch; default now, later ends are cut at now): the same figures as a report over that window. */
    endMs: z.number().int().positive().optional(),
  })
  .strict();
export type CostSummaryQuery = z.infer<typeof CostSummaryQuerySchema>;

/**
 * What a cost window holds for one host, by the one rule the UI and evidence
 * reports share: the window cut at now, and within it only the time the
 * console holds readings of the host's generation (observed); tokens no
 * reading measured are unknown (null), never 0.
 */
export const CostWindowFiguresSchema = z
  .object({
    fromMs: z.number(),
    /** The end as used: never later than when the figures were computed. */
    toMs: z.number(),
    windowSeconds: z.number().nonnegative(),
    /** Seconds of the window with a reading of the host's generation rate (0: never observed). */
    observedSeconds: z.number().nonnegative(),
    /** observed ÷ window × 100; null when the window has no length yet. */
    coveragePct: z.number().nullable(),
    /** Output tokens generated in the observed time (or, without telemetry, the proxy's counts); null when unknown. */
    outputTokens: z.number().nullable(),
    /** Where the token count comes from and what it leaves out, in words. */
    outputTokensBasis: z.string(),
    /** price per hour × observed hours. */
    observedUsd: EstimateSchema,
  })
  .strict();
export type CostWindowFigures = z.infer<typeof CostWindowFiguresSchema>;

export const HostCostSchema = z
  .object({
    host: z.string(),
    perHour: EstimateSchema,
    perDay: EstimateSchema,
    perMonth: EstimateSchema,
    perMillionOutputUsageBased: EstimateSchema,
    perMillionOutputReservationBased: EstimateSchema,
    /** Compute hours a monthly budget buys, and hours left this month before the gate. */
    budgetComputeHours: EstimateSchema,
    hoursUntilBudgetGate: EstimateSchema,
    /** The window the per-1M figures were computed over. */
    window: CostWindowFiguresSchema,
  })
  .strict();
export type HostCost = z.infer<typeof HostCostSchema>;

export const CostShareSchema = z
  .object({
    key: z.string(),
    requests: z.number().int(),
    /** Sum of the counts the requests reported; null when none did (unknown, not 0). */
    completionTokens: z.number().nullable(),
    /** Requests of the group that reported no completion token count (left out of the sum). */
    requestsWithoutTokens: z.number().int().optional(),
    gpuSeconds: z.number(),
    cost: EstimateSchema,
    perMillionOutput: EstimateSchema,
  })
  .strict();
export type CostShare = z.infer<typeof CostShareSchema>;

export const CostSummarySchema = z
  .object({
    at: z.number(),
    window: CostWindowSchema,
    hosts: z.array(HostCostSchema),
    byModel: z.array(CostShareSchema),
    byClient: z.array(CostShareSchema),
  })
  .strict();
export type CostSummary = z.infer<typeof CostSummarySchema>;

export const telemetryInvokeChannels = {
  'telemetry.series': { input: SeriesQuerySchema, output: SeriesResultSchema },
  'cost.summary': { input: CostSummaryQuerySchema, output: CostSummarySchema },
} as const;

export const telemetryEventChannels = {
  /** Every host's latest derived values, once per poll interval. */
  'telemetry.tick': TelemetryTickSchema,
} as const;
