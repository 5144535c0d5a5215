// Alerts: degradation (per-sequence speed below the model's baseline at a
// comparable load), what hurts users (a server down, failed answers, hanging
// requests, slow first tokens, queue waits near the hold budget, hot GPUs, a
// flapping SSH session), KV cache, waiting requests, stale hosts; host health,
// GPU faults and service log failures; one incident per cause; raised /
// changed / cleared events on an injected clock.
export { AlertEngine, DEFAULT_ALERT_THRESHOLDS, type AlertThresholds, type AlertRulesSource, type LogFailureInput } from './alert-engine.js';
export { alertTickFromValues, withReadings, type AlertHostReadings, type HostAlertTick, type ServiceTick, type ProxyTick, type GpuTick } from './alert-tick.js';
export { DEFAULT_RULE_SETTINGS, type RuleSettings, type RuleName } from './rule-settings.js';
export { perSequenceSpeed, expectedPerSeq } from './rules/degradation.js';
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
// The alert book: acknowledgements, silences, what pages, a shift's history.
export { AlertOps, checkScope, type AlertOpsDeps, type AlertSource, type HistoryQuery } from './alert-ops.js';
export type { AlertBookFace, BaselinesFace } from './channels.js';
export { SilenceBook, silenceMatches, MAX_SILENCES_IN_FORCE, SILENCES_SETTING, type SilencesChange } from './silences.js';
export { alertHistoryFrom, handoverChangesFrom, changeSummary, DEFAULT_HISTORY_MS, HISTORY_LOOKBACK_MS, ALERT_ROW_PREFIXES, CHANGE_ROW_PREFIXES } from './history.js';
export { silencesFromAudit } from './history.js';
