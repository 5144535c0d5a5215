// Contract handlers of the lifecycle capability (channels in src-preload/contract/lifecycle.ts).
import type { lifecycleInvokeChannels } from '../../../src-preload/contract/index.js';
import type { App } from '../app.js';
import type { HandlersFor } from './types.js';

export function lifecycleHandlers(_app: App): HandlersFor<keyof typeof lifecycleInvokeChannels> {
  return {};
}
