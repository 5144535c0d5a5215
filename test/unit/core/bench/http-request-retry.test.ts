import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RequestErrorCode } from '../../../../src-main/core/bench/errors.js';
import { benchConnectionRetries, runRequest, type RequestSpec } from '../../../../src-main/core/bench/http-request.js';
import { UpstreamClient } from '../../../../src-main/core/upstream/index.js';

// The benchmark client's retry-once rule, against loopback servers that close a
// kept-alive connection under the next request (as cpp-httplib's idle close
// does when it races a request), break off an answer, or never answer.

type Behaviour = 'answer' | 'close' | 'headers-then-close' | 'hang';

interface Scripted {
  url: string;
  /** Requests read, with their Connection header. */
  requests: Array<{ conn: number; n: number; connection: string | undefined }>;
}

const servers: Server[] = [];
const sockets = new Set<Socket>();
const dispatchers: UpstreamClient[] = [];
afterEach(async () => {
  await Promise.allSettled(dispatchers.splice(0).map((d) => d.destroy()));
  for (const s of sockets) s.destroy(); // a hanging request's connection
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

const COMPLETION = JSON.stringify({ choices: [{ index: 0, message: { content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1 } });

/** `script(conn, n)`: what the server does with the n-th request (1-based) of its conn-th connection (1-based). */
async function scripted(script: (conn: number, n: number) => Behaviour): Promise<Scripted> {
  const requests: Scripted['requests'] = [];
  let conns = 0;
  const server = createServer((socket) => {
    const conn = ++conns;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let n = 0;
    let buf = '';
    socket.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.slice(0, end);
        const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        buf = buf.slice(end + 4 + length);
        n++;
        requests.push({ conn, n, connection: /\r\nconnection: *([^\r]+)/i.exec(head)?.[1]?.toLowerCase() });
        const what = script(conn, n);
        if (what === 'close') {
          socket.end();
          return;
        }
        if (what === 'hang') return;
        if (what === 'headers-then-close') {
          socket.end('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{"choices":');
          return;
        }
        socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${COMPLETION.length}\r\nKeep-Alive: timeout=5, max=100\r\n\r\n${COMPLETION}`);
      }
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: `${origin}/v1/chat/completions`, requests };
}

/** A request to the scripted server's chat path through `client` (the server is the client's own endpoint). */
function spec(_url: string, client: UpstreamClient, over: Partial<RequestSpec> = {}): RequestSpec {
  return {
    client,
    path: '/v1/chat/completions',
    headers: {},
    body: { model: 'M', messages: [{ role: 'user', content: 'x' }], stream: false },
    stream: false,
    timeoutMs: 5_000,
    signal: new AbortController().signal,
    now: () => performance.now(),
    ...over,
  };
}

let origin = '';
/** The keep-alive client of the last scripted server (its one connection at a time, as a closed-loop level of 1). */
function agent(): UpstreamClient {
  const a = UpstreamClient.forUrl(origin, { onPrem: null, purpose: 'probe' }, { connections: 1 });
  dispatchers.push(a);
  return a;
}

describe('runRequest: retry once on a fresh connection', () => {
  it('a reused connection closed under the request: sent again on a new connection (Connection: close), answered', async () => {
    const s = await scripted((conn, n) => (conn === 1 && n === 2 ? 'close' : 'answer'));
    const d = agent();
    const before = benchConnectionRetries();
    expect(await runRequest(spec(s.url, d))).toMatchObject({ errorCode: null, retried: false });
    const second = await runRequest(spec(s.url, d));
    expect(second).toMatchObject({ errorCode: null, status: 200, finishReason: 'stop', text: 'ok', retried: true });
    expect(benchConnectionRetries() - before).toBe(1);
    expect(s.requests.map((r) => [r.conn, r.n, r.connection])).toEqual([
      [1, 1, 'keep-alive'],
      [1, 2, 'keep-alive'],
      [2, 1, 'close'],
    ]);
  });

  it('not after the first byte of the answer: a broken-off answer is a failure', async () => {
    const s = await scripted((conn, n) => (conn === 1 && n === 2 ? 'headers-then-close' : 'answer'));
    const d = agent();
    await runRequest(spec(s.url, d));
    const second = await runRequest(spec(s.url, d));
    expect(second).toMatchObject({ status: 200, errorCode: RequestErrorCode.BAD_STREAM, retried: false });
    expect(s.requests).toHaveLength(2);
  });

  it('not twice: the retry’s connection closed too is a failure', async () => {
    const s = await scripted((conn, n) => (conn === 1 && n === 1 ? 'answer' : 'close'));
    const d = agent();
    await runRequest(spec(s.url, d));
    let opened = 0;
    const openFresh = d.openFreshConnection.bind(d);
    d.openFreshConnection = () => {
      opened++;
      return openFresh();
    };
    const second = await runRequest(spec(s.url, d));
    expect(second).toMatchObject({ status: null, errorCode: RequestErrorCode.CONNECTION, retried: true });
    expect(opened).toBe(1);
    expect(s.requests.map((r) => [r.conn, r.n])).toEqual([
      [1, 1],
      [1, 2],
      [2, 1],
    ]);
  });

  it('not on a fresh connection: the first request of a connection closed is a failure', async () => {
    const s = await scripted(() => 'close');
    const r = await runRequest(spec(s.url, agent()));
    expect(r).toMatchObject({ status: null, errorCode: RequestErrorCode.CONNECTION, retried: false });
    expect(s.requests).toHaveLength(1);
  });

  it('not on a timeout', async () => {
    const s = await scripted((conn, n) => (conn === 1 && n === 2 ? 'hang' : 'answer'));
    const d = agent();
    await runRequest(spec(s.url, d));
    const r = await runRequest(spec(s.url, d, { timeoutMs: 300 }));
    expect(r).toMatchObject({ errorCode: RequestErrorCode.TIMEOUT, retried: false });
    expect(s.requests).toHaveLength(2);
  });
});
