// Names of the Electron IPC channels (calls, events, and the cancel of a call);
// no zod here so the shell and preload can import them cheaply.
export const IPC_INVOKE = 'gpu-console:invoke';
export const IPC_EVENT = 'gpu-console:event';
/** `send(IPC_CANCEL, callId)`: abort the call invoked with that id (one-way, no answer). */
export const IPC_CANCEL = 'gpu-console:cancel';

/**
 * `send(IPC_RESYNC, channel)`: the page holds no state for that delta-coded event channel
 * (fleet.tick, telemetry.tick); main's next event of it to this window is a keyframe (one-way).
 */
export const IPC_RESYNC = 'gpu-console:resync';

/** A cancellable call's id as the preload and main accept it (the renderer sends a UUID). */
export const CALL_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export function isCallId(value: unknown): value is string {
  return typeof value === 'string' && CALL_ID_PATTERN.test(value);
}
