// Contract channels of the lifecycle capability (src-preload/contract/lifecycle.ts).
// Only `actions.approve` can lead to a server being changed, and only with the
// proposal's nonce; there is deliberately no channel that runs a driver's
// steps (`actions.verifyNow` only reads the service's state).
import type { lifecycleInvokeChannels } from '../../../src-preload/contract/index.js';
import type { HandlersFor } from '../channel.js';
import type { ConsoleLifecycle } from './console-lifecycle.js';

export function lifecycleChannels(lifecycle: ConsoleLifecycle): HandlersFor<keyof typeof lifecycleInvokeChannels> {
  return {
    'actions.list': ({ limit }) => lifecycle.list(limit),
    'actions.preview': ({ upstream, kind }) => ({ draft: lifecycle.preview(upstream, kind) }),
    'actions.propose': ({ upstream, kind, reason, approveNow }, ctx) => lifecycle.propose(upstream, kind, reason, ctx.caller, approveNow),
    'actions.approve': (input, ctx) => ({ action: lifecycle.approve(input, ctx.caller) }),
    'actions.reject': (input, ctx) => ({ action: lifecycle.reject(input, ctx.caller) }),
    'actions.withdraw': (input, ctx) => ({ action: lifecycle.withdraw(input, ctx.caller) }),
    'actions.verifyNow': async ({ id }, ctx) => ({ action: await lifecycle.verifyNow(id, ctx.caller) }),
    'actions.grantStanding': (input, ctx) => ({ standing: lifecycle.grantStanding(input, ctx.caller) }),
    'actions.revokeStanding': ({ id }, ctx) => ({ standing: lifecycle.revokeStanding(id, ctx.caller) }),
  };
}
