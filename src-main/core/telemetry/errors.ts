// Stable codes for telemetry: scrapes that fail and output we cannot read.

export const TelemetryErrorCode = {
  SCRAPE_FAILED: 'TELEMETRY_SCRAPE_FAILED',
  SCRAPE_TIMEOUT: 'TELEMETRY_SCRAPE_TIMEOUT',
  HTTP_STATUS: 'TELEMETRY_HTTP_STATUS',
  BODY_TOO_LARGE: 'TELEMETRY_BODY_TOO_LARGE',
  EXEC_FAILED: 'TELEMETRY_EXEC_FAILED',
  UNPARSEABLE: 'TELEMETRY_UNPARSEABLE',
  /** The endpoint answered something else than Prometheus text (an HTML page, JSON). */
  NOT_METRICS: 'TELEMETRY_NOT_METRICS',
  /** llama-server answers 503 "Loading model" while it loads. */
  SERVER_LOADING: 'TELEMETRY_SERVER_LOADING',
  /** An nvidia-smi field this driver does not know (the field list is probed again). */
  UNKNOWN_FIELD: 'TELEMETRY_UNKNOWN_FIELD',
  /** The host shows no GPU tool (no nvidia-smi, amd-smi, rocm-smi, amdgpu sysfs). */
  NO_GPU_TOOL: 'TELEMETRY_NO_GPU_TOOL',
  /** A file the GPU reader needs could not be read (amdgpu sysfs: missing, or no permission). */
  UNREADABLE_FILE: 'TELEMETRY_UNREADABLE_FILE',
  /** A JSON endpoint answered valid JSON of an unexpected shape or size. */
  UNEXPECTED_SHAPE: 'TELEMETRY_UNEXPECTED_SHAPE',
  /** The series store was used after close. */
  STORE_CLOSED: 'TELEMETRY_STORE_CLOSED',
  /** A metric family the server's kind exports (SGLang, TEI) is not on its /metrics page: that figure is unknown. */
  FAMILY_MISSING: 'TELEMETRY_FAMILY_MISSING',
} as const;

export type TelemetryErrorCode = (typeof TelemetryErrorCode)[keyof typeof TelemetryErrorCode];

/** Codes of the Prometheus source beyond the shared TELEMETRY_* transport codes. */
export const PrometheusErrorCode = {
  /** Prometheus answered `status: error` (bad matcher, query timeout, overload). */
  QUERY_ERROR: 'TELEMETRY_PROMETHEUS_QUERY_ERROR',
  /** No series match: wrong matchers, or Prometheus does not scrape the target. */
  NO_DATA: 'TELEMETRY_PROMETHEUS_NO_DATA',
  /** Prometheus scrapes the target but the scrape fails (`up` is 0). */
  TARGET_DOWN: 'TELEMETRY_PROMETHEUS_TARGET_DOWN',
  /** The newest sample is older than `staleAfterMs`: Prometheus stopped scraping the target. */
  STALE: 'TELEMETRY_PROMETHEUS_STALE',
} as const;
export type PrometheusErrorCode = (typeof PrometheusErrorCode)[keyof typeof PrometheusErrorCode];

declare module '../base/index.js' {
  interface ErrorCodeRegistry {
    telemetry: TelemetryErrorCode;
    prometheus: PrometheusErrorCode;
  }
}
