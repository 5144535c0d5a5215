import { describe, expect, it } from 'vitest';
import { WebTransport } from '../../../src-renderer/src/transport/web-transport.js';
import { TransportError, type ConnectionState } from '../../../src-renderer/src/transport/transport.js';
import { unwrapInvokeResult } from '../../../src-renderer/src/transport/envelope.js';
import { TickStreamEncoder } from '../../../src-preload/contract/index.js';
import { host, snapshot } from './fixtures/fleet.js';
import { until } from '../../helpers/until.js';

const TOKEN = '0123456789abcdef0123456789abcdef';

interface Call {
  url: string;
  init: RequestInit | undefined;
}

/** A stream the test pushes SSE text into and can close (a dropped connection). */
function sseBody(): { body: ReadableStream<Uint8Array>; push(text: string): void; close(): void } {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  const encoder = new TextEncoder();
  return { body, push: (text) => controller.enqueue(encoder.encode(text)), close: () => controller.close() };
}

function manualTimers(): {
  setTimeout: (fn: () => void, ms: number) => unknown;
  clearTimeout: (h: unknown) => void;
  pending: Array<{ fn: () => void; ms: number }>;
  fire(): void;
} {
  const pending: Array<{ fn: () => void; ms: number }> = [];
  return {
    pending,
    setTimeout: (fn, ms) => {
      const entry = { fn, ms };
      pending.push(entry);
      return entry;
    },
    clearTimeout: (h) => {
      const i = pending.indexOf(h as { fn: () => void; ms: number });
      if (i >= 0) pending.splice(i, 1);
    },
    fire: () => pending.splice(0).forEach((t) => t.fn()),
  };
}

const flush = (): Promise<void> => new Promise((r) => setTimeout(r, 0));
/** Polls on every macrotask turn (the stubs' streams and fetches settle there), for about as long as the 200 turns the old local helper allowed. */
const TURNS = { timeoutMs: 1_000, intervalMs: 0 } as const;

function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

describe('WebTransport.invoke', () => {
  it('POSTs JSON with the token header and parses the output schema', async () => {
    const calls: Call[] = [];
    const t = new WebTransport({
      token: TOKEN,
      fetch: async (url, init) => {
        calls.push({ url: String(url), init });
        return jsonResponse(200, { ok: true, data: { label: 'l20-poc', state: 'connecting' } });
      },
      now: () => 0,
      setTimeout: () => 0,
      clearTimeout: () => undefined,
    });
    await expect(t.invoke('hosts.connect', { label: 'l20-poc' })).resolves.toEqual({ label: 'l20-poc', state: 'connecting' });
    expect(calls[0]?.url).toBe('/api/hosts.connect');
    expect(calls[0]?.init?.method).toBe('POST');
    expect(calls[0]?.init?.headers).toMatchObject({ 'content-type': 'application/json', 'x-gpu-console-token': TOKEN });
    expect(calls[0]?.init?.body).toBe('{"label":"l20-poc"}');
  });

  it('turns {ok:false} (with any HTTP status) into a TransportError with the same fields', async () => {
    const t = new WebTransport({
      token: TOKEN,
      fetch: async () => jsonResponse(409, { ok: false, error: { code: 'SSH_BUSY', message: 'drain first', retryable: true, details: { n: 7 } } }),
      now: () => 0,
      setTimeout: () => 0,
      clearTimeout: () => undefined,
    });
    const error = await t.invoke('hosts.disconnect', { label: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ code: 'SSH_BUSY', message: 'drain first', retryable: true, details: { n: 7 } });
  });

  it('rejects an answer that does not match the channel schema, and network failures', async () => {
    const bad = new WebTransport({
      token: TOKEN,
      fetch: async () => jsonResponse(200, { ok: true, data: { label: 'x', state: 'exploded' } }),
      now: () => 0,
      setTimeout: () => 0,
      clearTimeout: () => undefined,
    });
    await expect(bad.invoke('hosts.connect', { label: 'x' })).rejects.toMatchObject({ code: 'CONTRACT_INVALID_OUTPUT' });
    const down = new WebTransport({
      token: TOKEN,
      fetch: async () => {
        throw new TypeError('Failed to fetch');
      },
      now: () => 0,
      setTimeout: () => 0,
      clearTimeout: () => undefined,
    });
    await expect(down.invoke('app.info', {})).rejects.toMatchObject({ code: 'BRIDGE_TRANSPORT_FAILED', retryable: true });
  });

  it('passes the caller\'s signal to its fetch: an abort closes the request and rejects at once with BRIDGE_CANCELLED', async () => {
    const inits: RequestInit[] = [];
    // Like a real fetch: pending until the signal aborts, then an AbortError.
    const t = new WebTransport({
      token: TOKEN,
      fetch: (_url, init) => {
        inits.push(init!);
        return new Promise<Response>((_resolve, reject) => {
          init!.signal!.addEventListener('abort', () => reject(new DOMException('The operation was aborted.', 'AbortError')));
        });
      },
      now: () => 0,
      setTimeout: () => 0,
      clearTimeout: () => undefined,
    });
    const abort = new AbortController();
    const call = t.invoke('reports.export', { request: { fromMs: 0, toMs: 1 }, formats: ['pdf'] }, { signal: abort.signal });
    expect(inits).toHaveLength(1);
    expect(inits[0]!.signal!.aborted).toBe(false);
    abort.abort();
    expect(inits[0]!.signal!.aborted).toBe(true);
    const error = await call.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ code: 'BRIDGE_CANCELLED', retryable: false, details: { channel: 'reports.export' } });
  });

  it('cancels while the answer body is still arriving, never fetches with an aborted signal, and keeps dispose a transport failure', async () => {
    const inits: RequestInit[] = [];
    let body!: ReadableStreamDefaultController<Uint8Array>;
    const t = new WebTransport({
      token: TOKEN,
      fetch: async (_url, init) => {
        inits.push(init!);
        if (inits.length === 1) {
          const stream = new ReadableStream<Uint8Array>({ start: (c) => void (body = c) });
          body.enqueue(new TextEncoder().encode('{"ok":tr'));
          return new Response(stream, { status: 200, headers: { 'content-type': 'application/json' } });
        }
        return new Promise<Response>((_resolve, reject) => {
          init!.signal!.addEventListener('abort', () => reject(new DOMException('The operation was aborted.', 'AbortError')));
        });
      },
      now: () => 0,
      setTimeout: () => 0,
      clearTimeout: () => undefined,
    });
    const abort = new AbortController();
    const call = t.invoke('app.info', {}, { signal: abort.signal });
    await flush();
    abort.abort();
    await expect(call).rejects.toMatchObject({ code: 'BRIDGE_CANCELLED' });
    expect(inits[0]!.signal!.aborted).toBe(true);

    await expect(t.invoke('app.info', {}, { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'BRIDGE_CANCELLED' });
    expect(inits).toHaveLength(1);

    // Closing the transport is not the caller cancelling: that call failed.
    const pending = t.invoke('app.info', {}, { signal: new AbortController().signal });
    await flush();
    t.dispose();
    await expect(pending).rejects.toMatchObject({ code: 'BRIDGE_TRANSPORT_FAILED' });
  });

  it('answers normally when the signal never aborts', async () => {
    const t = new WebTransport({
      token: TOKEN,
      fetch: async () => jsonResponse(200, { ok: true, data: { label: 'l20-poc', state: 'connecting' } }),
      now: () => 0,
      setTimeout: () => 0,
      clearTimeout: () => undefined,
    });
    const abort = new AbortController();
    await expect(t.invoke('hosts.connect', { label: 'l20-poc' }, { signal: abort.signal })).resolves.toEqual({ label: 'l20-poc', state: 'connecting' });
    abort.abort();
  });

  it('unwrapInvokeResult refuses a malformed envelope', () => {
    expect(() => unwrapInvokeResult('app.info', { data: 1 })).toThrow(TransportError);
  });
});

describe('WebTransport events', () => {
  it('parses the SSE stream, validates payloads, reconnects with backoff after a drop', async () => {
    const timers = manualTimers();
    const streams: Array<ReturnType<typeof sseBody>> = [];
    const calls: Call[] = [];
    let now = 1000;
    const reports: string[] = [];
    const t = new WebTransport({
      token: TOKEN,
      fetch: async (url, init) => {
        calls.push({ url: String(url), init });
        const s = sseBody();
        streams.push(s);
        return new Response(s.body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
      },
      now: () => now,
      setTimeout: timers.setTimeout,
      clearTimeout: timers.clearTimeout,
      random: () => 0,
      report: (m) => reports.push(m),
    });
    const states: ConnectionState[] = [];
    t.onConnection((s) => states.push(s));
    const ticks: number[] = [];
    t.on('fleet.tick', (s) => ticks.push(s.at));
    t.start();
    await until(() => states.at(-1)?.status === 'open', { what: 'open', ...TURNS });
    expect(calls[0]?.url).toBe('/api/events');
    expect(calls[0]?.init?.headers).toMatchObject({ 'x-gpu-console-token': TOKEN, accept: 'text/event-stream' });

    const frame = `event: fleet.tick\ndata: ${JSON.stringify(new TickStreamEncoder().encode('fleet.tick', snapshot(42, [host('a')])))}\n\n`;
    streams[0]?.push(': keepalive\n\n' + frame.slice(0, 17));
    streams[0]?.push(frame.slice(17) + 'event: fleet.tick\ndata: {"kind":"key","seq":1,"state":{"at":"nope"}}\n\n');
    await until(() => ticks.length === 1 && reports.length >= 1, { what: 'tick + report', ...TURNS });
    expect(ticks).toEqual([42]);
    expect(reports[0]).toMatch(/^\[web transport\] fleet\.tick: state\.at: /);

    streams[0]?.close();
    await until(() => states.at(-1)?.status === 'lost', { what: 'lost', ...TURNS });
    expect(states.at(-1)).toMatchObject({ status: 'lost', attempt: 1, nextRetryAt: 1500 });
    expect(timers.pending[0]?.ms).toBe(500);
    now = 1500;
    timers.fire();
    await until(() => states.at(-1)?.status === 'open' && calls.length === 2, { what: 'reopen', ...TURNS });
    t.dispose();
  });

  it('decodes delta ticks per stream: keyframe first, unread ticks still tracked, a refused one asks this stream for a keyframe', async () => {
    const streams: Array<ReturnType<typeof sseBody>> = [];
    const calls: Call[] = [];
    const reports: string[] = [];
    const timers = manualTimers();
    const t = new WebTransport({
      token: TOKEN,
      fetch: async (url, init) => {
        calls.push({ url: String(url), init });
        if (String(url) === '/api/events/resync') return jsonResponse(200, { ok: true, data: {} });
        const s = sseBody();
        streams.push(s);
        return new Response(s.body, { status: 200, headers: { 'content-type': 'text/event-stream', 'x-gpu-console-stream': `stream${streams.length}abcdef` } });
      },
      now: () => 0,
      setTimeout: timers.setTimeout,
      clearTimeout: timers.clearTimeout,
      random: () => 0,
      report: (m) => reports.push(m),
    });
    const states: ConnectionState[] = [];
    t.onConnection((s) => states.push(s));
    t.start();
    await until(() => states.at(-1)?.status === 'open', { what: 'open', ...TURNS });
    let encoder = new TickStreamEncoder();
    const send = (i: number, at: number, hosts = [host('a'), host('b', { updatedAt: at })]) =>
      streams[i]?.push(`event: fleet.tick\ndata: ${JSON.stringify(encoder.encode('fleet.tick', snapshot(at, hosts)))}\n\n`);
    // no listener yet: the keyframe and a delta are still read, so the first listener gets the next delta
    send(0, 1);
    send(0, 2);
    await flush();
    const got: Array<ReturnType<typeof snapshot>> = [];
    t.on('fleet.tick', (s) => got.push(s));
    send(0, 3);
    send(0, 4);
    await until(() => got.length === 2, { what: 'two ticks', ...TURNS });
    expect(got.map((s) => s.at)).toEqual([3, 4]);
    expect(got[1]!.hosts[0]).toBe(got[0]!.hosts[0]);
    expect(got[1]!.hosts[1]!.updatedAt).toBe(4);
    expect(calls.filter((c) => c.url === '/api/events/resync')).toHaveLength(0);

    // one tick lost on the way (a bug, a proxy): refused, reported, and this stream asked for a keyframe
    encoder.encode('fleet.tick', snapshot(5, [host('a')]));
    send(0, 6);
    await until(() => calls.some((c) => c.url === '/api/events/resync'), { what: 'resync request', ...TURNS });
    const resync = calls.find((c) => c.url === '/api/events/resync')!;
    expect(resync.init?.method).toBe('POST');
    expect(resync.init?.headers).toMatchObject({ 'x-gpu-console-token': TOKEN, 'content-type': 'application/json' });
    expect(JSON.parse(String(resync.init?.body))).toEqual({ stream: 'stream1abcdef', channel: 'fleet.tick' });
    expect(reports).toEqual(['[web transport] fleet.tick: a delta on #4, but the state held is #3']);
    encoder.resync('fleet.tick');
    send(0, 7);
    await until(() => got.length === 3, { what: 'keyframe', ...TURNS });
    expect(got[2]!.at).toBe(7);

    // a new stream: the old state is gone, and the bridge's new encoder starts from a keyframe
    streams[0]?.close();
    await until(() => states.at(-1)?.status === 'lost', { what: 'lost', ...TURNS });
    timers.fire();
    await until(() => streams.length === 2 && states.at(-1)?.status === 'open', { what: 'reopen', ...TURNS });
    encoder = new TickStreamEncoder();
    send(1, 8);
    send(1, 9);
    await until(() => got.length === 5, { what: 'ticks on the new stream', ...TURNS });
    expect(got.map((s) => s.at)).toEqual([3, 4, 7, 8, 9]);
    expect(reports).toHaveLength(1);
    t.dispose();
  });

  it('backs off 0.5 s → 10 s while the bridge is down, and stops on 401', async () => {
    const timers = manualTimers();
    let mode: 'down' | 'refuse' = 'down';
    const t = new WebTransport({
      token: TOKEN,
      fetch: async () => {
        if (mode === 'down') throw new TypeError('Failed to fetch');
        return jsonResponse(401, { ok: false, error: { code: 'BRIDGE_UNAUTHORIZED', message: 'no', retryable: false, details: {} } });
      },
      now: () => 0,
      setTimeout: timers.setTimeout,
      clearTimeout: timers.clearTimeout,
      random: () => 0,
      report: () => undefined,
    });
    const states: ConnectionState[] = [];
    t.onConnection((s) => states.push(s));
    t.start();
    const delays: number[] = [];
    for (let i = 0; i < 7; i++) {
      await until(() => timers.pending.length === 1, { what: `retry ${i}`, ...TURNS });
      delays.push(timers.pending[0]?.ms ?? -1);
      if (i === 6) mode = 'refuse';
      timers.fire();
    }
    expect(delays).toEqual([500, 1000, 2000, 4000, 8000, 10_000, 10_000]);
    await until(() => states.at(-1)?.status === 'unauthorized', { what: 'unauthorized', ...TURNS });
    await flush();
    expect(timers.pending).toHaveLength(0);
    t.dispose();
  });
});
