import { connect } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERSION_CHECK_MS } from '../../../src-main/core/proxy/index.js';
import { rawHttp, startStub, startStubProxy, type StubProxy } from './helpers.js';

// Each bad request gets a clear OpenAI-style error and leaves the others alone.

let stub: Awaited<ReturnType<typeof startStub>>;
let p: StubProxy;
let token: string;
let base: string;

beforeAll(async () => {
  stub = await startStub((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'x', object: 'chat.completion', choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } }));
  });
  p = await startStubProxy([{ label: 'h', id: 's', model: 'M', url: stub.url }], { maxBodyBytes: 4096, bodyTimeoutMs: 300 });
  token = p.token('good', 'system');
  base = p.proxy.origin;
});
afterAll(async () => {
  await p?.close();
  await stub?.close();
});

async function call(path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  const r = await request(base + path, {
    method: (init.method ?? 'POST') as 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
    body: init.body ?? (init.method === 'GET' ? undefined : JSON.stringify({ model: 'M', messages: [] })),
  });
  const text = await r.body.text();
  return { status: r.statusCode, headers: r.headers, body: text ? (JSON.parse(text) as { error?: { code: string; type: string; message: string; param: string | null } }) : {} };
}

const raw = (text: string) => rawHttp(base, text);

describe('bad input', () => {
  it.each([
    ['malformed JSON', { body: '{"model": "M",' }, 400, 'invalid_json'],
    ['a JSON array', { body: '[1,2]' }, 400, 'invalid_request'],
    ['no model', { body: '{"messages":[]}' }, 400, 'missing_model'],
    ['wrong content type', { headers: { 'content-type': 'text/plain' } }, 415, 'unsupported_media_type'],
    ['a body over the limit', { body: JSON.stringify({ model: 'M', pad: 'x'.repeat(5000) }) }, 413, 'body_too_large'],
    ['no token', { headers: { authorization: '' } }, 401, 'missing_token'],
    ['an unknown token', { headers: { authorization: 'Bearer gcp_nope' } }, 401, 'invalid_token'],
    ['a class above the token', { headers: { 'x-priority': 'interactive' } }, 403, 'class_not_allowed'],
    ['an unreadable class', { headers: { 'x-priority': 'urgent!!' } }, 400, 'invalid_priority'],
    ['an unknown model', { body: JSON.stringify({ model: 'gpt-4o' }) }, 404, 'model_not_found'],
    ['a foreign Host header', { headers: { host: 'evil.example:80' } }, 403, 'forbidden_host'],
  ] as const)('%s → %i %s', async (_name, init, status, code) => {
    const r = await call('/v1/chat/completions', init as never);
    expect(r.status).toBe(status);
    expect(r.body.error).toMatchObject({ code, type: expect.any(String), message: expect.any(String) });
    expect(r.headers['x-queue-ms']).toBeDefined();
    expect(r.headers['x-request-id']).toMatch(/^req_/);
  });

  it('a token revoked through the console gets 401 token_revoked at once', async () => {
    const t = p.token('soon-revoked');
    expect((await call('/v1/models', { method: 'GET', headers: { authorization: `Bearer ${t}` } })).status).toBe(200);
    p.tokens.revoke('soon-revoked');
    const r = await call('/v1/models', { method: 'GET', headers: { authorization: `Bearer ${t}` } });
    expect(r.status).toBe(401);
    expect(r.body.error?.code).toBe('token_revoked');
  });

  it('a token revoked behind the proxy\'s back (another writer) gets 401 within VERSION_CHECK_MS', async () => {
    const t = p.token('revoked-elsewhere');
    const get = () => call('/v1/models', { method: 'GET', headers: { authorization: `Bearer ${t}` } });
    expect((await get()).status).toBe(200);
    createRevoke(p, 'revoked-elsewhere');
    const revokedAt = performance.now();
    let r = await get();
    while (r.status === 200 && performance.now() - revokedAt < 1_000) r = await get();
    expect(r.status).toBe(401);
    expect(r.body.error?.code).toBe('token_revoked');
    // Requests kept coming all along: the cache still gave way after the interval (plus scheduling slack).
    expect(performance.now() - revokedAt).toBeLessThan(VERSION_CHECK_MS + 400);
  });

  it.each(['/v1/chat/completions/', '/v1/../v1/chat/completions', '/v1/chat/../completions', '/v1/%2e%2e/admin', '//v1/models', '/sleep', '/wake_up',
    '/collective_rpc', '/reset_prefix_cache', '/is_sleeping', '/v1/metrics', '/version', '/v1/chat%2fcompletions'])('the path %s is 404', async (path) => {
    const r = await raw(`POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\ncontent-length: 13\r\nconnection: close\r\n\r\n{"model":"M"}`);
    expect(r).toMatch(/^HTTP\/1\.1 404/);
    expect(r).toContain('"code":"not_found"');
  });

  it('never reaches an engine admin endpoint: the stub saw none of them', () => {
    // Every request the stub counted came from a successful route (none above reached it).
    expect(stub.requests).toBe(0);
  });

  it('header injection: CR/LF in a header is refused before routing; values are never echoed', async () => {
    const r = await raw(`POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nx-priority: batch\r injected: 1\r\n\r\n`);
    expect(r).toMatch(/^HTTP\/1\.1 400/);
    const ok = await call('/v1/chat/completions', { body: JSON.stringify({ model: 'M\r\nSet-Cookie: a=b' }) });
    expect(ok.status).toBe(404);
    expect(JSON.stringify(ok.headers)).not.toContain('Set-Cookie');
  });

  it('a client that sends its body too slowly gets 408 body_timeout; others are served meanwhile', async () => {
    const slow = raw(`POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"mo`);
    const fast = await call('/v1/chat/completions', { body: JSON.stringify({ model: 'm' }) });
    expect(fast.status).toBe(200);
    expect(await slow).toMatch(/^HTTP\/1\.1 408[\s\S]*body_timeout/);
  });

  it('a client that disconnects mid-body is recorded (499) and nothing else is affected', async () => {
    const before = p.rows();
    await new Promise<void>((resolve) => {
      const s = connect(Number(new URL(base).port), '127.0.0.1', () => {
        s.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"mo`);
        setTimeout(() => {
          s.destroy();
          resolve();
        }, 50);
      });
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(p.rows()).toBe(before + 1);
    const row = p.store.db.prepare('SELECT status, error_code FROM requests ORDER BY seq DESC LIMIT 1').get();
    expect(row).toEqual({ status: 499, error_code: 'client_closed' });
    expect((await call('/v1/chat/completions', { body: JSON.stringify({ model: 'M' }) })).status).toBe(200);
  });

  it('wrong method → 405 with Allow; /health and /metrics need no token', async () => {
    const r = await call('/v1/models', { method: 'POST' });
    expect(r.status).toBe(405);
    expect(r.headers['allow']).toBe('GET');
    const health = await request(`${base}/health`);
    expect(health.statusCode).toBe(200);
    await health.body.dump();
    const metrics = await request(`${base}/metrics`);
    const text = await metrics.body.text();
    expect(text).toContain('# TYPE gpu_console_proxy_requests_total counter');
    expect(text).toMatch(/gpu_console_proxy_requests_total\{upstream="h\/s",class="system",status="200"\} \d+/);
  });
});

function createRevoke(stubProxy: StubProxy, name: string): void {
  stubProxy.store.db.prepare('UPDATE client_tokens SET revoked_at = ? WHERE name = ?').run(Date.now(), name);
}
