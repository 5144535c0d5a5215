// Alerts: degradation (throughput below a per-model baseline, KV cache nearly
// full, waiting requests growing, stale hosts) sustained before raised; host
// health, GPU faults and service log failures; raised / changed / cleared
// events on an injected clock.
export { AlertEngine, DEFAULT_ALERT_THRESHOLDS, type AlertThresholds, type LogFailureInput } from './alert-engine.js';
export { alertTickFromValues, type HostAlertTick, type ServiceTick } from './alert-tick.js';
export { diskIsLow, type HostHealthAlertInput } from './health-rules.js';
export {
  hostAlertSettingsOf,
  DEFAULT_HOST_ALERT_SETTINGS,
  DEFAULT_LOG_WATCH_INTERVAL_MS,
  type HostAlertSettings,
  type DiskThresholds,
} from './settings.js';
export { deliverAlertEvent, type AlertDeliveryDeps } from './alert-delivery.js';
export { alertsChannels } from './channels.js';
