// Contract channels of the lifecycle capability, merged into the channel table in channels.ts.
export const lifecycleInvokeChannels = {} as const;
export const lifecycleEventChannels = {} as const;
