// Contract handlers of the proxy capability (channels in src-preload/contract/proxy.ts).
import type { proxyInvokeChannels } from '../../../src-preload/contract/index.js';
import type { App } from '../app.js';
import type { HandlersFor } from './types.js';

export function proxyHandlers(app: App): HandlersFor<keyof typeof proxyInvokeChannels> {
  return {
    'proxy.snapshot': () => app.proxy.snapshot(),
    'proxy.listTokens': () => ({ tokens: app.proxy.tokens.list() }),
    'proxy.createToken': ({ name, maxClass }, ctx) => app.proxy.createToken(name, maxClass, ctx.caller),
    'proxy.revokeToken': ({ name }, ctx) => ({ view: app.proxy.revokeToken(name, ctx.caller) }),
    'proxy.setCaps': ({ upstream, caps }, ctx) => ({ upstream, caps: app.proxy.setCaps(upstream, caps, ctx.caller) }),
    'proxy.requests': (query) => ({ rows: app.proxy.requests(query), retention: app.proxy.requestRetention() }),
  };
}
