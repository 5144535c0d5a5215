// Contract handlers of the bench capability (channels in src-preload/contract/bench.ts).
import type { benchInvokeChannels } from '../../../src-preload/contract/index.js';
import type { App } from '../app.js';
import type { HandlersFor } from './types.js';

export function benchHandlers(_app: App): HandlersFor<keyof typeof benchInvokeChannels> {
  return {};
}
