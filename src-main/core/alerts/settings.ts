// The alert settings in force for one host: its own `alerts` block over the
// fleet-wide one over the defaults, field by field (as host health does).
import type { AlertsConfig, HostAlertsConfig } from '../config/index.js';

export interface DiskThresholds {
  readonly freePct: number;
  readonly freeGiB: number;
  readonly clearMarginPct: number;
}

export interface HostAlertSettings {
  readonly disk: DiskThresholds;
  readonly throttleAfterMs: number;
  readonly eventHoldMs: number;
  readonly logFailureEveryMs: number;
}

export const DEFAULT_DISK_THRESHOLDS: DiskThresholds = { freePct: 10, freeGiB: 10, clearMarginPct: 10 };
export const DEFAULT_EVENT_HOLD_MS = 15 * 60_000;
export const DEFAULT_THROTTLE_AFTER_MS = 60_000;
export const DEFAULT_LOG_FAILURE_EVERY_MS = 10 * 60_000;
export const DEFAULT_LOG_WATCH_INTERVAL_MS = 30_000;

export function hostAlertSettingsOf(host: HostAlertsConfig | undefined, fleet: AlertsConfig | undefined): HostAlertSettings {
  const d = DEFAULT_DISK_THRESHOLDS;
  return {
    disk: {
      freePct: host?.disk?.freePct ?? fleet?.disk?.freePct ?? d.freePct,
      freeGiB: host?.disk?.freeGiB ?? fleet?.disk?.freeGiB ?? d.freeGiB,
      clearMarginPct: host?.disk?.clearMarginPct ?? fleet?.disk?.clearMarginPct ?? d.clearMarginPct,
    },
    throttleAfterMs: fleet?.throttleAfterMs ?? DEFAULT_THROTTLE_AFTER_MS,
    eventHoldMs: fleet?.eventHoldMs ?? DEFAULT_EVENT_HOLD_MS,
    logFailureEveryMs: fleet?.logFailureEveryMs ?? DEFAULT_LOG_FAILURE_EVERY_MS,
  };
}

export const DEFAULT_HOST_ALERT_SETTINGS: HostAlertSettings = hostAlertSettingsOf(undefined, undefined);
