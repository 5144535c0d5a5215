// The headless bridge: POST /api/<channel> per call, one long-lived SSE stream
// (GET /api/events) for every event, both carrying the per-start token header.
// A dropped stream reconnects with backoff; the state is published for the UI.
import {
  BridgeErrorCode,
  type ChannelInput,
  type ChannelOutput,
  type EventChannel,
  type EventPayload,
  type InvokeChannel,
} from '../../../src-preload/contract/index.js';
import { untilAborted } from './abortable.js';
import { backoffDelayMs } from './backoff.js';
import { ListenerTable, parseEventPayload, unwrapInvokeResult } from './envelope.js';
import { SseParser, type SseMessage } from './sse-parser.js';
import { TOKEN_HEADER } from './token.js';
import { cancelledError, TransportError, type ConnectionState, type InvokeOptions, type Transport } from './transport.js';

export interface WebTransportDeps {
  readonly token: string;
  readonly fetch: typeof fetch;
  readonly now: () => number;
  readonly setTimeout: (fn: () => void, ms: number) => unknown;
  readonly clearTimeout: (handle: unknown) => void;
  readonly random?: () => number;
  readonly report?: (message: string) => void;
  /** Prefix for the API paths ('' → same origin, `/api/...`). */
  readonly baseUrl?: string;
}

const INITIAL: ConnectionState = { status: 'connecting', attempt: 0, nextRetryAt: null, lastError: null };

export class WebTransport implements Transport {
  readonly kind = 'web' as const;
  private readonly listeners = new ListenerTable();
  private readonly connectionListeners = new Set<(state: ConnectionState) => void>();
  private readonly abort = new AbortController();
  private readonly parser = new SseParser();
  private state: ConnectionState = INITIAL;
  private retryTimer: unknown = null;
  private wakeRetry: (() => void) | null = null;
  private started = false;
  private disposed = false;

  constructor(private readonly deps: WebTransportDeps) {}

  /** Opens the event stream (idempotent). */
  start(): void {
    if (this.started || this.disposed) return;
    this.started = true;
    void this.streamLoop().catch((error: unknown) => this.report(`event loop stopped: ${String(error)}`));
  }

  get connection(): ConnectionState {
    return this.state;
  }

  invoke<C extends InvokeChannel>(channel: C, input: ChannelInput<C>, options: InvokeOptions = {}): Promise<ChannelOutput<C>> {
    const { signal } = options;
    if (!signal) return this.exchange(channel, input, this.abort.signal);
    if (signal.aborted) return Promise.reject(cancelledError(channel));
    // Aborting the fetch closes its connection; the bridge turns that into the core's abort.
    return untilAborted(channel, this.exchange(channel, input, AbortSignal.any([this.abort.signal, signal])), signal);
  }

  private async exchange<C extends InvokeChannel>(channel: C, input: ChannelInput<C>, signal: AbortSignal): Promise<ChannelOutput<C>> {
    let response: Response;
    try {
      response = await this.deps.fetch(`${this.deps.baseUrl ?? ''}/api/${channel}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [TOKEN_HEADER]: this.deps.token },
        body: JSON.stringify(input ?? {}),
        signal,
      });
    } catch (error) {
      throw new TransportError({
        code: BridgeErrorCode.TRANSPORT,
        message: `${channel}: the console did not answer (${errorText(error)})`,
        retryable: true,
        details: { channel },
      });
    }
    if (response.status === 401) this.setState({ status: 'unauthorized', attempt: 0, nextRetryAt: null, lastError: 'token refused' });
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      throw new TransportError({
        code: BridgeErrorCode.TRANSPORT,
        message: `${channel}: HTTP ${response.status} without a JSON body`,
        retryable: response.status >= 500,
        details: { channel, status: response.status },
      });
    }
    return unwrapInvokeResult(channel, body);
  }

  on<E extends EventChannel>(event: E, listener: (payload: EventPayload<E>) => void): () => void {
    return this.listeners.add(event, listener as (payload: unknown) => void);
  }

  onConnection(listener: (state: ConnectionState) => void): () => void {
    this.connectionListeners.add(listener);
    listener(this.state);
    return () => {
      this.connectionListeners.delete(listener);
    };
  }

  /** Skips the remaining backoff wait (e.g. the operator pressed "retry now"). */
  retryNow(): void {
    this.wakeRetry?.();
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.abort.abort();
    if (this.retryTimer !== null) this.deps.clearTimeout(this.retryTimer);
    this.wakeRetry?.();
    this.listeners.clear();
    this.connectionListeners.clear();
  }

  private async streamLoop(): Promise<void> {
    let attempt = 0;
    while (!this.disposed) {
      let lastError: string;
      try {
        const response = await this.deps.fetch(`${this.deps.baseUrl ?? ''}/api/events`, {
          headers: { [TOKEN_HEADER]: this.deps.token, accept: 'text/event-stream' },
          signal: this.abort.signal,
        });
        if (response.status === 401 || response.status === 403) {
          this.setState({ status: 'unauthorized', attempt, nextRetryAt: null, lastError: `HTTP ${response.status}` });
          await response.body?.cancel().catch(() => undefined);
          return; // a refused token stays refused: only a fresh `serve` URL helps
        }
        if (!response.ok || response.body === null) {
          await response.body?.cancel().catch(() => undefined);
          throw new Error(`HTTP ${response.status}`);
        }
        attempt = 0;
        this.setState({ status: 'open', attempt: 0, nextRetryAt: null, lastError: null });
        await this.read(response.body);
        lastError = 'the event stream ended';
      } catch (error) {
        if (this.disposed) return;
        lastError = errorText(error);
      }
      if (this.disposed) return;
      attempt += 1;
      const delayMs = backoffDelayMs(attempt - 1, this.deps.random);
      this.setState({ status: 'lost', attempt, nextRetryAt: this.deps.now() + delayMs, lastError });
      await this.sleep(delayMs);
      if (this.disposed) return;
      this.setState({ ...this.state, status: 'lost', nextRetryAt: null });
    }
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    this.parser.reset();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const message of this.parser.push(decoder.decode(value, { stream: true }))) this.dispatch(message);
      }
    } finally {
      reader.releaseLock();
    }
  }

  private dispatch(message: SseMessage): void {
    if (!this.listeners.has(message.event)) return;
    let raw: unknown;
    try {
      raw = JSON.parse(message.data);
    } catch {
      this.report(`${message.event}: event data is not JSON`);
      return;
    }
    const payload = parseEventPayload(message.event as EventChannel, raw, (m) => this.report(m));
    if (payload !== null) this.listeners.emit(message.event, payload, (m) => this.report(m));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        this.retryTimer = null;
        this.wakeRetry = null;
        resolve();
      };
      this.wakeRetry = () => {
        if (this.retryTimer !== null) this.deps.clearTimeout(this.retryTimer);
        done();
      };
      this.retryTimer = this.deps.setTimeout(done, ms);
    });
  }

  private setState(next: ConnectionState): void {
    if (this.disposed) return;
    this.state = next;
    for (const listener of [...this.connectionListeners]) listener(next);
  }

  private report(message: string): void {
    (this.deps.report ?? console.warn)(`[web transport] ${message}`);
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
