import { z } from 'zod';
import { printable } from './primitives.js';
import { PoolCapsSchema, UpstreamKeySchema } from './proxy.js';

// Contract channels of the parallelism advisor, merged into the channel table in channels.ts.
// Recommendations, never actions: findings over the proxy's queue waits and slot use and the
// GPUs' utilisation over a window, each with the figures behind it. A person applies one
// (the same audited caps change as by hand) or rejects it; nothing is applied by itself.

export { AdvisorErrorCode } from './codes.js';

/** raise_batch: more batch slots; lower_reserve: fewer slots held for interactive; raise_reserve: more of them. */
export const RecommendationKindSchema = z.enum(['raise_batch', 'lower_reserve', 'raise_reserve']);
export type RecommendationKind = z.infer<typeof RecommendationKindSchema>;

const PerClassCount = z.object({ interactive: z.number().int(), system: z.number().int(), batch: z.number().int() }).strict();
const PerClassMs = z.object({ interactive: z.number().nullable(), system: z.number().nullable(), batch: z.number().nullable() }).strict();

/** The figures a verdict stands on, over the window; null is unknown (never 0). */
export const AdvisorFiguresSchema = z
  .object({
    /** Fleet rounds sampled in the window (slot use, GPU, KV cache). */
    samples: z.number().int(),
    /** Requests the proxy answered per class in the window (refusals included). */
    requests: PerClassCount,
    /** Queue wait p95 per class over the window (ms); null with no request of that class. */
    waitP95Ms: PerClassMs,
    /** Share of samples (0–100) in which batch requests queued, and in which interactive ones did. */
    batchQueuedPct: z.number().nullable(),
    interactiveQueuedPct: z.number().nullable(),
    /** Median of reserved interactive slots left idle while batch queued; null when batch never queued. */
    idleReserveP50: z.number().nullable(),
    /** p95 over the window of the busiest GPU serving the upstream (%), of its memory use, and of the server's KV cache. */
    gpuUtilP95Pct: z.number().nullable(),
    gpuMemoryP95Pct: z.number().nullable(),
    kvCacheP95Pct: z.number().nullable(),
    /** The most slots a proposal may use: the proxy's slots, or fewer where the server reports fewer. */
    slotLimit: z.number().int(),
  })
  .strict();
export type AdvisorFigures = z.infer<typeof AdvisorFiguresSchema>;

export const RecommendationSchema = z
  .object({
    /** Stable for the same advice on the same figures bucket. */
    id: z.string().regex(/^adv_[0-9a-f]{16}$/),
    upstream: UpstreamKeySchema,
    kind: RecommendationKindSchema,
    /** One line, e.g. "raise batch slots 8 → 12". */
    title: z.string(),
    /** Why, in lines with the figures and the window. */
    because: z.array(z.string()),
    figures: AdvisorFiguresSchema,
    current: PoolCapsSchema,
    proposed: PoolCapsSchema,
    slots: z.number().int(),
    windowMs: z.number().int().positive(),
    /** When it was computed (epoch ms). */
    at: z.number(),
  })
  .strict();
export type Recommendation = z.infer<typeof RecommendationSchema>;

/** Why an upstream has no recommendation (or that it has one), for the empty state. */
export const AdvisorVerdictSchema = z.enum([
  'recommendation',
  'balanced',
  'insufficient_traffic',
  'gpu_limit',
  'slot_limit',
  'no_gpu_figures',
  'rejected',
  'not_ready',
]);
export type AdvisorVerdict = z.infer<typeof AdvisorVerdictSchema>;

export const UpstreamAdviceSchema = z
  .object({
    upstream: UpstreamKeySchema,
    verdict: AdvisorVerdictSchema,
    because: z.array(z.string()),
  })
  .strict();
export type UpstreamAdvice = z.infer<typeof UpstreamAdviceSchema>;

export const AdvisorListSchema = z
  .object({
    recommendations: z.array(RecommendationSchema),
    /** Every upstream's verdict, those without a recommendation included. */
    upstreams: z.array(UpstreamAdviceSchema),
    windowMs: z.number().int().positive(),
    at: z.number(),
  })
  .strict();
export type AdvisorList = z.infer<typeof AdvisorListSchema>;

const RecommendationIdSchema = z.string().regex(/^adv_[0-9a-f]{16}$/, { error: 'must be a recommendation id (adv_ and 16 hex digits)' });

export const AdvisorApplyInputSchema = z.object({ id: RecommendationIdSchema }).strict();
export const AdvisorRejectInputSchema = z.object({ id: RecommendationIdSchema, reason: printable(500).optional() }).strict();

export const advisorInvokeChannels = {
  'advisor.list': { input: z.object({}).strict(), output: AdvisorListSchema },
  'advisor.apply': { input: AdvisorApplyInputSchema, output: z.object({ upstream: UpstreamKeySchema, caps: PoolCapsSchema }).strict() },
  'advisor.reject': { input: AdvisorRejectInputSchema, output: z.object({ id: z.string() }).strict() },
} as const;

export const advisorEventChannels = {
  /** The recommendations changed (a new computation, an apply, a reject). */
  'advisor.changed': AdvisorListSchema,
} as const;
