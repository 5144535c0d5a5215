// Electron: the preload's `window.gpuConsole` bridge. The preload already
// speaks the envelope; we still parse it, the output and every event payload —
// each event once, however many listeners it has (one bridge subscription per
// event channel, fanned out here).
import type {
  ChannelInput,
  ChannelOutput,
  EventChannel,
  EventPayload,
  InvokeChannel,
  InvokeResult,
} from '../../../src-preload/contract/index.js';
import { ListenerTable, parseEventPayload, unwrapInvokeResult } from './envelope.js';
import { OPEN_CONNECTION, type ConnectionState, type Transport } from './transport.js';

/** What the preload exposes on `window.gpuConsole`. */
export interface GpuConsoleBridge {
  invoke(channel: string, input: unknown): Promise<InvokeResult<unknown>>;
  on(event: string, listener: (payload: unknown) => void): () => void;
}

export class IpcTransport implements Transport {
  readonly kind = 'ipc' as const;
  private readonly listeners = new ListenerTable();
  /** The bridge subscription of each event channel that has listeners. */
  private readonly bridged = new Map<string, () => void>();

  constructor(
    private readonly bridge: GpuConsoleBridge,
    private readonly report: (message: string) => void = (m) => console.warn(`[ipc transport] ${m}`),
  ) {}

  async invoke<C extends InvokeChannel>(channel: C, input: ChannelInput<C>): Promise<ChannelOutput<C>> {
    const raw: unknown = await this.bridge.invoke(channel, input ?? {});
    return unwrapInvokeResult(channel, raw);
  }

  on<E extends EventChannel>(event: E, listener: (payload: EventPayload<E>) => void): () => void {
    const remove = this.listeners.add(event, listener as (payload: unknown) => void);
    if (!this.bridged.has(event)) {
      const off = this.bridge.on(event, (raw) => {
        const payload = parseEventPayload(event, raw, this.report);
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
    };
  }

  onConnection(listener: (state: ConnectionState) => void): () => void {
    listener(OPEN_CONNECTION);
    return () => undefined;
  }

  dispose(): void {
    for (const off of this.bridged.values()) off();
    this.bridged.clear();
    this.listeners.clear();
  }
}
