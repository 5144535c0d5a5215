import type { ChannelOutput, ChannelParsedInput, InvokeChannel } from '../../../src-preload/contract/index.js';
import type { CallContext } from '../api.js';

export type Handler<C extends InvokeChannel> = (
  input: ChannelParsedInput<C>,
  ctx: CallContext,
) => Promise<ChannelOutput<C>> | ChannelOutput<C>;

/** The handlers of a group of channels: one function per channel, typed from the contract. */
export type HandlersFor<K extends InvokeChannel> = { [C in K]: Handler<C> };
