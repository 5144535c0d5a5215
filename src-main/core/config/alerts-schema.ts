// Alerts from host health, GPU faults and service logs (`alerts:` fleet-wide,
// `hosts[].alerts` per host): when a disk counts as low, how long a GPU may
// slow down, how long an event-like alert (Xid, reboot, log failure) is held,
// how often a service's log failures may raise a new alert, and how often logs
// are read for failures. Every field is optional: alerts/settings.ts fills the
// defaults, so a host's block replaces only the fields it names.
//
// Rules (`rules:`): each alert rule's threshold, how long its condition must
// hold before it is raised (sustainMs) and be gone before it clears
// (clearMs), and `enabled: false` to turn it off. Three places, most specific
// last, field by field:
//
//   alerts:
//     rules:                      # fleet-wide
//       error_rate: { thresholdPct: 5, minAnswers: 20 }
//       ttft_slow: { targetsMs: { interactive: 10000, batch: 120000 } }
//     models:
//       Qwen3.6-27B-FP8:          # a service's `model`; unknown names are refused
//         rules:
//           ttft_slow: { targetsMs: { interactive: 20000 } }
//   hosts:
//     - label: gpu-a
//       alerts:
//         rules:                  # this host
//           gpu_hot: { warnC: 90 }
//           tunnel_flapping: { enabled: false }
//
// A model's rules are over its host's, which are over the fleet's.
// Durations may not exceed ALERT_WINDOW_MAX_MS: the rules judge the recent
// series the console keeps in memory (telemetry/series-store.ts keeps 1 h at
// 1 s), so a longer sustain could never be seen whole.
import { z } from 'zod';
import { intRange } from './number-fields.js';

/** The in-memory window of recent series (SeriesStore's memoryWindowMs default): no rule can judge longer. */
export const ALERT_WINDOW_MAX_MS = 3_600_000;
const durationMs = () =>
  z
    .number({ error: 'must be a number of milliseconds' })
    .int({ error: 'must be a whole number of milliseconds' })
    .min(0, { error: 'must be 0 or more' })
    .max(ALERT_WINDOW_MAX_MS, { error: `must be at most ${ALERT_WINDOW_MAX_MS} (the 1 h of recent series kept in memory)` });
const positiveMs = () => durationMs().min(1, { error: 'must be more than 0' });
const pct = () => z.number({ error: 'must be a number' }).gt(0, { error: 'must be more than 0' }).max(100, { error: 'must be at most 100' });
const count = (max: number) => z.number({ error: 'must be a number' }).int({ error: 'must be a whole number' }).min(1, { error: 'must be 1 or more' }).max(max, { error: `must be at most ${max}` });
const celsius = () => z.number({ error: 'must be a number' }).gt(0, { error: 'must be more than 0' }).max(150, { error: 'must be at most 150' });

const common = {
  /** false turns the rule off (for this scope). */
  enabled: z.boolean({ error: 'must be true or false' }),
  /** The condition must hold this long before the alert is raised. */
  sustainMs: durationMs(),
  /** The condition must be gone this long before the alert clears. */
  clearMs: durationMs(),
};
const rule = <T extends z.ZodRawShape>(fields: T) => z.object({ ...common, ...fields }).partial().strict();

/** Per traffic class, in ms; a target of 0 makes no sense (every request would break it). */
const ClassTargetsSchema = z.object({ interactive: positiveMs(), system: positiveMs(), batch: positiveMs() }).partial().strict();

export const AlertRulesConfigSchema = z
  .object({
    /** Per-sequence generation speed below the baseline at a comparable load. Defaults 30 % / 50 %, 5 min window, 60 busy s. */
    throughput: rule({ warnBelowPct: pct(), criticalBelowPct: pct(), windowMs: positiveMs(), busyMs: positiveMs(), bandFactor: z.number({ error: 'must be a number' }).min(1, { error: 'must be 1 or more' }).max(100, { error: 'must be at most 100' }) }),
    /** KV cache use above thresholdPct (default 95). */
    kv_cache: rule({ thresholdPct: pct() }),
    /** Waiting requests growing over windowMs (default 60 s) without draining. */
    waiting_growing: rule({ windowMs: positiveMs() }),
    /** The host's telemetry could not be read (sustain default 30 s). */
    host_stale: rule({}),
    /** The server's health fails while its host is connected (critical; sustain 15 s). */
    service_down: rule({}),
    /** Failed answers at the proxy over its 5 min window above thresholdPct (5) with at least minAnswers (20); critical at criticalPct (25). */
    error_rate: rule({ thresholdPct: pct(), criticalPct: pct(), minAnswers: count(1_000_000) }),
    /** A request in flight longer than inFlightMs (120 s) with no byte for silentMs (60 s). */
    hanging_requests: rule({ inFlightMs: positiveMs(), silentMs: positiveMs() }),
    /** TTFT p95 per class over its target (interactive 10 s; none for system/batch unless set), with minRequests (10) answers in the minute. */
    ttft_slow: rule({ targetsMs: ClassTargetsSchema, minRequests: count(1_000_000) }),
    /** Queue wait p95 per class above sharePct (50) of its hold budget. */
    queue_wait: rule({ sharePct: pct(), minRequests: count(1_000_000) }),
    /** GPU temperature at or above warnC (87); critical at criticalC, else the driver's critical temperature when known. */
    gpu_hot: rule({ warnC: celsius(), criticalC: celsius() }),
    /** reconnects (3) drops of the SSH session within windowMs (10 min). */
    tunnel_flapping: rule({ reconnects: count(1000), windowMs: positiveMs() }),
  })
  .partial()
  .strict();

/** Rules a model's override may name: those judged per service. */
export const ModelAlertRulesConfigSchema = AlertRulesConfigSchema.pick({
  throughput: true,
  kv_cache: true,
  waiting_growing: true,
  service_down: true,
  error_rate: true,
  hanging_requests: true,
  ttft_slow: true,
  queue_wait: true,
});

const diskFields = {
  /** Free below this share of the disk (percent) is low. Default 10. */
  freePct: z.number({ error: 'must be a number' }).min(0, { error: 'must be between 0 and 100' }).max(100, { error: 'must be between 0 and 100' }),
  /** Free below this many GiB is low (either one is enough). Default 10. */
  freeGiB: z.number({ error: 'must be a number' }).min(0, { error: 'must be 0 or more' }).max(1_000_000, { error: 'must be at most 1000000' }),
  /** A low disk clears only once free is this much (percent of each threshold) above both. Default 10. */
  clearMarginPct: intRange(0, 100),
};

export const DiskAlertConfigSchema = z.object(diskFields).partial().strict();

export const HostAlertsConfigSchema = z
  .object({
    /** This host's disk thresholds; each field overrides the fleet-wide `alerts.disk`. */
    disk: DiskAlertConfigSchema.optional(),
    /** This host's rules over the fleet-wide `alerts.rules`. */
    rules: AlertRulesConfigSchema.optional(),
  })
  .strict();

export const AlertsConfigSchema = z
  .object({
    disk: DiskAlertConfigSchema.optional(),
    /** A GPU slowed down (heat, HW slowdown, power brake) for longer than this raises gpu_throttle. Default 60 s. */
    throttleAfterMs: intRange(0, 3_600_000).optional(),
    /** Event-like alerts (Xid, ECC rise, reboot, log failure) clear this long after their last event. Default 15 min. */
    eventHoldMs: intRange(10_000, 86_400_000).optional(),
    /** One log_failure alert per service per this window; later failure lines are counted into it. Default 10 min. */
    logFailureEveryMs: intRange(10_000, 86_400_000).optional(),
    /** How often each watched service's log is read for failure lines; 0 turns log watching off. Default 30 s. */
    logWatchIntervalMs: z.union([z.literal(0), intRange(5_000, 3_600_000)]).optional(),
    /** Fleet-wide rule settings (see the top of this file). */
    rules: AlertRulesConfigSchema.optional(),
    /** Per served model name: its rules over its host's. */
    models: z.record(z.string().min(1).max(200), z.object({ rules: ModelAlertRulesConfigSchema.optional() }).strict()).optional(),
  })
  .strict();

/** `alerts.models` names that no service serves (its `model`, any case; aliases are not model names): refused with their field. */
export function alertModelIssues(alerts: AlertsConfig | undefined, served: ReadonlySet<string>): { path: (string | number)[]; message: string }[] {
  return Object.keys(alerts?.models ?? {})
    .filter((name) => !served.has(name.toLowerCase()))
    .map((name) => ({ path: ['alerts', 'models', name], message: `no service serves a model called "${name}" (the model of a hosts[].services entry)` }));
}

export type DiskAlertConfig = z.infer<typeof DiskAlertConfigSchema>;
export type AlertsConfig = z.infer<typeof AlertsConfigSchema>;
export type HostAlertsConfig = z.infer<typeof HostAlertsConfigSchema>;
export type AlertRulesConfig = z.infer<typeof AlertRulesConfigSchema>;
export type ModelAlertRulesConfig = z.infer<typeof ModelAlertRulesConfigSchema>;
