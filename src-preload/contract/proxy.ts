import { z } from 'zod';
import { TokenBudgetUseSchema, TokenLimitFieldSchema, TokenLimitsPatchSchema, TokenLimitsSchema } from './proxy-tokens.js';

// Contract channels of the proxy capability, merged into the channel table in channels.ts.
// The local OpenAI-compatible endpoint: client tokens, per-upstream priority
// pools (slots and per-class caps), live queue figures and the request log.

export const TrafficClassSchema = z.enum(['interactive', 'system', 'batch']);
export type TrafficClass = z.infer<typeof TrafficClassSchema>;

/** `label/serviceId` of a model service. */
export const UpstreamKeySchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}\/[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/);

export const TokenNameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, {
  error: 'must start with a letter or digit and use only letters, digits, ".", "_" and "-" (at most 64)',
});

/** Per-class concurrency caps of one upstream; `reservedInteractive` slots are never given to system or batch. */
export const PoolCapsSchema = z
  .object({
    reservedInteractive: z.number().int().min(0).max(1024),
    interactive: z.number().int().min(0).max(1024),
    system: z.number().int().min(0).max(1024),
    batch: z.number().int().min(0).max(1024),
  })
  .strict();
export type PoolCaps = z.infer<typeof PoolCapsSchema>;

export const ClassFiguresSchema = z
  .object({
    class: TrafficClassSchema,
    inFlight: z.number().int(),
    queued: z.number().int(),
    /** Queue wait over the last minute (ms); null with no samples. */
    waitP50Ms: z.number().nullable(),
    waitP95Ms: z.number().nullable(),
    /** Time to first byte of the answer, measured at the proxy (ms). */
    ttftP50Ms: z.number().nullable(),
    ttftP95Ms: z.number().nullable(),
    /** Answered requests per second over the last minute. */
    requestsPerS: z.number(),
    /** Completion tokens per second over the last minute. */
    tokensOutPerS: z.number(),
    completed: z.number().int(),
    rejected: z.number().int(),
    /** How long a request of this class may wait in the queue before it is refused (config proxy.holdBudgetMs). */
    holdBudgetMs: z.number().optional(),
  })
  .strict();
export type ClassFigures = z.infer<typeof ClassFiguresSchema>;

/**
 * Latency of the generation requests the proxy relayed to one upstream over the last
 * minute, all classes together, measured at the proxy (from the request's arrival, queue
 * wait included): time to first byte of streamed answers, and end-to-end time of all.
 */
export const ProxyLatencySchema = z
  .object({
    ttftP50Ms: z.number().nullable(),
    ttftP95Ms: z.number().nullable(),
    e2eP50Ms: z.number().nullable(),
    e2eP95Ms: z.number().nullable(),
    /** Answers the end-to-end figures are over; streamed ones (the TTFT figures') apart. */
    requests: z.number().int(),
    streamed: z.number().int(),
  })
  .strict();
export type ProxyLatency = z.infer<typeof ProxyLatencySchema>;

export const UpstreamStateSchema = z.enum(['ready', 'draining', 'sleeping', 'down']);
export type UpstreamState = z.infer<typeof UpstreamStateSchema>;

export const UpstreamFiguresSchema = z
  .object({
    upstream: UpstreamKeySchema,
    label: z.string(),
    serviceId: z.string(),
    model: z.string(),
    aliases: z.array(z.string()),
    state: UpstreamStateSchema,
    slots: z.number().int(),
    caps: PoolCapsSchema,
    inFlight: z.number().int(),
    queued: z.number().int(),
    /** Mean service time the ETAs are computed from (ms); null before the first answer. */
    serviceMsEstimate: z.number().nullable(),
    classes: z.array(ClassFiguresSchema),
    /** Share of its model's traffic against the other replicas (config `proxy.upstreams.<key>.weight`, default 1). */
    weight: z.number().optional(),
    /** Requests the proxy sent to this replica since start (failovers included). */
    routed: z.number().int().optional(),
    /** Skipped for a few seconds after a failure before the first byte (another replica takes its requests). */
    failing: z.boolean().optional(),
    latency: ProxyLatencySchema.optional(),
    /**
     * Answers to clients over the last `windowMs` (5 min): all of them, and those that failed on the
     * upstream's side: any 5xx the client got (from the server, or the proxy's for it: refused or reset
     * 502, deadline 504, tunnel down / draining / asleep 503), the line Prometheus draws with status=~"5..".
     * Client errors (4xx), queue refusals (429) and clients that left (499) are not failures of the server.
     */
    errors: z.object({ windowMs: z.number().int().positive(), answered: z.number().int().nonnegative(), failed: z.number().int().nonnegative() }).strict().optional(),
    /**
     * Requests in flight on this upstream, longest silence first (at most 20): how long each has been
     * in flight (since it was sent to the server; queue wait not included) and since its last byte from
     * the server (since it was sent, before the first byte). Empty with none in flight.
     */
    stalled: z.array(z.object({ class: TrafficClassSchema, inFlightMs: z.number().nonnegative(), sinceByteMs: z.number().nonnegative() }).strict()).max(20).optional(),
  })
  .strict();
export type UpstreamFigures = z.infer<typeof UpstreamFiguresSchema>;

/** A name clients request and where it goes: one model's replicas, or a group alias's models in fallback order. */
export const ModelRouteViewSchema = z
  .object({
    name: z.string(),
    kind: z.enum(['model', 'group']),
    /** The models tried in order (a plain model: itself). */
    chain: z.array(z.string()),
    /** The replicas (`label/serviceId`) of every model in `chain`, in that order. */
    replicas: z.array(UpstreamKeySchema),
    aliases: z.array(z.string()),
  })
  .strict();
export type ModelRouteView = z.infer<typeof ModelRouteViewSchema>;

/** The request log's own figures since start: while the data folder is full, rows wait (bounded) and the oldest beyond that are dropped. */
export const RequestLogCountsSchema = z
  .object({
    written: z.number().int().nonnegative(),
    /** Rows given up for good because writes failed (full disk, I/O error) past the backlog. */
    dropped: z.number().int().nonnegative(),
    /** Rows waiting in memory to be written. */
    pending: z.number().int().nonnegative(),
    /** When writes began to fail; null while they land. */
    failingSince: z.number().nullable(),
  })
  .strict();
export type RequestLogCounts = z.infer<typeof RequestLogCountsSchema>;

export const ProxyStatsSchema = z
  .object({
    at: z.number(),
    url: z.string().nullable(),
    /** Requests answered since start. */
    answered: z.number().int(),
    inFlight: z.number().int(),
    queued: z.number().int(),
    upstreams: z.array(UpstreamFiguresSchema),
    /** Models (with their replicas) and group aliases, as /v1/models lists them. */
    models: z.array(ModelRouteViewSchema).optional(),
    /** Requests that went to another replica or model after a failure before the first byte, since start. */
    failovers: z.number().int().optional(),
    /** The request log's written / dropped / waiting rows (absent where the proxy keeps no log). */
    requestLog: RequestLogCountsSchema.optional(),
  })
  .strict();
export type ProxyStats = z.infer<typeof ProxyStatsSchema>;

export const TokenViewSchema = z
  .object({
    name: z.string(),
    maxClass: TrafficClassSchema,
    /** First characters of the token, enough to tell tokens apart; never the token. */
    prefix: z.string(),
    createdAt: z.number(),
    revokedAt: z.number().nullable(),
    lastUsedAt: z.number().nullable(),
    /** The limits in force (proxy-tokens.ts). */
    limits: TokenLimitsSchema,
    /** Fields set by config `proxy.clients.<name>`: they win and cannot be set from the UI or CLI. */
    configFields: z.array(TokenLimitFieldSchema),
    /** Spend this month against the budget; null without a budget. */
    budget: TokenBudgetUseSchema.nullable(),
  })
  .strict();
export type TokenView = z.infer<typeof TokenViewSchema>;

export const RequestRowSchema = z
  .object({
    seq: z.number().int(),
    id: z.string(),
    ts: z.number(),
    client: z.string(),
    class: TrafficClassSchema.nullable(),
    endpoint: z.string(),
    model: z.string().nullable(),
    upstream: z.string().nullable(),
    stream: z.boolean(),
    status: z.number().int(),
    errorCode: z.string().nullable(),
    queueMs: z.number(),
    ttftMs: z.number().nullable(),
    totalMs: z.number(),
    tokensIn: z.number().int().nullable(),
    tokensOut: z.number().int().nullable(),
    bytesIn: z.number().int(),
    bytesOut: z.number().int(),
    replayed: z.boolean(),
    /** The client's trace (its X-Request-Id, or its traceparent's trace-id); null: `id` is the trace. */
    traceId: z.string().nullable(),
  })
  .strict();
export type RequestRow = z.infer<typeof RequestRowSchema>;

const Empty = z.object({}).strict();

export const RequestQuerySchema = z
  .object({
    limit: z.number().int().min(1).max(2000).default(500),
    beforeSeq: z.number().int().positive().optional(),
    model: z.string().max(200).optional(),
    class: TrafficClassSchema.optional(),
    outcome: z.enum(['all', 'ok', 'error']).default('all'),
    /** One trace: rows whose client trace id, or own id, is exactly this. */
    trace: z.string().min(1).max(128).optional(),
  })
  .strict();
export type RequestQuery = z.infer<typeof RequestQuerySchema>;

/** How long the request log keeps rows (config `proxy.requestLog`) and what it holds now. */
export const RequestLogRetentionSchema = z
  .object({
    maxAgeDays: z.number().nullable(),
    maxRows: z.number().int().nullable(),
    rowsKept: z.number().int(),
    oldestTs: z.number().nullable(),
    lastPrunedAt: z.number().nullable(),
    lastPrunedRows: z.number().int().nullable(),
  })
  .strict();
export type RequestLogRetention = z.infer<typeof RequestLogRetentionSchema>;

export const proxyInvokeChannels = {
  'proxy.snapshot': { input: Empty, output: ProxyStatsSchema },
  'proxy.listTokens': { input: Empty, output: z.object({ tokens: z.array(TokenViewSchema) }).strict() },
  /** The token is in this answer only; the console keeps its hash. */
  'proxy.createToken': {
    input: z.object({ name: TokenNameSchema, maxClass: TrafficClassSchema.default('interactive'), limits: TokenLimitsPatchSchema.optional() }).strict(),
    output: z.object({ token: z.string(), view: TokenViewSchema }).strict(),
  },
  /** Changes a live token's class or limits (each change audited old → new); a config-owned field is refused. */
  'proxy.setToken': {
    input: z.object({ name: TokenNameSchema, maxClass: TrafficClassSchema.optional(), limits: TokenLimitsPatchSchema.default({}) }).strict(),
    output: z.object({ view: TokenViewSchema }).strict(),
  },
  'proxy.revokeToken': {
    input: z.object({ name: TokenNameSchema }).strict(),
    output: z.object({ view: TokenViewSchema }).strict(),
  },
  'proxy.setCaps': {
    input: z.object({ upstream: UpstreamKeySchema, caps: PoolCapsSchema }).strict(),
    output: z.object({ upstream: z.string(), caps: PoolCapsSchema }).strict(),
  },
  'proxy.requests': {
    input: RequestQuerySchema,
    output: z.object({ rows: z.array(RequestRowSchema), retention: RequestLogRetentionSchema }).strict(),
  },
} as const;

export const proxyEventChannels = {
  /** Queue and latency figures per upstream and class, about once a second. */
  'proxy.stats': ProxyStatsSchema,
} as const;
