import { z } from 'zod';
import { HostLabelSchema, ModelNameSchema } from './primitives.js';
import { LogFailureKindSchema } from './logs.js';

// Contract of the alerts capability: what is raised (with its figure,
// threshold, window, recent series and the incident it belongs to), the
// per-model baselines the degradation rule compares against, and what a
// person does about an alert — acknowledge it, silence a rule for a while
// with a reason, read the history of a shift. Merged into the channel table
// in channels.ts.

const Empty = z.object({}).strict();

export const AlertKindSchema = z.enum([
  // degradation: per-sequence generation speed against a baseline at a comparable load
  'throughput',
  'kv_cache',
  'waiting_growing',
  'host_stale',
  // what hurts users
  'service_down',
  'error_rate',
  'hanging_requests',
  'ttft_slow',
  'queue_wait',
  'gpu_hot',
  'tunnel_flapping',
  // host health, GPU faults, logs
  'disk_low',
  'log_failure',
  'gpu_process_unknown',
  'gpu_fault',
  'gpu_throttle',
  'host_rebooted',
]);
export type AlertKind = z.infer<typeof AlertKindSchema>;
/** A rule's name for a person: the notice's title, the alert list, the handover. */
const ALERT_KIND_LABELS: Record<AlertKind, string> = {
  throughput: 'Slower per sequence',
  kv_cache: 'KV cache',
  waiting_growing: 'Queue growing',
  host_stale: 'Telemetry stale',
  service_down: 'Service down',
  error_rate: 'Errors',
  hanging_requests: 'Hanging requests',
  ttft_slow: 'Slow first token',
  queue_wait: 'Queue wait',
  gpu_hot: 'GPU hot',
  tunnel_flapping: 'Tunnel flapping',
  disk_low: 'Disk low',
  log_failure: 'Log failure',
  gpu_process_unknown: 'GPU process',
  gpu_fault: 'GPU fault',
  gpu_throttle: 'GPU throttled',
  host_rebooted: 'Rebooted',
};

/** gpu_hot's default warning temperature (°C): the rule's default and the fleet overview's hot mark read this one figure. */
export const GPU_HOT_WARN_C_DEFAULT = 87;

export const alertKindLabel = (kind: AlertKind): string => ALERT_KIND_LABELS[kind];

export const AlertSeveritySchema = z.enum(['warning', 'critical']);
export type AlertSeverity = z.infer<typeof AlertSeveritySchema>;

/** Bounds of an alert's context: enough to see an OOM and its traceback head, never a log. */
export const ALERT_CONTEXT_MAX_LINES = 40;
export const ALERT_CONTEXT_MAX_CHARS = 500;
/** Points of an alert's recent series (the small chart in the notice). */
export const ALERT_SERIES_MAX_POINTS = 120;

export const AlertContextLineSchema = z
  .object({
    /** Masked, cut to ALERT_CONTEXT_MAX_CHARS. */
    text: z.string().max(ALERT_CONTEXT_MAX_CHARS + 32),
    /** The source's own time (ms), when it has one. */
    ts: z.number().nullable(),
    /** The known failure this line shows (logs' classifier); null for a line around one. */
    failure: LogFailureKindSchema.nullable(),
  })
  .strict();
export type AlertContextLine = z.infer<typeof AlertContextLineSchema>;

/** The figure an alert judges, over its recent past: readings' own times, gaps as null (never 0). */
export const AlertSeriesSchema = z
  .object({
    /** What the figure is, for a person: `tok/s per sequence`, `% of 5xx`, `°C`. */
    unit: z.string().max(40),
    at: z.array(z.number()).max(ALERT_SERIES_MAX_POINTS),
    values: z.array(z.number().nullable()).max(ALERT_SERIES_MAX_POINTS),
  })
  .strict();
export type AlertSeries = z.infer<typeof AlertSeriesSchema>;

export const AlertAckSchema = z
  .object({
    by: z.string(),
    at: z.number(),
    note: z.string().max(500).nullable(),
  })
  .strict();
export type AlertAck = z.infer<typeof AlertAckSchema>;

export const AlertSchema = z
  .object({
    /** `kind:host[/serviceId][#part]`, stable while the condition lasts. */
    id: z.string(),
    kind: AlertKindSchema,
    severity: AlertSeveritySchema,
    host: z.string(),
    serviceId: z.string().nullable(),
    model: z.string().nullable(),
    message: z.string(),
    /** The figure that crossed the threshold, and the threshold (units per kind). */
    value: z.number().nullable(),
    threshold: z.number().nullable(),
    raisedAt: z.number(),
    updatedAt: z.number(),
    /** The window the figure is judged over (ms): 5 min of busy seconds, the error rate's 5 min…; absent for instant facts. */
    windowMs: z.number().int().positive().nullable().optional(),
    /** The judged figure's recent series, for the small chart in the notice and the list. */
    series: AlertSeriesSchema.optional(),
    /** Where the console opens on it: `hosts/<label>` or `hosts/<label>/<serviceId>`. */
    route: z.string().max(200).optional(),
    /**
     * The incident it belongs to: the id of the alert that is its root cause (a host that went down
     * holds its services' alerts); absent when it is its own cause. A grouped alert does not page.
     */
    incident: z.string().optional(),
    /** The GPU it concerns (gpu_fault, gpu_throttle, gpu_hot, gpu_process_unknown); absent otherwise. */
    gpuIndex: z.number().int().nonnegative().nullable().optional(),
    /** What the operator may run, as text to copy (the console runs nothing): `kill 4812`. */
    command: z.string().max(500).nullable().optional(),
    /** log_failure: the matching lines and a few around them, masked; kept in memory only, never audited. */
    context: z.array(AlertContextLineSchema).max(ALERT_CONTEXT_MAX_LINES).optional(),
    /** Event-like alerts: occurrences folded into this one while it is held (log lines, Xids); 1 for the first. */
    count: z.number().int().positive().optional(),
    /** Event-like alerts clear by themselves at this time unless a new event holds them longer. */
    holdUntil: z.number().optional(),
    /** Acknowledged: a person has it; no repeats, still open until it clears. */
    ack: AlertAckSchema.nullable().optional(),
    /** The silence that keeps it from paging (shown, never notified); null or absent when none. */
    silencedBy: z.string().nullable().optional(),
  })
  .strict();
export type Alert = z.infer<typeof AlertSchema>;

export const AlertEventSchema = z
  .object({
    /** `annotated`: acknowledged or (un)silenced — not news, no notice; the change itself is audited by who made it. */
    type: z.enum(['raised', 'changed', 'cleared', 'annotated']),
    at: z.number(),
    alert: AlertSchema,
    /** A change that only folds another occurrence into a held alert (its count): not news, no new notice or audit row. */
    repeat: z.boolean().optional(),
  })
  .strict();
export type AlertEvent = z.infer<typeof AlertEventSchema>;

/** One load level of a baseline: the per-sequence generation speed measured with `concurrency` requests running. */
export const BaselineLevelSchema = z
  .object({
    concurrency: z.number().positive().max(100_000),
    perSeqTokPerS: z.number().positive().max(1e7),
  })
  .strict();
export type BaselineLevel = z.infer<typeof BaselineLevelSchema>;

export const BaselineSchema = z
  .object({
    model: z.string().min(1).max(200),
    /** The aggregate tok/s it was set from (a sweep's steady level, or typed in); shown, not compared. */
    tokPerS: z.number().positive(),
    source: z.enum(['manual', 'benchmark']),
    setAt: z.number(),
    /**
     * Per-sequence speed by load level, the figure the degradation rule compares like with like.
     * A benchmark gives every complete level; a manual baseline gives one level. Absent on baselines
     * stored before per-sequence figures (they are read as one level at an unknown load: not compared).
     */
    levels: z.array(BaselineLevelSchema).max(64).optional(),
  })
  .strict();
export type Baseline = z.infer<typeof BaselineSchema>;

// ── acknowledge, silence, history ───────────────────────────────────────────

export const SILENCE_MIN_MS = 60_000;
export const SILENCE_MAX_MS = 30 * 86_400_000;

/** What a silence matches: one rule (or every rule) on a host, a service or a model; null fields match anything. */
export const SilenceScopeSchema = z
  .object({
    rule: z.union([AlertKindSchema, z.literal('all')]),
    host: HostLabelSchema.nullable(),
    serviceId: z.string().min(1).max(64).nullable(),
    model: ModelNameSchema.nullable(),
  })
  .strict();
export type SilenceScope = z.infer<typeof SilenceScopeSchema>;

export const SilenceSchema = SilenceScopeSchema.extend({
  id: z.string(),
  reason: z.string(),
  by: z.string(),
  createdAt: z.number(),
  /** It ends by itself at this time. */
  until: z.number(),
  /** Ended early by a person (unsilence); null while in force or expired by itself. */
  endedAt: z.number().nullable(),
  endedBy: z.string().nullable(),
}).strict();
export type Silence = z.infer<typeof SilenceSchema>;

export const SilenceInputSchema = z
  .object({
    rule: z.union([AlertKindSchema, z.literal('all')]),
    host: HostLabelSchema.optional(),
    serviceId: z.string().min(1).max(64).optional(),
    model: ModelNameSchema.optional(),
    /** How long, from now: at least a minute, at most 30 days (a maintenance window, not a mute). */
    forMs: z
      .number()
      .int()
      .min(SILENCE_MIN_MS, { error: 'a silence lasts at least 1 minute' })
      .max(SILENCE_MAX_MS, { error: 'a silence lasts at most 30 days' }),
    reason: z.string().trim().min(3, { error: 'say why (at least 3 characters)' }).max(500),
  })
  .strict();

/** One alert of the history: from its raise to its clear (or still open), who acknowledged it, what silenced it. */
export const AlertHistoryEntrySchema = z
  .object({
    id: z.string(),
    kind: AlertKindSchema,
    /** The worst severity it reached. */
    severity: AlertSeveritySchema,
    host: z.string(),
    serviceId: z.string().nullable(),
    message: z.string(),
    raisedAt: z.number(),
    clearedAt: z.number().nullable(),
    /** Raise to clear; null while open. */
    durationMs: z.number().nullable(),
    ackBy: z.string().nullable(),
    ackAt: z.number().nullable(),
    silencedBy: z.string().nullable(),
    incident: z.string().nullable(),
  })
  .strict();
export type AlertHistoryEntry = z.infer<typeof AlertHistoryEntrySchema>;

/** A change made by a person or the console in the window (lifecycle actions, caps changes, silences), from the audit log. */
export const HandoverChangeSchema = z
  .object({
    seq: z.number().int(),
    at: z.number(),
    type: z.string(),
    actor: z.string(),
    target: z.string().nullable(),
    summary: z.string(),
  })
  .strict();
export type HandoverChange = z.infer<typeof HandoverChangeSchema>;

export const AlertHistoryQuerySchema = z
  .object({
    /** Default: the last 12 hours (a shift). */
    fromMs: z.number().int().nonnegative().optional(),
    toMs: z.number().int().nonnegative().optional(),
    host: HostLabelSchema.optional(),
    limit: z.number().int().min(1).max(2000).default(500),
  })
  .strict();

export const AlertHistorySchema = z
  .object({
    fromMs: z.number(),
    toMs: z.number(),
    alerts: z.array(AlertHistoryEntrySchema),
    changes: z.array(HandoverChangeSchema),
    silences: z.array(SilenceSchema),
    /** True when `limit` cut the list. */
    truncated: z.boolean(),
  })
  .strict();
export type AlertHistory = z.infer<typeof AlertHistorySchema>;

export const alertsInvokeChannels = {
  'alerts.list': {
    input: Empty,
    output: z.object({ alerts: z.array(AlertSchema), baselines: z.array(BaselineSchema), silences: z.array(SilenceSchema) }).strict(),
  },
  'alerts.setBaseline': {
    input: z
      .object({
        model: ModelNameSchema,
        /** At least 0.01 tok/s: a figure below that is a typo, and its per-sequence share would round to 0. */
        tokPerS: z.number().min(0.01, { error: 'must be at least 0.01 tok/s' }).max(1e7),
        /** The load it was measured at (requests running together); default 1. */
        concurrency: z.number().int().min(1).max(4096).optional(),
      })
      .strict(),
    output: BaselineSchema,
  },
  'alerts.ack': {
    input: z.object({ id: z.string().min(1).max(300), note: z.string().max(500).optional() }).strict(),
    output: AlertSchema,
  },
  'alerts.silence': { input: SilenceInputSchema, output: SilenceSchema },
  'alerts.unsilence': { input: z.object({ id: z.string().min(1).max(100) }).strict(), output: SilenceSchema },
  'alerts.history': { input: AlertHistoryQuerySchema, output: AlertHistorySchema },
} as const;

export const alertsEventChannels = {
  /** An alert was raised, changed, cleared, acknowledged or (un)silenced. */
  'alert.changed': AlertEventSchema,
  /** The silences in force changed (set, ended, expired). */
  'alerts.silences': z.object({ silences: z.array(SilenceSchema) }).strict(),
} as const;

// ── one wording of an alert's figure (notice, CLI, list, report) ───────────

function figure(v: number): string {
  const a = Math.abs(v);
  return a >= 100 || Number.isInteger(v) ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : v.toFixed(2);
}

/** "over 5 min", "over 90 s": the window an alert's figure is judged over; null for instant facts. */
export function alertWindowText(windowMs: number | null | undefined): string | null {
  if (windowMs == null) return null;
  if (windowMs % 3_600_000 === 0) return `over ${windowMs / 3_600_000} h`;
  if (windowMs >= 60_000) return `over ${figure(windowMs / 60_000)} min`;
  return `over ${figure(windowMs / 1000)} s`;
}

/**
 * "34.0 vs threshold 60 tok/s per sequence over 5 min": the figure against its threshold, an unknown figure as "—"
 * (never 0); null for an alert without a threshold (an Xid's number or a PID is no figure to compare).
 */
export function alertFigureText(a: Pick<Alert, 'value' | 'threshold' | 'windowMs' | 'series'>): string | null {
  if (a.threshold === null) return null;
  const unit = a.series?.unit ? ` ${a.series.unit}` : '';
  const window = alertWindowText(a.windowMs);
  return `${a.value === null ? '—' : figure(a.value)} vs threshold ${figure(a.threshold)}${unit}${window ? ` ${window}` : ''}`;
}
