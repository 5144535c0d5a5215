// Stable codes for the fleet engine.

export const FleetErrorCode = {
  UNKNOWN_HOST: 'FLEET_UNKNOWN_HOST',
  UNKNOWN_SERVICE: 'FLEET_UNKNOWN_SERVICE',
  TUNNEL_NOT_READY: 'FLEET_TUNNEL_NOT_READY',
  HOST_NOT_CONNECTED: 'FLEET_HOST_NOT_CONNECTED',
  DISPOSED: 'FLEET_DISPOSED',
} as const;

export type FleetErrorCode = (typeof FleetErrorCode)[keyof typeof FleetErrorCode];
