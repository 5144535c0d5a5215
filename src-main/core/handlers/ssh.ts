// Contract handlers of the ssh capability (channels in src-preload/contract/ssh.ts).
import type { sshInvokeChannels } from '../../../src-preload/contract/index.js';
import type { App } from '../app.js';
import type { HandlersFor } from './types.js';

export function sshHandlers(_app: App): HandlersFor<keyof typeof sshInvokeChannels> {
  return {};
}
