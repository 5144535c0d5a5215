// Contract channels of the playground (src-preload/contract/playground.ts).
import type { playgroundInvokeChannels } from '../../../src-preload/contract/index.js';
import type { HandlersFor } from '../channel.js';
import type { PlaygroundService } from './playground.js';

export function playgroundChannels(playground: PlaygroundService): HandlersFor<keyof typeof playgroundInvokeChannels> {
  return {
    // The call's signal is the panel's Stop: aborting it closes the request at the proxy.
    'playground.send': (input, ctx) => playground.send(input, ctx.signal),
  };
}
