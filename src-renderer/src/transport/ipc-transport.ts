// Electron: the preload's `window.gpuConsole` bridge. The preload already
// speaks the envelope; we still parse it, the output and every event payload.
import type {
  ChannelInput,
  ChannelOutput,
  EventChannel,
  EventPayload,
  InvokeChannel,
  InvokeResult,
} from '../../../src-preload/contract/index.js';
import { parseEventPayload, unwrapInvokeResult } from './envelope.js';
import { OPEN_CONNECTION, type ConnectionState, type Transport } from './transport.js';

/** What the preload exposes on `window.gpuConsole`. */
export interface GpuConsoleBridge {
  invoke(channel: string, input: unknown): Promise<InvokeResult<unknown>>;
  on(event: string, listener: (payload: unknown) => void): () => void;
}

export class IpcTransport implements Transport {
  readonly kind = 'ipc' as const;
  private readonly unsubscribers = new Set<() => void>();

  constructor(
    private readonly bridge: GpuConsoleBridge,
    private readonly report: (message: string) => void = (m) => console.warn(`[ipc transport] ${m}`),
  ) {}

  async invoke<C extends InvokeChannel>(channel: C, input: ChannelInput<C>): Promise<ChannelOutput<C>> {
    const raw: unknown = await this.bridge.invoke(channel, input ?? {});
    return unwrapInvokeResult(channel, raw);
  }

  on<E extends EventChannel>(event: E, listener: (payload: EventPayload<E>) => void): () => void {
    const off = this.bridge.on(event, (raw) => {
      const payload = parseEventPayload(event, raw, this.report);
      if (payload !== null) listener(payload);
    });
    const unsubscribe = (): void => {
      if (this.unsubscribers.delete(unsubscribe)) off();
    };
    this.unsubscribers.add(unsubscribe);
    return unsubscribe;
  }

  onConnection(listener: (state: ConnectionState) => void): () => void {
    listener(OPEN_CONNECTION);
    return () => undefined;
  }

  dispose(): void {
    for (const unsubscribe of [...this.unsubscribers]) unsubscribe();
  }
}
