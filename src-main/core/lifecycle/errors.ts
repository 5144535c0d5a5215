export const LifecycleErrorCode = {
  UNKNOWN_SERVICE: 'LIFECYCLE_UNKNOWN_SERVICE',
  UNSUPPORTED_ACTION: 'LIFECYCLE_UNSUPPORTED_ACTION',
  /** The change would do nothing: wake an awake service, sleep or offload one that is asleep. */
  NOT_APPLICABLE: 'LIFECYCLE_NOT_APPLICABLE',
  TEMPLATE_INVALID: 'LIFECYCLE_TEMPLATE_INVALID',
  NOT_FOUND: 'LIFECYCLE_NOT_FOUND',
  NOT_APPROVED: 'LIFECYCLE_NOT_APPROVED',
  BAD_NONCE: 'LIFECYCLE_BAD_NONCE',
  NONCE_USED: 'LIFECYCLE_NONCE_USED',
  ALREADY_DECIDED: 'LIFECYCLE_ALREADY_DECIDED',
  EXPIRED: 'LIFECYCLE_EXPIRED',
  LABEL_MISMATCH: 'LIFECYCLE_LABEL_MISMATCH',
  BUSY: 'LIFECYCLE_BUSY',
  TARGET_GONE: 'LIFECYCLE_TARGET_GONE',
  PLAN_CHANGED: 'LIFECYCLE_PLAN_CHANGED',
  STEP_FAILED: 'LIFECYCLE_STEP_FAILED',
  STANDING_NOT_FOUND: 'LIFECYCLE_STANDING_NOT_FOUND',
  /** After a restart the process that held the service's port before still holds it. */
  GHOST_PROCESS: 'LIFECYCLE_GHOST_PROCESS',
  /** llama-server router mode: the router reports the model failed to load (its exit code in details). */
  ROUTER_LOAD_FAILED: 'LIFECYCLE_ROUTER_LOAD_FAILED',
  /** llama-server router mode: GET /models does not list the model. */
  ROUTER_MODEL_UNKNOWN: 'LIFECYCLE_ROUTER_MODEL_UNKNOWN',
  /** driver llama-router, but GET /models has no per-model status: not a router. */
  NOT_ROUTER_MODE: 'LIFECYCLE_NOT_ROUTER_MODE',
  /** Verify now is only for an action the console stopped in the middle of. */
  NOT_INTERRUPTED: 'LIFECYCLE_NOT_INTERRUPTED',
  /** The console is shutting down: no new approval starts a run. */
  DISPOSED: 'LIFECYCLE_DISPOSED',
} as const;
export type LifecycleErrorCode = (typeof LifecycleErrorCode)[keyof typeof LifecycleErrorCode];

declare module '../base/index.js' {
  interface ErrorCodeRegistry {
    lifecycle: LifecycleErrorCode;
  }
}
