import { mkdtempSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api, ApiEvent } from '../../../src-main/core/api.js';
import { Emitter, silentLogger, systemClock } from '../../../src-main/core/base/index.js';
import { LogFollowEvents } from '../../../src-main/core/logs/follow-events.js';
import { FollowerQueue } from '../../../src-main/core/logs/follower.js';
import type { LogFollow, LogsService } from '../../../src-main/core/logs/logs-service.js';
import { SSE_MAX_BUFFERED_BYTES } from '../../../src-main/web/event-streams.js';
import { startWebBridge, type WebBridge } from '../../../src-main/web/index.js';
import { LogsBatchSchema, LogsEndedSchema, type EventChannel, type EventPayload, type LogEntry } from '../../../src-preload/contract/index.js';
import { createLogsStore } from '../../../src-renderer/src/features/logs/logs-store.js';
import type { Transport } from '../../../src-renderer/src/transport/transport.js';
import { SseParser } from '../../../src-renderer/src/transport/sse-parser.js';
import { until } from '../../helpers/until.js';

// Issue #29 item 1, "lines dropped while the view cannot keep up are counted
// and said": the real follow batching, the real web bridge and the renderer's
// logs store, with an SSE client that stops reading until the bridge skips
// batches for it, then reads again. The store's count of lost lines is the
// number the bridge skipped, and the follow's end arrives although the stream
// was backed up when it was sent.

const SOURCE = { kind: 'file' as const, description: 'file /var/log/m.log', timestamps: false };
const LINE_CHARS = 2_000;
const line = (n: number): LogEntry => ({ type: 'line', ts: null, text: `${String(n).padStart(8, '0')} ${'x'.repeat(LINE_CHARS)}`, stream: 'stdout', failure: null, cutBytes: 0, binary: false });
const indexOf = (e: LogEntry): number => (e.type === 'line' ? Number(e.text.slice(0, 8)) : -1);

/** One follow whose lines the test offers itself; nothing is dropped in main (the queue holds them all). */
function oneFollowLogs(): { logs: LogsService; queue: FollowerQueue } {
  const queue = new FollowerQueue('f1-gpu-a/m', 1_000_000, () => true, systemClock, 1024 * 1024 * 1024);
  const follow: LogFollow = { id: queue.id, key: 'gpu-a/m', queue, source: SOURCE, dispose: () => queue.end(null) };
  const logs = { follow: () => Promise.resolve(follow), unfollow: () => queue.end(null) } as unknown as LogsService;
  return { logs, queue };
}

describe('logs over a backed-up event stream', () => {
  let bridge: WebBridge;
  const events = new Emitter<ApiEvent>();
  const { logs, queue } = oneFollowLogs();
  const follows = new LogFollowEvents({ logs, emit: (channel, payload) => events.fire({ channel, payload } as ApiEvent), batchIntervalMs: 5, maxBatchEntries: 500 });
  const token = 'b'.repeat(64);

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gc-logs-bp-'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html>');
    const api: Api = { invoke: () => Promise.reject(new Error('not used')), onEvent: (l) => events.on(l), dispose: () => events.dispose() };
    bridge = await startWebBridge({ api, rendererDir: dir, port: 0, token, logger: silentLogger });
  });
  afterAll(async () => {
    follows.dispose();
    await bridge.close();
  });

  /** The renderer's transport, reduced to what a logs panel uses, fed from a real SSE response. */
  function sseTransport(): { transport: Transport; open: () => Promise<IncomingMessage> } {
    const listeners = new Map<string, Set<(p: unknown) => void>>();
    const parser = new SseParser();
    const transport = {
      kind: 'web' as const,
      invoke: async (channel: string) => {
        if (channel === 'logs.follow') {
          const f = await follows.start('gpu-a', 'm', { lines: 0 });
          return { followId: f.id, source: f.source, leaseMs: follows.leaseMs };
        }
        return channel === 'logs.renew' ? { renewed: [], unknown: [] } : { followId: 'f1-gpu-a/m', ended: true };
      },
      on: <E extends EventChannel>(event: E, l: (payload: EventPayload<E>) => void) => {
        const set = listeners.get(event) ?? new Set();
        set.add(l as (p: unknown) => void);
        listeners.set(event, set);
        return () => set.delete(l as (p: unknown) => void);
      },
      onConnection: () => () => undefined,
      dispose: () => undefined,
    } as unknown as Transport;
    const deliver = (event: string, data: string) => {
      const schema = event === 'logs.batch' ? LogsBatchSchema : event === 'logs.ended' ? LogsEndedSchema : null;
      if (!schema) return;
      const payload = schema.parse(JSON.parse(data));
      for (const l of listeners.get(event) ?? []) l(payload);
    };
    const open = () =>
      new Promise<IncomingMessage>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port: bridge.port, path: '/api/events', headers: { host: `127.0.0.1:${bridge.port}`, 'x-gpu-console-token': token } }, (res) => {
          res.setEncoding('utf8');
          res.on('data', (text: string) => {
            for (const m of parser.push(text)) deliver(m.event, m.data);
          });
          res.once('data', () => resolve(res));
        });
        req.on('error', reject);
        req.end();
      });
    return { transport, open };
  }

  it('counts exactly the lines the bridge skipped while the client did not read, and the end still arrives', async () => {
    const { transport, open } = sseTransport();
    const res = await open();
    const store = createLogsStore({ transport, setInterval: () => 0, clearInterval: () => undefined });
    store.getState().setFollow(true);
    store.getState().setTarget({ label: 'gpu-a', serviceId: 'm' });
    await until(() => store.getState().status === 'following', { what: 'the follow' });

    res.pause();
    // Far more than the socket and the bridge's cap hold: ~40 MB in 1 MB batches.
    const sent = 20_000;
    expect(sent * LINE_CHARS).toBeGreaterThan(20 * SSE_MAX_BUFFERED_BYTES);
    for (let n = 0; n < sent; n++) {
      queue.offer(line(n));
      if (n % 500 === 499) await until(() => queue.queued === 0, { what: 'the batch sent', intervalMs: 2 });
    }
    // Ended while the client is still backed up: logs.ended must not be skipped.
    expect(follows.stop('f1-gpu-a/m')).toBe(true);
    res.resume();
    await until(() => store.getState().status === 'ended', { what: 'logs.ended through the backed-up stream', timeoutMs: 20_000 });

    const s = store.getState();
    const lines = s.entries.filter((e) => e.type === 'line');
    const lostMarkers = s.entries.filter((e) => e.type === 'marker' && e.marker === 'stream-lost');
    expect(s.droppedCounted).toBeGreaterThan(0);
    expect(lostMarkers.length).toBeGreaterThan(0);
    // Every line is either shown or counted as lost: none twice, none silently.
    expect(s.received + s.droppedCounted).toBe(sent);
    // What the panel still holds is in order, and each marker's count is the run of indexes missing where it stands.
    let expected: number | null = null;
    for (const e of s.entries) {
      if (e.type === 'marker') {
        if (expected !== null) expected += e.count ?? 0;
      } else {
        if (expected !== null) expect(indexOf(e)).toBe(expected);
        expected = indexOf(e) + 1;
      }
    }
    expect(lines.length).toBeGreaterThan(0);
    expect(expected).toBe(sent);
    store.getState().dispose();
    res.destroy();
  }, 60_000);
});
