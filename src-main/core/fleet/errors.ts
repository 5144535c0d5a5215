// Stable codes for the fleet engine.

export const FleetErrorCode = {
  UNKNOWN_HOST: 'FLEET_UNKNOWN_HOST',
  UNKNOWN_SERVICE: 'FLEET_UNKNOWN_SERVICE',
  TUNNEL_NOT_READY: 'FLEET_TUNNEL_NOT_READY',
  HOST_NOT_CONNECTED: 'FLEET_HOST_NOT_CONNECTED',
  DISPOSED: 'FLEET_DISPOSED',
  PROBE_FAILED: 'FLEET_PROBE_FAILED',
  PROBE_TIMEOUT: 'FLEET_PROBE_TIMEOUT',
  PROBE_HTTP_STATUS: 'FLEET_PROBE_HTTP_STATUS',
  NO_IDENTITY_FILE: 'FLEET_NO_IDENTITY_FILE',
} as const;

export type FleetErrorCode = (typeof FleetErrorCode)[keyof typeof FleetErrorCode];

declare module '../base/index.js' {
  interface ErrorCodeRegistry {
    fleet: FleetErrorCode;
  }
}
