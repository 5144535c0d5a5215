// The web bridge's open event streams (`GET /api/events`, SSE): one tick
// encoder per stream, so ticks go out delta-coded per connection, found again
// by the stream id its response carried when the page asks for a keyframe.
// A backed-up client is skipped events; logs batches carry their indexes, so
// the reader counts and says the lines that never reached it.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { EVENT_STREAM_HEADER, TickStreamEncoder } from '../../src-preload/contract/index.js';
import type { Api } from '../core/api.js';

const SSE_KEEPALIVE_MS = 15_000;
/**
 * A client with more than this waiting in its socket's buffer is backed up: events are skipped
 * for it until it catches up (about two whole-fleet ticks at 64 hosts, many more delta ticks).
 */
export const SSE_MAX_BUFFERED_BYTES = 1024 * 1024;

export class EventStreams {
  private readonly clients = new Set<ServerResponse>();
  /** Each open event stream's tick encoder, by the id in its EVENT_STREAM_HEADER. */
  private readonly encoders = new Map<string, TickStreamEncoder>();

  constructor(private readonly api: Api) {}

  open(req: IncomingMessage, res: ServerResponse): void {
    const { clients, encoders } = this;
    const streamId = randomBytes(16).toString('hex');
    const encoder = new TickStreamEncoder();
    encoders.set(streamId, encoder);
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      [EVENT_STREAM_HEADER]: streamId,
    });
    res.write(': connected\n\n');
    clients.add(res);
    const keepalive = setInterval(() => res.write(': keep-alive\n\n'), SSE_KEEPALIVE_MS);
    const subscription = this.api.onEvent((event) => {
      // A slow browser must not make the core buffer without bound: skip
      // events while this client's socket is backed up (ticks are states, the
      // next one supersedes a skipped one). A skipped tick is never encoded,
      // so the next delta is against the last one this client was written.
      // Backed up is a bound on what waits, not `writableNeedDrain`: a tick
      // larger than the socket takes at once (16 KiB) set that, and the event
      // emitted right after it (telemetry.tick after fleet.tick) was skipped
      // on every tick at 64 hosts.
      // logs.ended is never skipped: a follow's end must arrive (once per follow, a few bytes), and
      // its endIndex lets the reader count the batches skipped before it.
      if (res.writableLength > SSE_MAX_BUFFERED_BYTES && event.channel !== 'logs.ended') return;
      res.write(`event: ${event.channel}\ndata: ${JSON.stringify(encoder.encodeEvent(event.channel, event.payload))}\n\n`);
    });
    const close = () => {
      clearInterval(keepalive);
      void subscription.dispose();
      clients.delete(res);
      encoders.delete(streamId);
    };
    req.on('close', close);
    res.on('close', close);
  }

  /** The encoder of an open stream, to send a keyframe on; undefined when no open stream has this id. */
  encoder(streamId: string): TickStreamEncoder | undefined {
    return this.encoders.get(streamId);
  }

  endAll(): void {
    for (const client of this.clients) client.end();
  }
}
