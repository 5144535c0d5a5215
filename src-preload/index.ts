// The sandboxed preload: exposes window.gpuConsole = { invoke, on, cancel } for
// the contract's channels only. The raw IPC event never reaches the page, and
// unknown channels are refused here before they reach the main process. A call
// that may be cancelled carries an id; `cancel(id)` tells main to abort it.
// `resync(channel)` asks main for a keyframe of a delta-coded tick channel.
// The channel table (with zod) is bundled in: a sandboxed preload cannot require it.
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import { isEventChannel, isInvokeChannel } from './contract/channels.js';
import { BridgeErrorCode } from './contract/codes.js';
import { IPC_CANCEL, IPC_EVENT, IPC_INVOKE, IPC_RESYNC, isCallId } from './contract/ipc.js';
import { isDeltaChannel } from './contract/tick-codec.js';

type Listener = (payload: unknown) => void;

const api = {
  invoke(channel: string, input: unknown, callId?: string): Promise<unknown> {
    if (typeof channel !== 'string' || !isInvokeChannel(channel)) {
      return Promise.resolve({
        ok: false,
        error: { code: BridgeErrorCode.UNKNOWN_CHANNEL, message: `unknown channel "${String(channel)}"`, retryable: false, details: {} },
      });
    }
    if (callId === undefined) return ipcRenderer.invoke(IPC_INVOKE, channel, input);
    if (!isCallId(callId)) {
      return Promise.resolve({
        ok: false,
        error: { code: BridgeErrorCode.BAD_REQUEST, message: 'the call id must be 1-64 letters, digits, "-" or "_"', retryable: false, details: {} },
      });
    }
    return ipcRenderer.invoke(IPC_INVOKE, channel, input, callId);
  },
  cancel(callId: string): void {
    if (!isCallId(callId)) throw new Error('cancel needs the id the call was sent with');
    ipcRenderer.send(IPC_CANCEL, callId);
  },
  resync(channel: string): void {
    if (!isDeltaChannel(channel)) throw new Error(`"${String(channel)}" is not a delta-coded event channel`);
    ipcRenderer.send(IPC_RESYNC, channel);
  },
  on(event: string, listener: Listener): () => void {
    if (typeof event !== 'string' || !isEventChannel(event)) throw new Error(`unknown event "${String(event)}"`);
    if (typeof listener !== 'function') throw new Error('listener must be a function');
    const handler = (_e: IpcRendererEvent, channel: unknown, payload: unknown) => {
      if (channel === event) listener(payload);
    };
    ipcRenderer.on(IPC_EVENT, handler);
    return () => {
      ipcRenderer.removeListener(IPC_EVENT, handler);
    };
  },
};

contextBridge.exposeInMainWorld('gpuConsole', api);
