// Stable error codes of the demo capability.
export const DemoErrorCode = {
  UNKNOWN_HOST: 'DEMO_UNKNOWN_HOST',
  UNKNOWN_SERVICE: 'DEMO_UNKNOWN_SERVICE',
  BAD_OPTIONS: 'DEMO_BAD_OPTIONS',
  DISPOSED: 'DEMO_DISPOSED',
  /** Another `gpu-console demo-fleet` runs on the same folder (its known_hosts and keys). */
  FLEET_RUNNING: 'DEMO_FLEET_RUNNING',
} as const;
export type DemoErrorCode = (typeof DemoErrorCode)[keyof typeof DemoErrorCode];

declare module '../core/base/index.js' {
  interface ErrorCodeRegistry {
    demo: DemoErrorCode;
  }
}
