// Contract handlers of the proxy capability (channels in src-preload/contract/proxy.ts).
import type { proxyInvokeChannels } from '../../../src-preload/contract/index.js';
import type { App } from '../app.js';
import type { HandlersFor } from './types.js';

export function proxyHandlers(_app: App): HandlersFor<keyof typeof proxyInvokeChannels> {
  return {};
}
