// Lifecycle: wake / sleep / offload / restart of model services through one
// action queue with human approval (nonce + typed label), safe execution
// (drain, the approved calls verbatim, verify, resume), policies that only
// propose, standing approvals, and an audit event for every step. Drivers:
// vLLM sleep mode, a front-door router, llama-server (restart by unit /
// compose / command, ghost-on-the-port check) and its router mode.
export { LifecycleErrorCode } from './errors.js';
export { LifecycleService, type LifecycleDeps, type LifecycleOptions, type LifecycleTargetDetail, type ProposeInput, type ApproveInput } from './action-queue.js';
export { LifecyclePolicies, isStuck, type PolicyDeps } from './policies.js';
export { lifecycleTargets, policySettings, DEFAULT_POLICY, type PolicySettings } from './targets.js';
export { estimate, variantOf, DEFAULT_DURATION_MS, type TimingVariant } from './timing.js';
export { looksLikeGibberish } from './probe.js';
export type { LifecycleFleet, LifecycleProxy } from './ports.js';
export {
  driverFor,
  stepText,
  parseSsListeners,
  parseRouterModels,
  SS_COMMAND,
  RELOAD_WEIGHTS_BODY,
  type DriverIo,
  type DriverStep,
  type LifecycleDriver,
  type LifecycleTargetConfig,
  type PlanContext,
  type RestartSource,
} from './drivers/index.js';
export { restartFromConfig, restartOf } from './restart-templates.js';
export { ConsoleLifecycle, type ConsoleLifecycleDeps, type LifecycleProxyEvents } from './console-lifecycle.js';
export { StoredWakeEstimates, type WakeEstimatesDeps } from './wake-estimates.js';
export { StoredWakePolicy, type WakePolicyDeps } from './wake-policy.js';
export { lifecycleChannels } from './channels.js';
