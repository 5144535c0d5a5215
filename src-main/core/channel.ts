// The shape of a contract channel's implementation: each capability's
// `channels.ts` exports one small function per channel of the contract table,
// typed from it; core/api.ts parses input and output around them.
import type { ChannelOutput, ChannelParsedInput, EventChannel, EventPayload, InvokeChannel } from '../../src-preload/contract/index.js';
import type { Caller } from './base/index.js';

export interface CallContext {
  requestId: string;
  /** Which bridge the call came through; used in audit rows and logs. */
  caller: Caller;
  /** Fires when the caller gives up (IPC cancel, web client gone); long calls stop their work. */
  signal?: AbortSignal;
}

export type Handler<C extends InvokeChannel> = (input: ChannelParsedInput<C>, ctx: CallContext) => Promise<ChannelOutput<C>> | ChannelOutput<C>;

/** The handlers of a group of channels: one function per channel, typed from the contract. */
export type HandlersFor<K extends InvokeChannel> = { [C in K]: Handler<C> };

/** Where services send the contract events the bridges carry to the renderer. */
export type EventSink = <E extends EventChannel>(channel: E, payload: EventPayload<E>) => void;
