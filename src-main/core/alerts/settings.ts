// The alert settings in force for one host: its own `alerts` block over the
// fleet-wide one over the defaults, field by field (as host health does).
import { DEFAULT_DISK_THRESHOLDS, diskThresholdsOf, type AlertsConfig, type DiskThresholds, type HostAlertsConfig } from '../config/index.js';

export { DEFAULT_DISK_THRESHOLDS, type DiskThresholds };

export interface HostAlertSettings {
  readonly disk: DiskThresholds;
  readonly throttleAfterMs: number;
  readonly eventHoldMs: number;
  readonly logFailureEveryMs: number;
}

export const DEFAULT_EVENT_HOLD_MS = 15 * 60_000;
export const DEFAULT_THROTTLE_AFTER_MS = 60_000;
export const DEFAULT_LOG_FAILURE_EVERY_MS = 10 * 60_000;
export const DEFAULT_LOG_WATCH_INTERVAL_MS = 30_000;

export function hostAlertSettingsOf(host: HostAlertsConfig | undefined, fleet: AlertsConfig | undefined): HostAlertSettings {
  return {
    disk: diskThresholdsOf(host?.disk, fleet?.disk),
    throttleAfterMs: fleet?.throttleAfterMs ?? DEFAULT_THROTTLE_AFTER_MS,
    eventHoldMs: fleet?.eventHoldMs ?? DEFAULT_EVENT_HOLD_MS,
    logFailureEveryMs: fleet?.logFailureEveryMs ?? DEFAULT_LOG_FAILURE_EVERY_MS,
  };
}

export const DEFAULT_HOST_ALERT_SETTINGS: HostAlertSettings = hostAlertSettingsOf(undefined, undefined);
