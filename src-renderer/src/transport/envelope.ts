// Parsing shared by both transports: the `{ok,data|error}` envelope, the
// channel's output schema, and event payloads. Nothing unparsed reaches the store.
import { z } from 'zod';
import {
  BridgeErrorCode,
  ContractErrorSchema,
  eventChannels,
  invokeChannels,
  isEventChannel,
  parseLenient,
  parseStrict,
  type ChannelOutput,
  type EventChannel,
  type EventPayload,
  type InvokeChannel,
} from '../../../src-preload/contract/index.js';
import { TransportError } from './transport.js';

const EnvelopeSchema = z.union([
  z.object({ ok: z.literal(true), data: z.unknown() }),
  z.object({ ok: z.literal(false), error: ContractErrorSchema }),
]);

/** Turns a bridge's answer into the channel's parsed output, or throws a TransportError. */
export function unwrapInvokeResult<C extends InvokeChannel>(channel: C, raw: unknown): ChannelOutput<C> {
  const envelope = parseStrict(EnvelopeSchema, raw);
  if (!envelope.ok) {
    throw new TransportError({
      code: BridgeErrorCode.TRANSPORT,
      message: `${channel}: malformed answer from the bridge (${envelope.message})`,
      retryable: false,
      details: { channel },
    });
  }
  if (!envelope.data.ok) throw new TransportError(envelope.data.error);
  const output = parseStrict(invokeChannels[channel].output, envelope.data.data);
  if (!output.ok) {
    throw new TransportError({
      code: BridgeErrorCode.INVALID_OUTPUT,
      message: `${channel}: answer does not match the contract (${output.message})`,
      retryable: false,
      details: { channel },
    });
  }
  return output.data as ChannelOutput<C>;
}

export type EventReport = (message: string) => void;

/**
 * Parses one event payload with the contract's schema; unknown channels and bad
 * payloads are reported and dropped (null). Each transport calls this once per
 * event, however many listeners it has: the hot `fleet.tick` (the whole fleet,
 * once a second) costs one zod parse per tick (figures: test/bench/renderer-frames.ts).
 */
export function parseEventPayload<E extends EventChannel>(event: E, raw: unknown, report: EventReport): EventPayload<E> | null {
  if (!isEventChannel(event)) {
    report(`unknown event channel ${String(event)}`);
    return null;
  }
  return parseLenient(eventChannels[event], raw, (message) => report(`${event}: ${message}`)) as EventPayload<E> | null;
}

/** Listener fan-out keyed by event channel; a throwing listener does not starve the others. */
export class ListenerTable {
  private readonly table = new Map<string, Set<(payload: unknown) => void>>();

  add(event: string, listener: (payload: unknown) => void): () => void {
    let set = this.table.get(event);
    if (!set) {
      set = new Set();
      this.table.set(event, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }

  has(event: string): boolean {
    return (this.table.get(event)?.size ?? 0) > 0;
  }

  emit(event: string, payload: unknown, report: EventReport): void {
    for (const listener of [...(this.table.get(event) ?? [])]) {
      try {
        listener(payload);
      } catch (error) {
        report(`${event} listener failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  clear(): void {
    this.table.clear();
  }
}
