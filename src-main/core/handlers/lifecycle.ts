// Contract handlers of the lifecycle capability (channels in src-preload/contract/lifecycle.ts).
// Only `actions.approve` can lead to a server being changed, and only with the
// proposal's nonce; there is deliberately no channel that runs a driver.
import type { lifecycleInvokeChannels } from '../../../src-preload/contract/index.js';
import type { App } from '../app.js';
import type { HandlersFor } from './types.js';

export function lifecycleHandlers(app: App): HandlersFor<keyof typeof lifecycleInvokeChannels> {
  return {
    'actions.list': ({ limit }) => app.lifecycle.list(limit),
    'actions.propose': ({ upstream, kind, reason }, ctx) => app.lifecycle.propose(upstream, kind, reason, ctx.caller),
    'actions.approve': (input, ctx) => ({ action: app.lifecycle.approve(input, ctx.caller) }),
    'actions.reject': (input, ctx) => ({ action: app.lifecycle.reject(input, ctx.caller) }),
    'actions.grantStanding': (input, ctx) => ({ standing: app.lifecycle.grantStanding(input, ctx.caller) }),
    'actions.revokeStanding': ({ id }, ctx) => ({ standing: app.lifecycle.revokeStanding(id, ctx.caller) }),
  };
}
