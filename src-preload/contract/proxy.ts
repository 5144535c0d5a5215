// Contract channels of the proxy capability, merged into the channel table in channels.ts.
export const proxyInvokeChannels = {} as const;
export const proxyEventChannels = {} as const;
