// The headless bridge: POST /api/<channel> per call, one long-lived SSE stream
// (GET /api/events) for every event, both carrying the per-start token header.
// A dropped stream reconnects with backoff; the state is published for the UI.
// Ticks arrive delta-coded per stream: each new stream starts from a keyframe,
// and a tick the reader refuses asks this stream for one (POST /api/events/resync).
import {
  BridgeErrorCode,
  EVENT_STREAM_HEADER,
  isDeltaChannel,
  EVENTS_RESYNC_PATH,
  type ChannelInput,
  type ChannelOutput,
  type DeltaChannel,
  type EventChannel,
  type EventPayload,
  type InvokeChannel,
} from '../../../src-preload/contract/index.js';
import { untilAborted } from './abortable.js';
import { backoffDelayMs } from './backoff.js';
import { EventReader, ListenerTable, unwrapInvokeResult } from './envelope.js';
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
  private readonly reader = new EventReader(
    (m) => this.report(m),
    (channel) => this.requestKeyframe(channel),
  );
  /** The open stream's id (its EVENT_STREAM_HEADER), for resync requests. */
  private streamId: string | null = null;
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
        // a new stream: the bridge's encoder for it starts from keyframes
        this.reader.reset();
        this.streamId = response.headers.get(EVENT_STREAM_HEADER);
        this.setState({ status: 'open', attempt: 0, nextRetryAt: null, lastError: null });
        try {
          await this.read(response.body);
        } finally {
          this.streamId = null;
        }
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
    // A delta-coded tick is read even without listeners: it carries the state the next one applies to.
    if (!isDeltaChannel(message.event) && !this.listeners.has(message.event)) return;
    const payload = this.reader.readText(message.event as EventChannel, message.data);
    if (payload !== null && this.listeners.has(message.event)) this.listeners.emit(message.event, payload, (m) => this.report(m));
  }

  /** Asks the open stream for a keyframe of `channel`; until it comes that channel's ticks are refused. */
  private requestKeyframe(channel: DeltaChannel): void {
    const stream = this.streamId;
    if (stream === null) {
      this.report(`${channel}: no stream id to ask for a keyframe; waiting for the next stream`);
      return;
    }
    this.deps
      .fetch(`${this.deps.baseUrl ?? ''}${EVENTS_RESYNC_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [TOKEN_HEADER]: this.deps.token },
        body: JSON.stringify({ stream, channel }),
        signal: this.abort.signal,
      })
      .then(async (response) => {
        await response.body?.cancel().catch(() => undefined);
        if (!response.ok) this.report(`${channel}: keyframe request refused (HTTP ${response.status})`);
      })
      .catch((error: unknown) => {
        if (!this.disposed) this.report(`${channel}: keyframe request failed (${errorText(error)})`);
      });
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
