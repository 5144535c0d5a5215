// Degradation alerts: throughput below a per-model baseline, KV cache nearly
// full, waiting requests growing, stale hosts — sustained before raised, with
// raised / changed / cleared events on an injected clock.
export {
  AlertEngine,
  DEFAULT_ALERT_THRESHOLDS,
  alertTickFromValues,
  type AlertThresholds,
  type HostAlertTick,
  type ServiceTick,
} from './alert-engine.js';
