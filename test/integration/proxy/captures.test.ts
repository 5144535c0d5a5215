import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock, silentLogger, systemClock } from '../../../src-main/core/base/index.js';
import { ConfigSchema, ConfigService } from '../../../src-main/core/config/index.js';
import { Captures, ModelRegistry, ProxyServer, RequestLog, createTokenRepository } from '../../../src-main/core/proxy/index.js';
import { openStore, type Store } from '../../../src-main/core/store/index.js';
import { startStub } from './helpers.js';

// Captured requests through the real proxy (issue #32 item 5): a failing request's bodies are
// kept (capped, redacted), a successful one's are not, viewing one writes an audit row, and the
// capture retention removes them. Upstream: a loopback HTTP server that fails, cuts a stream or answers.

const UPSTREAM_KEY = 'sk-upstream-secret-abcdef123456';
let stub: Awaited<ReturnType<typeof startStub>>;
let store: Store;
let captures: Captures;
let proxy: ProxyServer;
let log: RequestLog;
let clock: FakeClock;
let token: string;
let dir: string;

beforeAll(async () => {
  stub = await startStub((req, res, body) => {
    const text = body.toString('utf8');
    if (text.includes('cut-stream')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"choices":[{"delta":{"content":"Hel"}}]}\n\n');
      setTimeout(() => res.destroy(), 20);
    } else if (text.includes('html please')) {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Sign in to the gateway</body></html>');
    } else if (text.includes('please fail')) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `engine crashed; key was ${UPSTREAM_KEY}`, type: 'server_error' } }));
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' } }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }));
    }
  });
  dir = mkdtempSync(join(tmpdir(), 'gc-captures-'));
  const config = ConfigSchema.parse({
    hosts: [{ label: 'h', ssh: { host: '127.0.0.1', user: 'x', agent: true }, services: [{ id: 's', kind: 'vllm', remotePort: 8000, model: 'm', aliases: ['mm'] }] }],
    proxy: { upstreams: { 'h/s': { apiKeyRef: 'upstream.h' } }, capture: { enabled: true, retention: { days: 7 } } },
  });
  const configService = new ConfigService({ path: join(dir, 'none.yaml'), home: dir, initial: config });
  clock = new FakeClock(Date.now());
  store = openStore({ file: join(dir, 'gpu-console.db'), clock });
  const secrets = { get: async (ref: string) => (ref === 'upstream.h' ? UPSTREAM_KEY : null), set: async () => undefined, delete: async () => false, list: async () => [] };
  // Timers far apart: the test writes and prunes when it says so (settle()).
  captures = new Captures({ store, config: configService, secrets: secrets as never, clock, logger: silentLogger, flushIntervalMs: 1e12, pruneIntervalMs: 1e12 });
  log = new RequestLog({ db: store.db, clock: systemClock, logger: silentLogger, flushIntervalMs: 50 });
  const tokens = createTokenRepository(store.db, systemClock);
  token = tokens.create('app', 'interactive').token;
  proxy = await ProxyServer.start({
    port: 0,
    settings: config.proxy,
    registry: ModelRegistry.fromConfig(config),
    tokens,
    requestLog: log,
    resolver: { resolve: () => ({ ok: true, url: stub.url }) },
    secrets: secrets as never,
    capture: captures.recorder,
  });
});

afterAll(async () => {
  await proxy?.close(500);
  await captures?.dispose();
  log?.dispose();
  store?.close();
  await stub?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function chat(content: string, extra: { headers?: Record<string, string>; body?: Buffer | Readable } = {}) {
  const res = await request(`${proxy.url}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...extra.headers },
    body: extra.body ?? JSON.stringify({ model: 'mm', messages: [{ role: 'user', content }] }),
  });
  const text = await res.body.text();
  const id = (res.headers['x-gpu-console-request-id'] ?? res.headers['x-request-id']) as string;
  return { status: res.statusCode, text, id };
}

const byRequest = (id: string) => captures.list({ limit: 500, requestId: id });

describe('captured requests through the proxy', () => {
  it("keeps a failed request's bodies (redacted) with its request row's id, and nothing of a successful one", async () => {
    const failed = await chat(`please fail; my token is ${token}`);
    const ok = await chat('hello');
    expect([failed.status, ok.status]).toEqual([500, 200]);
    await captures.settle();
    expect(byRequest(ok.id)).toEqual([]);
    const [summary] = byRequest(failed.id);
    expect(summary).toMatchObject({ client: 'app', model: 'm', upstream: 'h/s', status: 500, errorCode: 'upstream_error', reason: 'failure', request: { encoding: 'utf8', truncated: false }, answer: { encoding: 'utf8', contentType: 'application/json' } });
    log.flush();
    expect(store.db.prepare('SELECT status FROM requests WHERE id = ?').get(failed.id)).toEqual({ status: 500 });

    const detail = await captures.show(summary!.id, 'test');
    expect(detail.request.text).toContain('please fail');
    expect(detail.answer.text).toContain('engine crashed');
    const everything = JSON.stringify(detail);
    expect(everything).not.toContain(token);
    expect(everything).not.toContain(UPSTREAM_KEY);
    expect(detail.request.headers['authorization']).toBe('[redacted]');
  });

  it('a 200 that is not JSON (a gateway page) is captured as unexpected_content_type; its row stays a 200', async () => {
    const garbled = await chat('html please');
    expect(garbled.status).toBe(200);
    await captures.settle();
    const [summary] = byRequest(garbled.id);
    expect(summary).toMatchObject({ status: 200, errorCode: 'unexpected_content_type', answer: { contentType: 'text/html', encoding: 'utf8' } });
    expect((await captures.show(summary!.id, 'test')).answer.text).toContain('Sign in to the gateway');
  });

  it("keeps the client's X-Request-Id as the capture's trace id beside the row's own id", async () => {
    const failed = await chat('please fail with a trace', { headers: { 'x-request-id': 'client-trace-42' } });
    expect(failed.status).toBe(500);
    await captures.settle();
    const [summary] = byRequest(failed.id);
    expect(summary).toMatchObject({ requestId: failed.id, traceId: 'client-trace-42' });
    expect(failed.id).not.toBe('client-trace-42');
  });

  it('opening a capture writes an audit row naming who and which; exporting one too', async () => {
    const failed = await chat('please fail again');
    await captures.settle();
    const [summary] = byRequest(failed.id);
    const before = store.audit.list({ type: 'proxy.capture.viewed', limit: 100 }).length;
    await captures.show(summary!.id, 'test');
    const viewed = store.audit.list({ type: 'proxy.capture.viewed', limit: 100 });
    expect(viewed.length).toBe(before + 1);
    expect(viewed[0]).toMatchObject({ target: String(summary!.id), payload: { requestId: failed.id, client: 'app', status: 500 } });
    expect(viewed[0]!.actor).toMatch(/^operator:.*test/);
    const out = await captures.export({ ids: [summary!.id] }, 'test');
    expect(out.captures.map((c) => c.requestId)).toEqual([failed.id]);
    expect(store.audit.list({ type: 'proxy.capture.exported', limit: 1 })[0]).toMatchObject({ payload: { count: 1, ids: [summary!.id] } });
    await expect(captures.show(999_999, 'test')).rejects.toMatchObject({ code: 'PROXY_CAPTURE_NOT_FOUND' });
  });

  it('a stream cut by the upstream is captured with the SSE text the client got', async () => {
    const cut = await chat('cut-stream please', {});
    expect(cut.status).toBe(200);
    await captures.settle();
    const [summary] = byRequest(cut.id);
    expect(summary).toMatchObject({ status: 502, errorCode: 'upstream_reset', reason: 'failure' });
    const detail = await captures.show(summary!.id, 'test');
    expect(detail.answer.text).toContain('data: {"choices":[{"delta":{"content":"Hel"}}]}');
    expect(detail.answer.contentType).toBe('text/event-stream');
  });

  it('a 50 MB body is refused and stores its first maxBodyBytes, not 50 MB; a gzip body is recorded as compressed', async () => {
    const mb = Buffer.alloc(1024 * 1024, 0x61);
    let sent = 0;
    const big = new Readable({
      read() {
        this.push(sent++ < 50 ? mb : null);
      },
    });
    const huge = await chat('', { body: big });
    expect(huge.status).toBe(413);
    const gz = await chat('', { body: gzipSync(JSON.stringify({ model: 'mm', messages: [] })), headers: { 'content-encoding': 'gzip' } });
    expect(gz.status).toBe(400);
    await captures.settle();
    const [h] = byRequest(huge.id);
    expect(h!.request).toMatchObject({ truncated: true, storedBytes: 64 * 1024 });
    expect(h!.request.sizeBytes).toBeGreaterThan(8 * 1024 * 1024);
    const row = store.db.prepare('SELECT length(request_text) AS n FROM captures WHERE request_id = ?').get(huge.id) as { n: number };
    expect(row.n).toBe(64 * 1024);
    const [g] = byRequest(gz.id);
    expect(g).toMatchObject({ status: 400, errorCode: 'invalid_json', request: { encoding: 'compressed', contentEncoding: 'gzip', storedBytes: 0 } });
    expect((await captures.show(g!.id, 'test')).request.text).toBeNull();
  });

  it('captures expire by the capture retention (days)', async () => {
    const failed = await chat('please fail, then expire');
    await captures.settle();
    expect(byRequest(failed.id)).toHaveLength(1);
    expect(captures.status().rowsKept).toBeGreaterThan(0);
    clock.advance(8 * 86_400_000);
    expect(await captures.settle()).toBeGreaterThan(0);
    expect(byRequest(failed.id)).toEqual([]);
    expect(captures.status()).toMatchObject({ enabled: true, failures: true, rowsKept: 0, bytesKept: 0, lastPrunedAt: clock.now() });
  });
});
