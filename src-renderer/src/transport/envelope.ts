// Parsing shared by both transports: the `{ok,data|error}` envelope, the
// channel's output schema, and event payloads (delta-coded ticks decoded back
// to full ones). Nothing unparsed reaches the store.
import { z } from 'zod';
import {
  BridgeErrorCode,
  ContractErrorSchema,
  eventChannels,
  invokeChannels,
  isDeltaChannel,
  isEventChannel,
  TickStreamDecoder,
  parseLenient,
  parseStrict,
  type ChannelOutput,
  type DeltaChannel,
  type EventChannel,
  type EventPayload,
  type InvokeChannel,
  type TickDecodeResult,
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
 * Parses one event payload with the contract's (listener-side) schema; unknown
 * channels and bad payloads are reported and dropped (null). Each transport
 * parses an event once, however many listeners it has; the delta-coded ticks
 * go through EventReader instead, which checks only what changed.
 */
export function parseEventPayload<E extends EventChannel>(event: E, raw: unknown, report: EventReport): EventPayload<E> | null {
  if (!isEventChannel(event)) {
    report(`unknown event channel ${String(event)}`);
    return null;
  }
  return parseLenient(eventChannels[event], raw, (message) => report(`${event}: ${message}`)) as EventPayload<E> | null;
}

/**
 * What one event stream delivers, turned into listener payloads: `fleet.tick`
 * and `telemetry.tick` through the stream's TickStreamDecoder (listeners get
 * the full FleetSnapshot / TelemetryTick, unchanged hosts as the same objects
 * as the tick before), every other event parsed by parseEventPayload. A tick it
 * must refuse is reported (unless it is the wait for a first keyframe) and
 * `requestKeyframe` is called so the bridge sends the whole state next.
 */
export class EventReader {
  private readonly decoder = new TickStreamDecoder();

  constructor(
    private readonly report: EventReport,
    private readonly requestKeyframe: (channel: DeltaChannel) => void,
  ) {}

  read<E extends EventChannel>(event: E, raw: unknown): EventPayload<E> | null {
    if (!isDeltaChannel(event)) return parseEventPayload(event, raw, this.report);
    return this.settle(event, this.decoder.decode(event, raw));
  }

  /** An event as SSE text: JSON first, then as `read`. */
  readText<E extends EventChannel>(event: E, data: string): EventPayload<E> | null {
    let raw: unknown;
    try {
      raw = JSON.parse(data);
    } catch {
      const message = `${event}: event data is not JSON`;
      if (isDeltaChannel(event)) return this.settle(event, this.decoder.unreadable(event, message));
      this.report(message);
      return null;
    }
    return this.read(event, raw);
  }

  private settle<E extends EventChannel>(event: E & DeltaChannel, result: TickDecodeResult<unknown>): EventPayload<E> | null {
    if (result.ok) return result.state as EventPayload<E>;
    if (result.refusal !== 'no-state') this.report(result.message);
    if (result.resync) this.requestKeyframe(event);
    return null;
  }

  /** The stream was replaced (a new SSE connection) or a channel is no longer listened to: its state is gone. */
  reset(channel?: DeltaChannel): void {
    this.decoder.reset(channel);
  }
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
