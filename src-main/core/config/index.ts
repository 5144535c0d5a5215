// Config: the YAML hosts inventory (hosts, ssh, services, ports), its zod
// schema, parsing with errors that name file, line and field, and the service
// that keeps the last good config across reloads.
export {
  ConfigSchema,
  HostConfigSchema,
  ServiceConfigSchema,
  ProxyConfigSchema,
  type ProxyConfig,
  type ProxyUpstreamConfig,
  SshConfigSchema,
  SshTransportSchema,
  GpuConfigSchema,
  type Config,
  type ConfigInput,
  type HostConfig,
  type ServiceConfig,
  type LifecycleConfig,
  type SshConfig,
  type SshTransport,
  type GpuConfig,
  type GpuTool,
  type PrometheusSourceConfig,
  type HostTelemetryConfig,
  type TelemetryConfig,
} from './schema.js';
export { parseConfig, validateConfig, loadConfigFile, defaultConfigPath, expandHomePath, type ParseConfigOptions } from './parse.js';
export { ConfigService, redactedView, type ConfigServiceOptions } from './service.js';
export { ConfigErrorCode, type ConfigIssue } from './errors.js';
export { LogSourceSchema, type LogSourceConfig } from './log-source.js';
export { HealthConfigSchema, type HealthConfig } from './health-schema.js';
export { ClientsConfigSchema, modelsReached, pricedModels, type ClientLimitsConfig, type ClientsConfig } from './clients-schema.js';
export { DEFAULT_HEALTH_PATH, healthPathOf } from './service-kind.js';
export { DEFAULT_DISK_THRESHOLDS, diskMarginOf, diskThresholdsOf, diskThresholdText, type DiskMargin, type DiskThresholds } from './disk-margin.js';
export { AlertsConfigSchema, HostAlertsConfigSchema, ALERT_WINDOW_MAX_MS, type AlertsConfig, type HostAlertsConfig, type DiskAlertConfig, type AlertRulesConfig, type ModelAlertRulesConfig } from './alerts-schema.js';
export { aliasProblem, hostProblem, jumpHostProblem, parseJumpHop, pathProblem, unbracketHost, userProblem, HOST_RULE, USER_RULE, type JumpHop } from './ssh-grammar.js';
export { type ModelShaping, type ModelsConfig } from './models-schema.js';
