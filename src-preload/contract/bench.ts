// Contract channels of the bench capability, merged into the channel table in channels.ts.
export const benchInvokeChannels = {} as const;
export const benchEventChannels = {} as const;
