import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes, createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TunnelGate } from '../../../src-main/core/ssh/index.js';

// A tunnel's public port against a model server on the tunnel's private socket
// (a recording stand-in): admin paths are answered 403 by the gate and never
// reach the server; everything else streams through as if the gate were not
// there (bodies both ways, server-sent events unbuffered, keep-alive,
// WebSocket upgrades), and a dead private socket is a 503 with Retry-After.

const dir = mkdtempSync(join(tmpdir(), 'gc-gate-'));
const socketPath = join(dir, 'engine.sock');
let engine: Server;
let gate: TunnelGate;
/** `METHOD /path?query` of every request the engine received. */
const seen: string[] = [];
const engineSockets = new Set<Socket>();
let sseGo: (() => void) | null = null;
let blobWritten = 0;
let lastClosedEarly = false;

function engineHandler(req: IncomingMessage, res: ServerResponse): void {
  seen.push(`${req.method} ${req.url}`);
  const path = (req.url ?? '').split('?')[0];
  if (path === '/v1/models') {
    res.writeHead(200, { 'content-type': 'application/json', 'x-engine': 'yes' });
    res.end(JSON.stringify({ object: 'list', data: [{ id: 'm' }] }));
  } else if (path === '/v1/echo') {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    req.pipe(res);
  } else if (path === '/v1/chat/completions') {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write('data: {"n":1}\n\n');
    const gapMs = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('gap') ?? 0);
    const finish = () => res.end('data: {"n":2}\n\ndata: [DONE]\n\n');
    if (gapMs > 0) setTimeout(finish, gapMs);
    else sseGo = finish;
  } else if (path === '/v1/hang') {
    lastClosedEarly = false;
    res.once('close', () => (lastClosedEarly = !res.writableFinished));
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"n":1}\n\n');
  } else if (path === '/v1/blob') {
    // Zeros as fast as the reader takes them: `blobWritten` is how far the server got.
    let left = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('bytes') ?? 0);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(left) });
    blobWritten = 0;
    const chunk = Buffer.alloc(64 * 1024);
    const pump = (): void => {
      while (left > 0) {
        const n = Math.min(left, chunk.length);
        left -= n;
        blobWritten += n;
        if (!res.write(chunk.subarray(0, n))) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  } else if (path === '/v1/busy') {
    res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '9' });
    res.end('{"error":{"message":"busy"}}');
  } else {
    res.writeHead(404).end();
  }
}

beforeAll(async () => {
  engine = createServer(engineHandler);
  engine.on('connection', (s: Socket) => {
    engineSockets.add(s);
    s.once('close', () => engineSockets.delete(s));
  });
  engine.on('upgrade', (req: IncomingMessage, socket: Socket) => {
    seen.push(`UPGRADE ${req.url}`);
    socket.write('HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\n\r\n');
    socket.pipe(socket);
  });
  await new Promise<void>((r) => engine.listen(socketPath, r));
  gate = await TunnelGate.open({ socketPath, retryAfterS: () => 4, idleKeepAliveMs: 300 });
});

afterEach(() => {
  seen.length = 0;
});

afterAll(async () => {
  await gate?.close();
  await new Promise<void>((r) => engine.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

const HAVE_CURL = (() => {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe('the public gate refuses admin paths', () => {
  it.each([
    ['POST', '/sleep?level=1'],
    ['POST', '/wake_up'],
    ['POST', '/collective_rpc'],
    ['POST', '/reset_prefix_cache'],
    ['POST', '/%73leep'],
    ['POST', '//sleep'],
    ['POST', '/v1/../sleep'],
    ['POST', '/slots/0?action=erase'],
    ['POST', '/models/unload'],
    ['POST', '/v1/load_lora_adapter'],
  ])('%s %s → 403 TUNNEL_ADMIN_PATH_REFUSED, and the server never sees it', async (method, path) => {
    const res = await request(`${gate.url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: '{"level":1}' });
    expect(res.statusCode).toBe(403);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['x-gpu-console-error']).toBe('TUNNEL_ADMIN_PATH_REFUSED');
    const body = (await res.body.json()) as { error: { code: string; message: string; type: string } };
    expect(body.error).toMatchObject({ code: 'TUNNEL_ADMIN_PATH_REFUSED', type: 'tunnel_error' });
    expect(body.error.message).toMatch(/use the console's actions \(wake\/sleep\/restart\) so the change is approved and audited/);
    expect(seen).toEqual([]);
  });

  it.skipIf(!HAVE_CURL)('curl: POST /sleep, /%73leep and //sleep (path as is) are 403', async () => {
    for (const path of ['/sleep', '/%73leep', '//sleep', '/v1/chat/../../sleep']) {
      // Not execFileSync: the gate answers on this very event loop.
      const { stdout: out } = await promisify(execFile)('curl', ['-s', '--path-as-is', '-X', 'POST', '-w', '\n%{http_code}', `${gate.url}${path}`], { encoding: 'utf8' });
      const [body, status] = out.split('\n');
      expect(status, path).toBe('403');
      expect(JSON.parse(body!).error.code).toBe('TUNNEL_ADMIN_PATH_REFUSED');
    }
    expect(seen).toEqual([]);
  });

  it('a proxy request for another host, and CONNECT, are refused (400)', async () => {
    const raw = (text: string) =>
      new Promise<string>((resolve, reject) => {
        const c = connect(gate.localPort, '127.0.0.1');
        let got = '';
        c.on('data', (d: Buffer) => (got += d.toString()));
        c.once('close', () => resolve(got));
        c.once('error', reject);
        c.write(text);
        setTimeout(() => c.end(), 200);
      });
    expect(await raw('GET http://10.0.0.5:8000/v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 .*TUNNEL_REQUEST_TARGET_REFUSED/s);
    expect(await raw('CONNECT 10.0.0.5:8000 HTTP/1.1\r\nHost: 10.0.0.5:8000\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 .*not a proxy/s);
    expect(seen).toEqual([]);
  });

  it('a Host that is not this machine (a rebound name in a browser) is refused, whatever the path', async () => {
    const hostOf = async (host: string, path = '/v1/models') => {
      const res = await request(`${gate.url}${path}`, { headers: { host } });
      const body = await res.body.text();
      return res.statusCode === 403 ? (JSON.parse(body) as { error: { code: string } }).error.code : res.statusCode;
    };
    expect(await hostOf('evil.example')).toBe('TUNNEL_HOST_REFUSED');
    expect(await hostOf(`evil.example:${gate.localPort}`)).toBe('TUNNEL_HOST_REFUSED');
    expect(await hostOf(`127.0.0.1:${gate.localPort + 1}`)).toBe('TUNNEL_HOST_REFUSED');
    expect(await hostOf('127.0.0.1.nip.io')).toBe('TUNNEL_HOST_REFUSED');
    expect(seen).toEqual([]);
    expect(await hostOf(`localhost:${gate.localPort}`)).toBe(200);
    expect(await hostOf('127.0.0.1')).toBe(200);
    expect(await hostOf(`[::1]:${gate.localPort}`)).toBe(200);
  });

  it('the connection stays usable after a refusal with a body', async () => {
    const client = new Client(gate.url, { pipelining: 1 });
    try {
      const refused = await client.request({ path: '/sleep', method: 'POST', body: randomBytes(256 * 1024) });
      expect(refused.statusCode).toBe(403);
      await refused.body.text();
      const ok = await client.request({ path: '/v1/models', method: 'GET' });
      expect(ok.statusCode).toBe(200);
      await ok.body.text();
      expect(seen).toEqual(['GET /v1/models']);
    } finally {
      await client.close();
    }
  });
});

describe('the public gate passes what it allows, as if it were not there', () => {
  it("GET /v1/models: the server's status, headers and body", async () => {
    const res = await request(`${gate.url}/v1/models`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-engine']).toBe('yes');
    expect(await res.body.json()).toEqual({ object: 'list', data: [{ id: 'm' }] });
    expect(seen).toEqual(['GET /v1/models']);
  });

  it('a 5 MB body streams to the server and back byte-exact', async () => {
    const body = randomBytes(5 * 1024 * 1024);
    const res = await request(`${gate.url}/v1/echo`, { method: 'POST', body });
    const h = createHash('sha256');
    for await (const chunk of res.body) h.update(chunk as Buffer);
    expect(h.digest('hex')).toBe(createHash('sha256').update(body).digest('hex'));
  });

  it('backpressure: a client that stops reading holds the server back; the gate buffers little', async () => {
    const bytes = 64 * 1024 * 1024;
    const sock = connect(gate.localPort, '127.0.0.1');
    await new Promise<void>((r) => sock.once('connect', () => r()));
    sock.write(`GET /v1/blob?bytes=${bytes} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    let got = 0;
    sock.on('data', (d: Buffer) => (got += d.length));
    await expect.poll(() => got, { timeout: 5_000, interval: 5 }).toBeGreaterThan(4 * 1024 * 1024);
    sock.pause();
    await new Promise((r) => setTimeout(r, 1_000));
    const held = blobWritten - got;
    // What sits in socket buffers and stream queues on the way (kernel, gate, Node), not the rest of the 64 MB.
    expect(held).toBeLessThan(16 * 1024 * 1024);
    expect(blobWritten).toBeLessThan(bytes);
    sock.resume();
    await new Promise<void>((r) => sock.once('close', () => r()));
    expect(got).toBeGreaterThan(bytes);
  });

  it('server-sent events arrive as they are sent (the first before the server writes the second)', async () => {
    const res = await request(`${gate.url}/v1/chat/completions`, { method: 'POST', body: '{"stream":true}' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream');
    const it = res.body[Symbol.asyncIterator]();
    const first = await it.next();
    expect((first.value as Buffer).toString()).toBe('data: {"n":1}\n\n');
    expect(sseGo).not.toBeNull();
    sseGo!();
    let rest = '';
    for (let r = await it.next(); !r.done; r = await it.next()) rest += (r.value as Buffer).toString();
    expect(rest).toBe('data: {"n":2}\n\ndata: [DONE]\n\n');
  });

  it('a stream with a pause longer than the idle keep-alive is not cut', async () => {
    const res = await request(`${gate.url}/v1/chat/completions?gap=700`, { method: 'POST', body: '{}' });
    expect(await res.body.text()).toBe('data: {"n":1}\n\ndata: {"n":2}\n\ndata: [DONE]\n\n');
  });

  it('a client that goes away ends its request on the server too', async () => {
    const ac = new AbortController();
    const res = await request(`${gate.url}/v1/hang`, { signal: ac.signal });
    const it = res.body[Symbol.asyncIterator]();
    await it.next();
    ac.abort();
    await expect.poll(() => lastClosedEarly, { timeout: 2_000 }).toBe(true);
  });

  it("the server's own error answers pass through (status, Retry-After)", async () => {
    const res = await request(`${gate.url}/v1/busy`);
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('9');
    expect(await res.body.text()).toBe('{"error":{"message":"busy"}}');
  });

  it('idle connections to the private socket are closed after the idle keep-alive', async () => {
    const before = engineSockets.size;
    const res = await request(`${gate.url}/v1/models`);
    await res.body.text();
    expect(engineSockets.size).toBeGreaterThanOrEqual(1);
    await expect.poll(() => engineSockets.size, { timeout: 3_000, interval: 50 }).toBeLessThan(Math.max(before, 1));
  });

  it('a WebSocket upgrade on an allowed path is spliced; on an admin path it is refused', async () => {
    const upgrade = (path: string) =>
      new Promise<string>((resolve, reject) => {
        const c = connect(gate.localPort, '127.0.0.1');
        let got = '';
        c.on('data', (d: Buffer) => {
          got += d.toString();
          if (got.includes('\r\n\r\n') && got.startsWith('HTTP/1.1 101')) {
            if (!got.includes('ping')) c.write('ping');
            else {
              c.destroy();
              resolve(got);
            }
          }
        });
        c.once('close', () => resolve(got));
        c.once('error', reject);
        c.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
      });
    const ok = await upgrade('/v1/realtime');
    expect(ok).toMatch(/^HTTP\/1\.1 101/);
    expect(ok.endsWith('ping')).toBe(true);
    expect(seen).toEqual(['UPGRADE /v1/realtime']);
    const refused = await upgrade('/sleep');
    expect(refused).toMatch(/^HTTP\/1\.1 403 .*TUNNEL_ADMIN_PATH_REFUSED/s);
    expect(seen).toEqual(['UPGRADE /v1/realtime']);
  });

  it('counts what it passed and refused', () => {
    expect(gate.stats.refused).toBeGreaterThanOrEqual(13);
    expect(gate.stats.passed).toBeGreaterThanOrEqual(8);
  });
});

describe('a private socket that takes no connection', () => {
  it('is a 503 naming the tunnel, with Retry-After', async () => {
    const lonely = await TunnelGate.open({ socketPath: join(dir, 'nobody.sock'), retryAfterS: () => 4 });
    try {
      const res = await request(`${lonely.url}/v1/models`);
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('4');
      expect(((await res.body.json()) as { error: { code: string } }).error.code).toBe('TUNNEL_PRIVATE_UNREACHABLE');
      expect(lonely.stats.failed).toBe(1);
    } finally {
      await lonely.close();
    }
  });
});
