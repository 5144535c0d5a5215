import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src-main/core/base/index.js';
import { LlamaServerHttpSource, VllmHttpSource, httpGetFor } from '../../../src-main/core/telemetry/index.js';
import { closeUrlClients, urlClient } from '../../helpers/upstream.js';

// The HTTP sources against a real loopback server: good answers, a stall past
// the deadline, a body over the cap, an HTML error page — each a coded stale
// reason, and the next scrape of a healthy path unaffected.

let server: Server;
let base = '';
let mode: 'ok' | 'stall' | 'huge' | 'html' | 'loading' = 'ok';

const METRICS = `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="q"} 2.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="q"} 0.31
`;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (mode === 'stall' && url === '/metrics') return; // never answers
    if (mode === 'huge' && url === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('x'.repeat(2 * 1024 * 1024));
      return;
    }
    if (mode === 'html' && url === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><html><body>502 Bad Gateway</body></html>');
      return;
    }
    if (url === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
      res.end(METRICS);
      return;
    }
    if (url === '/health') {
      if (mode === 'loading') {
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end('{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}');
        return;
      }
      res.writeHead(200);
      res.end(mode === 'ok' ? '' : '{"status":"ok"}');
      return;
    }
    if (url === '/version') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"version":"0.10.1"}');
      return;
    }
    res.writeHead(404);
    res.end('{"detail":"Not Found"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await closeUrlClients();
});

describe('HTTP telemetry sources over loopback', () => {
  it('reads vLLM, then turns a stall, an oversized body and an HTML page into coded stale reasons', async () => {
    // Long enough for a 1 MiB body on a loaded machine: the deadline covers the whole read, not each gap.
    const get = httpGetFor(urlClient(base), { timeoutMs: 1_000 });
    const src = new VllmHttpSource({ id: 'h/q', get, clock: new FakeClock(), maxBytes: 1024 * 1024 });
    mode = 'ok';
    const ok = await src.scrape();
    expect(ok.ok && ok.service).toMatchObject({ running: 2, kvCacheUsage: 0.31, version: '0.10.1', health: 'ok' });
    for (const [m, code] of [
      ['stall', 'TELEMETRY_SCRAPE_TIMEOUT'],
      ['huge', 'TELEMETRY_BODY_TOO_LARGE'],
      ['html', 'TELEMETRY_NOT_METRICS'],
    ] as const) {
      mode = m;
      const r = await src.scrape();
      expect(r.ok ? 'ok' : r.stale.code, m).toBe(code);
    }
    mode = 'ok';
    expect((await src.scrape()).ok).toBe(true);
  });

  it('llama-server: loading is its own stale reason', async () => {
    mode = 'loading';
    const src = new LlamaServerHttpSource({ id: 'h/l', get: httpGetFor(urlClient(base), { timeoutMs: 500 }), clock: new FakeClock() });
    const r = await src.scrape();
    expect(r.ok ? 'ok' : r.stale.code).toBe('TELEMETRY_SERVER_LOADING');
  });

  it('a closed port is TELEMETRY_SCRAPE_FAILED', async () => {
    const src = new VllmHttpSource({ id: 'h/q', get: httpGetFor(urlClient('http://127.0.0.1:1'), { timeoutMs: 500 }), clock: new FakeClock() });
    const r = await src.scrape();
    expect(r.ok ? 'ok' : r.stale.code).toBe('TELEMETRY_SCRAPE_FAILED');
  });
});
