// Contract channels of the parallelism advisor (src-preload/contract/advisor.ts).
import type { advisorInvokeChannels } from '../../../src-preload/contract/index.js';
import type { HandlersFor } from '../channel.js';
import type { AdvisorService } from './service.js';

export function advisorChannels(advisor: AdvisorService): HandlersFor<keyof typeof advisorInvokeChannels> {
  return {
    'advisor.list': () => advisor.list(),
    'advisor.apply': ({ id }, ctx) => advisor.apply(id, ctx.caller),
    'advisor.reject': ({ id, reason }, ctx) => advisor.reject(id, reason, ctx.caller),
  };
}
