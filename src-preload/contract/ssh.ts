// Contract channels of the ssh capability, merged into the channel table in channels.ts.
export const sshInvokeChannels = {} as const;
export const sshEventChannels = {} as const;
