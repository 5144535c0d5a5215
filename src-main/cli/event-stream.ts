// The running console's pushed events as a command sees them: the web
// bridge's `GET /api/events` stream (SSE), read with the token from
// ready.json. The stream carries every event of the console (fleet and
// telemetry ticks too); a command names the channels it wants, and only those
// are parsed. The bridge sends a comment every 15 s, so a stream silent for
// much longer than that means the console is gone.
import { AppError } from '../core/base/index.js';
import { BridgeErrorCode, ContractErrorSchema, parseStrict } from '../../src-preload/contract/index.js';
import { openRunningConsoleStream } from './bridge-client.js';
import { CliErrorCode } from './errors.js';

export interface ConsoleEvent {
  channel: string;
  payload: unknown;
}

/** One SSE frame's `event:` and `data:` (data lines joined by newlines). */
export interface SseFrame {
  event: string;
  data: string;
}

/** A frame this long without its blank line is not the bridge talking (a 64-host tick is a few hundred KiB). */
export const MAX_SSE_FRAME_CHARS = 16 * 1024 * 1024;

/** Splits an SSE byte stream into frames, whatever the chunking; comments (`: keep-alive`) are skipped. */
export class SseParser {
  private pending = '';
  private readonly decoder = new TextDecoder();

  push(chunk: Uint8Array): SseFrame[] {
    this.pending += this.decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    const frames: SseFrame[] = [];
    let end: number;
    while ((end = this.pending.indexOf('\n\n')) >= 0) {
      const block = this.pending.slice(0, end);
      this.pending = this.pending.slice(end + 2);
      const frame = parseBlock(block);
      if (frame) frames.push(frame);
    }
    if (this.pending.length > MAX_SSE_FRAME_CHARS) {
      throw new AppError(BridgeErrorCode.TRANSPORT, `the console's event stream sent more than ${MAX_SSE_FRAME_CHARS} characters without ending an event`);
    }
    return frames;
  }
}

function parseBlock(block: string): SseFrame | null {
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  return data.length > 0 ? { event, data: data.join('\n') } : null;
}

export interface ConsoleEventsOptions {
  /** Channels to deliver; the others are skipped unparsed. */
  wants(channel: string): boolean;
  onEvent(event: ConsoleEvent): void;
  /** The stream ended without close(): null when the console ended it, else what broke it. */
  onEnd(error: AppError | null): void;
  /** Silence longer than this ends the stream (the bridge sends a comment every 15 s); default 45 s. */
  idleTimeoutMs?: number;
}

export interface ConsoleEvents {
  close(): void;
}

/**
 * Opens the event stream of the console running on `dataDir`. Resolves once the bridge answered: from
 * then on every event it emits reaches `onEvent`, so a call made after this resolves misses none of its own.
 */
export async function openConsoleEvents(dataDir: string, options: ConsoleEventsOptions, why = ''): Promise<ConsoleEvents> {
  const controller = new AbortController();
  const response = await openRunningConsoleStream(dataDir, '/api/events', { signal: controller.signal, idleTimeoutMs: options.idleTimeoutMs ?? 45_000, why });
  if (response.statusCode !== 200) throw await refusal(response.statusCode, response.body);
  let closed = false;
  const parser = new SseParser();
  const read = async () => {
    for await (const chunk of response.body) {
      for (const frame of parser.push(chunk as Uint8Array)) {
        if (!options.wants(frame.event)) continue;
        options.onEvent({ channel: frame.event, payload: JSON.parse(frame.data) as unknown });
      }
    }
  };
  read().then(
    () => {
      if (!closed) options.onEnd(null);
    },
    (err: unknown) => {
      if (closed) return;
      options.onEnd(
        err instanceof AppError ? err : new AppError(CliErrorCode.BRIDGE_UNREACHABLE, `the console's event stream broke off: ${(err as Error).message}`, { cause: err }),
      );
    },
  );
  return {
    close: () => {
      closed = true;
      controller.abort();
    },
  };
}

async function refusal(status: number, body: { json(): Promise<unknown>; dump(): Promise<void> }): Promise<AppError> {
  const raw = await body.json().catch(() => null);
  const wire = parseStrict(ContractErrorSchema, (raw as { error?: unknown } | null)?.error);
  if (wire.ok) return AppError.fromWire(wire.data);
  return new AppError(BridgeErrorCode.TRANSPORT, `the console refused its event stream with HTTP ${status}`);
}
