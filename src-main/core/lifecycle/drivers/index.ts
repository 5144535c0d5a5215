// Lifecycle drivers: how one kind of server is woken, put to sleep, offloaded
// or restarted. A driver only PLANS calls and reads state; the action queue
// executes the approved plan, so no driver can change a server on its own.
import type { LifecycleDriverName } from '../../../../src-preload/contract/index.js';
import { llamaRouterDriver } from './llama-router.js';
import { llamaServerDriver } from './llama-server.js';
import { routerDriver } from './router.js';
import { sshCommandDriver } from './ssh-command.js';
import type { LifecycleDriver, LifecycleTargetConfig } from './types.js';
import { vllmSleepDriver } from './vllm-sleep.js';

export {
  stepText,
  type CheckOutcome,
  type CheckTiming,
  type DriverCheck,
  type DriverIo,
  type DriverStep,
  type HttpAnswer,
  type LifecycleDriver,
  type LifecycleTargetConfig,
  type PlanContext,
  type RestartSource,
} from './types.js';
export { RELOAD_WEIGHTS_BODY } from './vllm-sleep.js';
export { restartFailureHint } from './restart-command.js';
export { parseSsListeners, SS_COMMAND, type PortHolder, type PortListing } from './port-owner.js';
export { parseRouterModels, type RouterModelState } from './llama-checks.js';

const FACTORIES: Record<LifecycleDriverName, (t: LifecycleTargetConfig) => LifecycleDriver> = {
  'vllm-sleep': vllmSleepDriver,
  router: routerDriver,
  'ssh-command': sshCommandDriver,
  'llama-server': llamaServerDriver,
  'llama-router': llamaRouterDriver,
};

export function driverFor(target: LifecycleTargetConfig): LifecycleDriver {
  return FACTORIES[target.driver](target);
}
