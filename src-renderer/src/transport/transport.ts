// The renderer's only way to the core: a typed call/event surface derived from
// the contract. Two mechanisms implement it (Electron IPC and the web bridge).
import {
  BridgeErrorCode,
  type ChannelInput,
  type ChannelOutput,
  type ContractError,
  type EventChannel,
  type EventPayload,
  type InvokeChannel,
} from '../../../src-preload/contract/index.js';

export type TransportKind = 'ipc' | 'web';

/** How the live link to the core is doing; IPC is always `open`. */
export type ConnectionStatus = 'connecting' | 'open' | 'lost' | 'unauthorized';

export interface ConnectionState {
  readonly status: ConnectionStatus;
  /** Consecutive failed attempts since the last open stream. */
  readonly attempt: number;
  /** Epoch ms of the next reconnect attempt while `lost`. */
  readonly nextRetryAt: number | null;
  readonly lastError: string | null;
}

export const OPEN_CONNECTION: ConnectionState = { status: 'open', attempt: 0, nextRetryAt: null, lastError: null };

export interface InvokeOptions {
  /**
   * Gives up on the call: once it aborts, the promise rejects at once with
   * BRIDGE_CANCELLED and the core is told to stop (the web bridge sees the
   * connection close; over IPC the preload sends a cancel for the call's id).
   * The core stops at its next step, so some work may still finish.
   */
  readonly signal?: AbortSignal;
}

export interface Transport {
  invoke<C extends InvokeChannel>(channel: C, input: ChannelInput<C>, options?: InvokeOptions): Promise<ChannelOutput<C>>;
  on<E extends EventChannel>(event: E, listener: (payload: EventPayload<E>) => void): () => void;
  /** Connection changes; the listener is called at once with the current state. */
  onConnection(listener: (state: ConnectionState) => void): () => void;
  dispose(): void;
  readonly kind: TransportKind;
}

/** A `{ok:false}` answer (or a broken exchange) surfaced as an exception with the contract's fields. */
export class TransportError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly details: Record<string, unknown>;

  constructor(error: ContractError) {
    super(error.message);
    this.name = 'TransportError';
    this.code = error.code;
    this.retryable = error.retryable;
    this.details = error.details;
  }

  toContractError(): ContractError {
    return { code: this.code, message: this.message, retryable: this.retryable, details: this.details };
  }
}

/** The rejection of a call whose signal aborted before its answer. */
export function cancelledError(channel: string): TransportError {
  return new TransportError({ code: BridgeErrorCode.CANCELLED, message: `${channel}: cancelled`, retryable: false, details: { channel } });
}

/** Whether a call failed because its caller cancelled it (show nothing, or "cancelled" — never an error). */
export function isCancelled(error: unknown): boolean {
  return error instanceof TransportError && error.code === BridgeErrorCode.CANCELLED;
}

/** Any thrown value as a contract error, for showing inline. */
export function toContractError(error: unknown): ContractError {
  if (error instanceof TransportError) return error.toContractError();
  const message = error instanceof Error ? error.message : String(error);
  return { code: BridgeErrorCode.INTERNAL, message, retryable: false, details: {} };
}
