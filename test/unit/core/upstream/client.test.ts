import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { OnPremErrorCode, createOffPremCounter } from '../../../../src-main/core/base/index.js';
import { UpstreamClient, UpstreamErrorCode, splitUpstreamKey, upstreamKey } from '../../../../src-main/core/upstream/index.js';

// The one client of an endpoint, against loopback servers that answer, close a
// kept-alive connection under the next request (as cpp-httplib's idle close
// races one), hang, send too much, or are not there.

type Behaviour = 'answer' | 'close' | 'hang' | 'big';
interface Seen {
  conn: number;
  n: number;
  line: string;
  host: string | undefined;
  connection: string | undefined;
}

const servers: Server[] = [];
const sockets = new Set<Socket>();
const clients: UpstreamClient[] = [];
const dir = mkdtempSync(join(tmpdir(), 'gc-upstream-'));
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.destroy()));
  for (const s of sockets) s.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `script(conn, n)`: what the server does with the n-th request (1-based) of its conn-th connection. Listens on TCP, or on `path`. */
async function scripted(script: (conn: number, n: number) => Behaviour, path?: string): Promise<{ origin: string; seen: Seen[] }> {
  const seen: Seen[] = [];
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
        seen.push({ conn, n, line: head.split('\r\n')[0]!, host: /\r\nhost: *([^\r]+)/i.exec(head)?.[1], connection: /\r\nconnection: *([^\r]+)/i.exec(head)?.[1]?.toLowerCase() });
        const what = script(conn, n);
        if (what === 'close') return void socket.end();
        if (what === 'hang') return;
        const body = what === 'big' ? 'x'.repeat(100_000) : 'ok';
        socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nKeep-Alive: timeout=5, max=100\r\n\r\n${body}`);
      }
    });
  });
  servers.push(server);
  if (path) {
    await new Promise<void>((r) => server.listen(path, () => r()));
    return { origin: '', seen };
  }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function client(origin: string, connections = 1): UpstreamClient {
  const c = UpstreamClient.forUrl(origin, { onPrem: null, purpose: 'probe' }, { connections });
  clients.push(c);
  return c;
}

const get = (path = '/x', over: Partial<Parameters<UpstreamClient['request']>[0]> = {}) => ({ path, deadlineMs: 5_000, maxBodyBytes: 1_024, ...over });

describe('keep-alive and the one retry', () => {
  it('reuses a kept-alive connection; one the server closed under a request is met by one retry on a fresh connection (Connection: close)', async () => {
    const s = await scripted((conn, n) => (conn === 1 && n === 2 ? 'close' : 'answer'));
    const c = client(s.origin);
    expect(await c.request(get())).toMatchObject({ status: 200, text: 'ok', retried: false });
    expect(await c.request(get())).toMatchObject({ status: 200, text: 'ok', retried: true });
    expect(s.seen.map((r) => [r.conn, r.n, r.connection])).toEqual([
      [1, 1, 'keep-alive'],
      [1, 2, 'keep-alive'],
      [2, 1, 'close'],
    ]);
  });

  it('not twice, and not on a fresh connection: those closes are failures (UPSTREAM_RESET), the retried one says so', async () => {
    const twice = await scripted((conn, n) => (conn === 1 && n === 1 ? 'answer' : 'close'));
    const c = client(twice.origin);
    await c.request(get());
    await expect(c.request(get())).rejects.toMatchObject({ code: UpstreamErrorCode.RESET, details: { retried: true, undiciCode: 'UND_ERR_SOCKET' } });
    expect(twice.seen.map((r) => [r.conn, r.n])).toEqual([
      [1, 1],
      [1, 2],
      [2, 1],
    ]);
    const first = await scripted(() => 'close');
    await expect(client(first.origin).request(get())).rejects.toMatchObject({ code: UpstreamErrorCode.RESET });
    expect(first.seen).toHaveLength(1);
  });

  it('a call that must not run twice goes on a connection of its own and is never retried', async () => {
    const s = await scripted((conn) => (conn === 2 ? 'close' : 'answer'));
    const c = client(s.origin);
    await c.request(get());
    expect(await c.request(get('/sleep', { method: 'POST', body: '{}', freshConnection: true })).catch((e: { code: string }) => e.code)).toBe(UpstreamErrorCode.RESET);
    expect(s.seen.map((r) => [r.conn, r.line, r.connection])).toEqual([
      [1, 'GET /x HTTP/1.1', 'keep-alive'],
      [2, 'POST /sleep HTTP/1.1', 'close'],
    ]);
  });
});

describe('deadlines, caps and the classifier', () => {
  it('a server that never answers: UPSTREAM_TIMEOUT at the deadline, never retried', async () => {
    const s = await scripted(() => 'hang');
    const t0 = performance.now();
    await expect(client(s.origin).request(get('/x', { deadlineMs: 200 }))).rejects.toMatchObject({ code: UpstreamErrorCode.TIMEOUT, message: 'no answer within 200 ms', details: { timedOut: true } });
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(s.seen).toHaveLength(1);
  });

  it("the caller's abort is UPSTREAM_CANCELLED, not a timeout", async () => {
    const s = await scripted(() => 'hang');
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 50);
    await expect(client(s.origin).request(get('/x', { signal: abort.signal }))).rejects.toMatchObject({ code: UpstreamErrorCode.CANCELLED });
  });

  it('an answer over the cap: UPSTREAM_TOO_LARGE, or its first bytes when the caller truncates', async () => {
    const s = await scripted(() => 'big');
    const c = client(s.origin, 2);
    await expect(c.request(get())).rejects.toMatchObject({ code: UpstreamErrorCode.TOO_LARGE, retryable: false });
    const cut = await c.request(get('/x', { overflow: 'truncate' }));
    expect(cut).toMatchObject({ status: 200, truncated: true });
    expect(cut.text).toBe('x'.repeat(1_024));
  });

  it('nothing listening: UPSTREAM_REFUSED naming the library code and the call', async () => {
    await expect(client('http://127.0.0.1:1').request(get('/metrics'))).rejects.toMatchObject({
      code: UpstreamErrorCode.REFUSED,
      message: expect.stringMatching(/^ECONNREFUSED /),
      details: { undiciCode: 'ECONNREFUSED', where: 'GET http://127.0.0.1:1/metrics' },
    });
  });

  it('a closed client: UPSTREAM_CLOSED, without connecting', async () => {
    const s = await scripted(() => 'answer');
    const c = client(s.origin);
    await c.close();
    await expect(c.request(get())).rejects.toMatchObject({ code: UpstreamErrorCode.CLOSED });
    expect(s.seen).toEqual([]);
  });
});

describe('endpoints', () => {
  it("a tunnel's client reaches its socket whatever its Host names (the server's own address, never looked up)", async () => {
    const path = join(dir, 'a.sock');
    const s = await scripted(() => 'answer', path);
    const c = UpstreamClient.forTunnel(upstreamKey('gpu-a', 'qwen'), path, { host: '127.0.0.1', port: 8000 });
    clients.push(c);
    expect(await c.request(get('/v1/models'))).toMatchObject({ status: 200, text: 'ok' });
    expect(s.seen[0]).toMatchObject({ line: 'GET /v1/models HTTP/1.1', host: '127.0.0.1:8000' });
    expect(c).toMatchObject({ key: 'gpu-a/qwen', target: 'gpu-a/qwen (SSH tunnel)' });
    expect(c.where('/metrics?x=1')).toBe('GET /metrics through the tunnel to gpu-a/qwen');
  });

  it("a URL's client keeps its path prefix and shows no credentials", async () => {
    const seen: string[] = [];
    const server: HttpServer = createHttpServer((req, res) => {
      seen.push(`${req.url} ${req.headers.authorization ?? 'no auth'}`);
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (server.address() as AddressInfo).port;
      const c = UpstreamClient.forUrl(`http://admin:hunter2@127.0.0.1:${port}/prometheus/`, { onPrem: null, purpose: 'probe' });
      clients.push(c);
      await c.request(get('/api/v1/query?query=up'));
      expect(seen).toEqual(['/prometheus/api/v1/query?query=up no auth']);
      expect(c.target).toBe(`http://127.0.0.1:${port}/prometheus`);
      expect(JSON.stringify(c.where('/api/v1/query'))).not.toContain('hunter2');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('a URL off this machine is refused when its client is made, counted for its purpose; loopback passes; a non-http URL is coded', () => {
    const offPrem = createOffPremCounter();
    for (const url of ['http://10.0.0.5:8000', 'http://router.example/admin', 'http://0123456789abcdef01234567.tunnel.gpu-console.invalid']) {
      expect(() => UpstreamClient.forUrl(url, { onPrem: offPrem, purpose: 'lifecycle' }), url).toThrow(expect.objectContaining({ code: OnPremErrorCode.REFUSED }));
    }
    clients.push(UpstreamClient.forUrl('http://127.0.0.1:9000/admin', { onPrem: offPrem, purpose: 'lifecycle' }), UpstreamClient.forUrl('http://localhost:1', { onPrem: offPrem, purpose: 'proxy' }));
    expect(offPrem.counts()).toEqual({ proxy: 0, lifecycle: 3, probe: 0 });
    for (const bad of ['not a url', 'file:///etc/passwd', 'unix:/tmp/x.sock']) {
      // Refused (and counted) by the guard; without one, still no client: not an http(s) URL.
      expect(() => UpstreamClient.forUrl(bad, { onPrem: offPrem, purpose: 'proxy' }), bad).toThrow(expect.objectContaining({ code: OnPremErrorCode.REFUSED }));
      expect(() => UpstreamClient.forUrl(bad, { onPrem: null, purpose: 'proxy' }), bad).toThrow(expect.objectContaining({ code: UpstreamErrorCode.INVALID_URL }));
    }
    expect(offPrem.counts()).toEqual({ proxy: 3, lifecycle: 3, probe: 0 });
  });

  it('keys: one function makes them, one takes them apart', () => {
    expect(upstreamKey('gpu-a', 'qwen')).toBe('gpu-a/qwen');
    expect(splitUpstreamKey('gpu-a/qwen')).toEqual({ label: 'gpu-a', serviceId: 'qwen' });
    for (const bad of ['gpu-a', '/qwen', 'gpu-a/', '']) expect(splitUpstreamKey(bad), bad).toBeNull();
  });
});
