// Names of the two Electron IPC channels (calls and events); no zod here so
// the shell and preload can import them cheaply.
export const IPC_INVOKE = 'gpu-console:invoke';
export const IPC_EVENT = 'gpu-console:event';
