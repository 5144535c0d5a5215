// Contract channels of captured requests (src-preload/contract/proxy-captures.ts).
import type { proxyCapturesInvokeChannels } from '../../../src-preload/contract/index.js';
import type { HandlersFor } from '../channel.js';
import type { Captures } from './captures.js';

export function captureChannels(captures: Captures): HandlersFor<keyof typeof proxyCapturesInvokeChannels> {
  return {
    'proxy.captureStatus': () => captures.status(),
    'proxy.listCaptures': (query) => ({ captures: captures.list(query) }),
    'proxy.showCapture': ({ id }, ctx) => captures.show(id, ctx.caller),
    'proxy.exportCaptures': ({ ids, query }, ctx) => captures.export(ids ? { ids } : { query: query ?? { limit: 100 } }, ctx.caller),
  };
}
