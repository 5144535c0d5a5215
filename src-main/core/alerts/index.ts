// Alerts: degradation (throughput below a per-model baseline, KV cache nearly
// full, waiting requests growing, stale hosts) sustained before raised; host
// health, GPU faults and service log failures; raised / changed / cleared
// events on an injected clock.
export {
  AlertEngine,
  DEFAULT_ALERT_THRESHOLDS,
  alertTickFromValues,
  type AlertThresholds,
  type HostAlertTick,
  type LogFailureInput,
  type ServiceTick,
} from './alert-engine.js';
export { diskIsLow, type HostHealthAlertInput } from './health-rules.js';
export {
  hostAlertSettingsOf,
  DEFAULT_HOST_ALERT_SETTINGS,
  DEFAULT_LOG_WATCH_INTERVAL_MS,
  type HostAlertSettings,
  type DiskThresholds,
} from './settings.js';
