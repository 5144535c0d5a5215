// Electron: the preload's `window.gpuConsole` bridge. The preload already
// speaks the envelope; we still parse it, the output and every event payload —
// each event once, however many listeners it has (one bridge subscription per
// event channel, fanned out here). A call given a signal carries a call id;
// aborting sends `cancel(id)` so main aborts the core's work on it. Ticks
// come delta-coded against what main last sent this window: a channel just
// subscribed (or a tick refused) asks main for a keyframe with `resync`.
import {
  isDeltaChannel,
  type ChannelInput,
  type ChannelOutput,
  type EventChannel,
  type EventPayload,
  type InvokeChannel,
  type InvokeResult,
} from '../../../src-preload/contract/index.js';
import { untilAborted } from './abortable.js';
import { EventReader, ListenerTable, unwrapInvokeResult } from './envelope.js';
import { cancelledError, OPEN_CONNECTION, type ConnectionState, type InvokeOptions, type Transport } from './transport.js';

/** What the preload exposes on `window.gpuConsole`. */
export interface GpuConsoleBridge {
  /** `callId` (only for calls that may be cancelled) names the call for `cancel`. */
  invoke(channel: string, input: unknown, callId?: string): Promise<InvokeResult<unknown>>;
  on(event: string, listener: (payload: unknown) => void): () => void;
  /** Asks main to abort the call sent with this id; unknown or settled ids are ignored. */
  cancel(callId: string): void;
  /** Asks main for a keyframe of a delta-coded tick channel (`fleet.tick`, `telemetry.tick`). */
  resync(channel: string): void;
}

export class IpcTransport implements Transport {
  readonly kind = 'ipc' as const;
  private readonly listeners = new ListenerTable();
  /** The bridge subscription of each event channel that has listeners. */
  private readonly bridged = new Map<string, () => void>();
  private readonly reader: EventReader;

  constructor(
    private readonly bridge: GpuConsoleBridge,
    private readonly report: (message: string) => void = (m) => console.warn(`[ipc transport] ${m}`),
    /** Ids of cancellable calls, unique while the page lives. */
    private readonly newCallId: () => string = () => crypto.randomUUID(),
  ) {
    this.reader = new EventReader(this.report, (channel) => {
      try {
        this.bridge.resync(channel);
      } catch (error) {
        this.report(`${channel}: keyframe request failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    });
  }

  async invoke<C extends InvokeChannel>(channel: C, input: ChannelInput<C>, options: InvokeOptions = {}): Promise<ChannelOutput<C>> {
    const { signal } = options;
    if (!signal) return unwrapInvokeResult(channel, await this.bridge.invoke(channel, input ?? {}));
    if (signal.aborted) throw cancelledError(channel);
    const callId = this.newCallId();
    const answer = this.bridge.invoke(channel, input ?? {}, callId);
    const onAbort = (): void => {
      try {
        this.bridge.cancel(callId);
      } catch (error) {
        this.report(`${channel}: cancel failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      return unwrapInvokeResult(channel, await untilAborted(channel, answer, signal));
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  on<E extends EventChannel>(event: E, listener: (payload: EventPayload<E>) => void): () => void {
    const remove = this.listeners.add(event, listener as (payload: unknown) => void);
    if (!this.bridged.has(event)) {
      const off = this.bridge.on(event, (raw) => {
        const payload = this.reader.read(event, raw);
        if (payload !== null) this.listeners.emit(event, payload, this.report);
      });
      this.bridged.set(event, off);
    }
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      remove();
      if (this.listeners.has(event)) return;
      this.bridged.get(event)?.();
      this.bridged.delete(event);
      // ticks main sends meanwhile go unread: the state held would be stale
      if (isDeltaChannel(event)) this.reader.reset(event);
    };
  }

  onConnection(listener: (state: ConnectionState) => void): () => void {
    listener(OPEN_CONNECTION);
    return () => undefined;
  }

  dispose(): void {
    for (const off of this.bridged.values()) off();
    this.bridged.clear();
    this.reader.reset();
    this.listeners.clear();
  }
}
