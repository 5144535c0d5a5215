// The one dispatcher both bridges (and the CLI) call: input is parsed with the
// channel's strict schema, the capability's channel function is called with
// the call context, its output is checked against the schema, and the answer
// is always a value ({ok:true,data} | {ok:false,error}) — never a throw across
// a bridge. The channels themselves live with their capabilities.
import { randomUUID } from 'node:crypto';
import {
  BridgeErrorCode,
  invokeChannels,
  eventChannels,
  isInvokeChannel,
  parseStrict,
  type ContractError,
  type EventChannel,
  type EventPayload,
  type InvokeChannel,
  type InvokeResult,
} from '../../src-preload/contract/index.js';
import { AppError, BaseErrorCode, Emitter, toAppError, type Disposable, type Logger } from './base/index.js';
import type { AppEvent } from './app.js';
import type { CallContext, Handler, HandlersFor } from './channel.js';
import { classifyStorageFault, StoreErrorCode, type StorageHealthTracker } from './store/index.js';

export type { CallContext } from './channel.js';

// The bridges' own codes (the contract's) are codes of this console like any capability's.
declare module './base/index.js' {
  interface ErrorCodeRegistry {
    bridge: BridgeErrorCode;
  }
}

/** What the dispatcher needs of the core: its channel table and its event stream (App satisfies it). */
export interface ApiHost {
  readonly channels: HandlersFor<InvokeChannel>;
  onEvent(listener: (event: AppEvent) => void): Disposable;
  /** With it, a write any channel meets on a full (or failing) data folder is answered STORE_DISK_FULL / STORE_IO_ERROR naming the folder. */
  readonly store?: { readonly health: Pick<StorageHealthTracker, 'failed'> };
}

export interface ApiEvent<E extends EventChannel = EventChannel> {
  channel: E;
  payload: EventPayload<E>;
}

export interface Api extends Disposable {
  invoke(channel: string, input: unknown, ctx?: Partial<CallContext>): Promise<InvokeResult<unknown>>;
  onEvent(listener: (event: ApiEvent) => void): Disposable;
}

export function contractError(err: unknown): ContractError {
  const e = toAppError(err);
  return { code: e.code, message: e.message, retryable: e.retryable, details: e.details };
}

/** An error that says the disk is full or failing (raw, or coded without its folder), as the store words it and counts it; null for any other. */
function storageRefusal(app: ApiHost, channel: string, err: unknown): AppError | null {
  if (!app.store) return null;
  // Another capability's code (a report's own output folder) or one naming the folder already: as it is.
  if (err instanceof AppError && (typeof err.details['folder'] === 'string' || (err.code !== StoreErrorCode.DISK_FULL && err.code !== StoreErrorCode.IO_ERROR))) return null;
  const fault = classifyStorageFault(err);
  return fault === 'full' || fault === 'io' ? app.store.health.failed('audit', err, `${channel} refused`) : null;
}

export function createApi(app: ApiHost, logger: Logger): Api {
  const handlers = app.channels;
  const events = new Emitter<ApiEvent>();
  const subscriptions: Disposable[] = [
    app.onEvent((event) => {
      // Events are checked against their schema before leaving the core, so a
      // bug shows up here and not as a confusing UI state.
      const schema = eventChannels[event.channel];
      const parsed = parseStrict(schema, event.payload);
      if (!parsed.ok) {
        logger.error('dropping event that fails its schema', { channel: event.channel, problem: parsed.message });
        return;
      }
      events.fire({ channel: event.channel, payload: parsed.data } as ApiEvent);
    }),
  ];

  async function invoke(channel: string, input: unknown, partial: Partial<CallContext> = {}): Promise<InvokeResult<unknown>> {
    const ctx: CallContext = { requestId: partial.requestId ?? randomUUID(), caller: partial.caller ?? 'test', signal: partial.signal };
    if (!isInvokeChannel(channel)) {
      return { ok: false, error: contractError(new AppError(BridgeErrorCode.UNKNOWN_CHANNEL, `unknown channel "${channel}"`)) };
    }
    const spec = invokeChannels[channel];
    const parsedInput = parseStrict(spec.input, input ?? {});
    if (!parsedInput.ok) {
      return {
        ok: false,
        error: contractError(
          new AppError(BridgeErrorCode.INVALID_INPUT, `invalid input for ${channel}: ${parsedInput.message}`, {
            details: { channel, issues: parsedInput.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) },
          }),
        ),
      };
    }
    try {
      const handler = handlers[channel] as Handler<InvokeChannel>;
      const output = await handler(parsedInput.data as never, ctx);
      const checked = parseStrict(spec.output, output);
      if (!checked.ok) {
        logger.error('handler produced output that fails its schema', { channel, problem: checked.message });
        return { ok: false, error: contractError(new AppError(BridgeErrorCode.INVALID_OUTPUT, `internal error in ${channel}`)) };
      }
      return { ok: true, data: checked.data };
    } catch (err) {
      const e = storageRefusal(app, channel, err) ?? toAppError(err);
      if (e.code === BaseErrorCode.INTERNAL_ERROR || e.code === BaseErrorCode.INTERNAL_ASSERTION) logger.error(`${channel} failed`, { error: e.message });
      return { ok: false, error: contractError(e) };
    }
  }

  return {
    invoke,
    onEvent: (listener) => events.on(listener),
    dispose: () => {
      for (const s of subscriptions) void s.dispose();
      events.dispose();
    },
  };
}
