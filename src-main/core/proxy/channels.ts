// Contract channels of the proxy capability (src-preload/contract/proxy.ts).
import type { proxyCapturesInvokeChannels, proxyClientsInvokeChannels, proxyInvokeChannels } from '../../../src-preload/contract/index.js';
import type { HandlersFor } from '../channel.js';
import type { ProxyService } from './service.js';
import { captureChannels } from './capture-channels.js';

export function proxyChannels(proxy: ProxyService): HandlersFor<keyof typeof proxyInvokeChannels | keyof typeof proxyClientsInvokeChannels | keyof typeof proxyCapturesInvokeChannels> {
  return {
    ...captureChannels(proxy.captures),
    'proxy.snapshot': () => proxy.snapshot(),
    'proxy.listTokens': () => ({ tokens: proxy.tokens.list() }),
    'proxy.createToken': ({ name, maxClass, limits }, ctx) => proxy.createToken(name, maxClass, ctx.caller, limits),
    'proxy.setToken': ({ name, maxClass, limits }, ctx) => ({ view: proxy.setToken(name, maxClass, limits, ctx.caller) }),
    'proxy.revokeToken': ({ name }, ctx) => ({ view: proxy.revokeToken(name, ctx.caller) }),
    'proxy.setCaps': ({ upstream, caps }, ctx) => ({ upstream, caps: proxy.setCaps(upstream, caps, ctx.caller) }),
    'proxy.requests': (query) => ({ rows: proxy.requests(query), retention: proxy.requestRetention() }),
    'proxy.clientUsage': ({ window }) => proxy.clientUsage(window),
  };
}
