import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Exchange } from '../../../../src-main/core/proxy/exchange.js';
import { HANDOVER_TRIES, HANDOVER_WAIT_MS, isSocketHandover } from '../../../../src-main/core/proxy/tunnel-handover.js';
import { forward, type ForwardRequest } from '../../../../src-main/core/proxy/upstream-exchange.js';
import { UpstreamClient, upstreamKey } from '../../../../src-main/core/upstream/index.js';

// A tunnel's private socket is briefly absent while it changes hands on a
// reconnect (openssh: the console's listener → the new ControlMaster). A
// request whose connect finds no socket there yet was never sent: it is sent
// again shortly; a URL upstream that refuses is answered at once, as before.

class FakeResponse extends EventEmitter {
  statusCode = 0;
  headersSent = false;
  destroyed = false;
  writableEnded = false;
  private readonly chunks: string[] = [];
  writeHead(status: number) {
    this.statusCode = status;
    this.headersSent = true;
    return this;
  }
  flushHeaders() {}
  write(d: string | Buffer) {
    this.headersSent = true;
    this.chunks.push(d.toString());
    return true;
  }
  end(d?: string | Buffer) {
    if (d !== undefined) this.write(d);
    this.writableEnded = true;
    return this;
  }
  destroy() {
    this.destroyed = true;
    return this;
  }
  get body(): string {
    return this.chunks.join('');
  }
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gc-handover-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** An HTTP server on the Unix socket `path`, counting requests. */
async function serveOn(path: string): Promise<{ server: Server; requests: () => number }> {
  let n = 0;
  const server = createServer((req, res) => {
    n++;
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"choices":[]}');
    });
  });
  await new Promise<void>((r) => server.listen(path, r));
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  return { server, requests: () => n };
}

function request(client: UpstreamClient, tunnel: boolean) {
  const res = new FakeResponse();
  const ex = new Exchange(res as unknown as ServerResponse, 0, Date.now());
  const req: ForwardRequest = {
    dispatcher: client.dispatcher,
    freshConnection: () => client.openFreshConnection(),
    origin: client.dispatchOrigin,
    path: '/v1/chat/completions',
    body: Buffer.from('{"model":"M"}'),
    apiKey: null,
    headersTimeoutMs: 2_000,
    idleTimeoutMs: 2_000,
    stripUsage: false,
    monotonic: () => performance.now(),
    capture: false,
    tunnel,
  };
  return { res, ex, req };
}

function tunnelClient(path: string): UpstreamClient {
  const client = UpstreamClient.forTunnel(upstreamKey('h', 's'), path, { host: '127.0.0.1', port: 8000 });
  cleanups.push(() => client.destroy());
  return client;
}

describe('a tunnel socket changing hands', () => {
  it('is no socket (ENOENT) or no listener (ECONNREFUSED); nothing else', () => {
    expect(isSocketHandover(Object.assign(new Error('connect ENOENT /x.sock'), { code: 'ENOENT' }))).toBe(true);
    expect(isSocketHandover(Object.assign(new Error('connect ECONNREFUSED /x.sock'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isSocketHandover(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(false);
    expect(isSocketHandover(new Error('no code'))).toBe(false);
    expect(isSocketHandover(null)).toBe(false);
  });

  it('a request that finds no socket is sent again and served once the new listener is there (sent once)', async () => {
    const path = join(folder(), 't.sock');
    const { res, ex, req } = request(tunnelClient(path), true);
    const t0 = performance.now();
    const pending = forward(ex, req);
    let upstream: Awaited<ReturnType<typeof serveOn>> | null = null;
    setTimeout(() => void serveOn(path).then((u) => (upstream = u)), 250);
    const result = await pending;
    expect(result).toMatchObject({ completed: true, failure: null });
    expect(res.statusCode).toBe(200);
    expect(performance.now() - t0).toBeGreaterThan(200);
    expect(upstream!.requests()).toBe(1);
  });

  it('gives up after about a second: 502 upstream_unreachable, as before', async () => {
    const path = join(folder(), 't.sock');
    const { res, ex, req } = request(tunnelClient(path), true);
    const t0 = performance.now();
    const result = await forward(ex, req);
    const ms = performance.now() - t0;
    expect(result).toMatchObject({ completed: false, failure: 'upstream' });
    expect(res.statusCode).toBe(502);
    expect(res.body).toContain('upstream_unreachable');
    expect(ms).toBeGreaterThanOrEqual(HANDOVER_TRIES * HANDOVER_WAIT_MS - 50);
    expect(ms).toBeLessThan(5_000);
  });

  it('a client that leaves while it waits ends it at once', async () => {
    const path = join(folder(), 't.sock');
    const { ex, req } = request(tunnelClient(path), true);
    const pending = forward(ex, req);
    setTimeout(() => ex.abort?.('client'), 150);
    const t0 = performance.now();
    expect(await pending).toMatchObject({ completed: false, failure: 'client' });
    expect(performance.now() - t0).toBeLessThan(600);
  });

  it('not for a URL upstream: a refused connection is answered at once', async () => {
    const client = UpstreamClient.forUrl('http://127.0.0.1:1', { onPrem: null, purpose: 'proxy' });
    cleanups.push(() => client.destroy());
    const { res, ex, req } = request(client, false);
    const t0 = performance.now();
    expect(await forward(ex, req)).toMatchObject({ completed: false, failure: 'upstream' });
    expect(res.statusCode).toBe(502);
    expect(performance.now() - t0).toBeLessThan(HANDOVER_WAIT_MS * 3);
  });
});
