// A bridge's answer as a command sees it: the `{ok,data|error}` envelope and
// the channel's output, parsed with the contract's schemas as the renderer
// parses them; an error answer becomes an AppError with the contract error's code.
import { z } from 'zod';
import { BridgeErrorCode, ContractErrorSchema, invokeChannels, parseStrict, type ChannelOutput, type InvokeChannel } from '../../src-preload/contract/index.js';
import { AppError } from '../core/base/index.js';

const EnvelopeSchema = z.union([z.object({ ok: z.literal(true), data: z.unknown() }).strict(), z.object({ ok: z.literal(false), error: ContractErrorSchema }).strict()]);

export function unwrapAnswer<C extends InvokeChannel>(channel: C, raw: unknown): ChannelOutput<C> {
  const envelope = parseStrict(EnvelopeSchema, raw);
  if (!envelope.ok) {
    throw new AppError(BridgeErrorCode.TRANSPORT, `${channel}: malformed answer from the console (${envelope.message})`, { details: { channel } });
  }
  if (!envelope.data.ok) {
    throw AppError.fromWire(envelope.data.error);
  }
  const output = parseStrict(invokeChannels[channel].output, envelope.data.data);
  if (!output.ok) {
    throw new AppError(BridgeErrorCode.INVALID_OUTPUT, `${channel}: answer does not match the contract (${output.message})`, { details: { channel } });
  }
  return output.data as ChannelOutput<C>;
}
