// Alerts from host health, GPU faults and service logs (`alerts:` fleet-wide,
// `hosts[].alerts` per host): when a disk counts as low, how long a GPU may
// slow down, how long an event-like alert (Xid, reboot, log failure) is held,
// how often a service's log failures may raise a new alert, and how often logs
// are read for failures. Every field is optional: alerts/settings.ts fills the
// defaults, so a host's block replaces only the fields it names.
import { z } from 'zod';
import { intRange } from './number-fields.js';

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
  })
  .strict();

export type DiskAlertConfig = z.infer<typeof DiskAlertConfigSchema>;
export type AlertsConfig = z.infer<typeof AlertsConfigSchema>;
export type HostAlertsConfig = z.infer<typeof HostAlertsConfigSchema>;
