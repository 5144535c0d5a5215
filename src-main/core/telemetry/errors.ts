// Stable codes for telemetry: scrapes that fail and output we cannot read.

export const TelemetryErrorCode = {
  SCRAPE_FAILED: 'TELEMETRY_SCRAPE_FAILED',
  SCRAPE_TIMEOUT: 'TELEMETRY_SCRAPE_TIMEOUT',
  HTTP_STATUS: 'TELEMETRY_HTTP_STATUS',
  BODY_TOO_LARGE: 'TELEMETRY_BODY_TOO_LARGE',
  EXEC_FAILED: 'TELEMETRY_EXEC_FAILED',
  UNPARSEABLE: 'TELEMETRY_UNPARSEABLE',
} as const;

export type TelemetryErrorCode = (typeof TelemetryErrorCode)[keyof typeof TelemetryErrorCode];
