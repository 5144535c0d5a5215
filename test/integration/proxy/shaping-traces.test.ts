import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStub, startStubProxy, type StubProxy } from './helpers.js';

// proxy.models and traces through the real ProxyServer to loopback upstreams that record what
// they RECEIVED (body and headers): the max_tokens default and ceiling, the client's trace
// forwarded and returned and found by the request query, and per-model timeouts that fire with
// their own value while another model keeps the global one.

interface Received {
  body: Record<string, unknown>;
  raw: string;
  headers: IncomingHttpHeaders;
}

const received: Received[] = [];
let stubs: Array<Awaited<ReturnType<typeof startStub>>> = [];
let p: StubProxy;
let token: string;

const GLOBAL_IDLE_MS = 2_500;

/** What the stub does is chosen by the prompt: `stall` sends one chunk and falls silent, `drip` sends one every 200 ms for ever. */
function behaviour(body: Record<string, unknown>): string {
  const messages = body['messages'] as Array<{ content: string }> | undefined;
  return messages?.[0]?.content ?? '';
}

const chunk = (text: string) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: text } }] })}\n\n`;

beforeAll(async () => {
  const handler = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, raw: Buffer) => {
    const body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    received.push({ body, raw: raw.toString('utf8'), headers: req.headers });
    const how = behaviour(body);
    if (how === 'stall' || how === 'drip') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk('a'));
      if (how === 'drip') {
        const t = setInterval(() => res.write(chunk('b')), 200);
        res.on('close', () => clearInterval(t));
      }
      return;
    }
    const out = JSON.stringify({ id: 'x', object: 'chat.completion', model: body['model'], choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
    res.end(out);
  };
  stubs = [await startStub(handler), await startStub(handler)];
  p = await startStubProxy(
    [
      { label: 'ha', id: 'a', model: 'Model-A', aliases: ['a'], url: stubs[0]!.url },
      { label: 'hb', id: 'b', model: 'Model-B', url: stubs[1]!.url },
    ],
    {
      upstreamIdleTimeoutMs: GLOBAL_IDLE_MS,
      models: { a: { maxTokens: { default: 7, ceiling: 50, overCeiling: 'clamp' }, timeouts: { idleMs: 1_000, totalMs: 1_500 } } },
    },
  );
  token = p.token('traces');
});

afterAll(async () => {
  await p?.close();
  for (const s of stubs) await s.close();
});

async function post(path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const r = await request(p.proxy.origin + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await r.body.text();
  const h: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(r.headers)) h[k] = Array.isArray(v) ? v.join(', ') : v;
  return { status: r.statusCode, headers: h, text, got: received.at(-1)! };
}

const MSG = [{ role: 'user', content: 'hi' }];

describe('max_tokens per model (proxy.models)', () => {
  it('a chat without max_tokens carries the model default to the server, and the answer says so', async () => {
    const a = await post('/v1/chat/completions', { model: 'a', messages: MSG });
    expect(a.status).toBe(200);
    expect(a.got.body).toEqual({ model: 'Model-A', messages: MSG, max_tokens: 7 });
    expect(a.headers['x-gpu-console-max-tokens']).toBe('default 7');
  });

  it('keeps the bytes as sent when only the default is added (spliced, not re-serialised)', async () => {
    const sent = '{"model":"Model-A",   "messages":[{"role":"user","content":"hi"}]}';
    const r = await request(p.proxy.origin + '/v1/chat/completions', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: sent });
    await r.body.text();
    expect(received.at(-1)!.raw).toBe('{"max_tokens":7,"model":"Model-A",   "messages":[{"role":"user","content":"hi"}]}');
  });

  it('clamps max_tokens and max_completion_tokens above the ceiling to it', async () => {
    const a = await post('/v1/chat/completions', { model: 'Model-A', messages: MSG, max_tokens: 500 });
    expect(a.got.body['max_tokens']).toBe(50);
    expect(a.headers['x-gpu-console-max-tokens']).toBe('clamped 500->50');
    const b = await post('/v1/chat/completions', { model: 'a', messages: MSG, max_completion_tokens: 51 });
    expect(b.got.body).toEqual({ model: 'Model-A', messages: MSG, max_completion_tokens: 50 });
    expect(b.headers['x-gpu-console-max-tokens']).toBe('clamped 51->50');
  });

  it('leaves a request within the ceiling, another model, and embeddings untouched', async () => {
    const within = await post('/v1/chat/completions', { model: 'Model-A', messages: MSG, max_tokens: 20 });
    expect(within.got.raw).toBe(JSON.stringify({ model: 'Model-A', messages: MSG, max_tokens: 20 }));
    expect(within.headers['x-gpu-console-max-tokens']).toBeUndefined();
    const other = await post('/v1/chat/completions', { model: 'Model-B', messages: MSG });
    expect(other.got.raw).toBe(JSON.stringify({ model: 'Model-B', messages: MSG }));
    expect(other.headers['x-gpu-console-max-tokens']).toBeUndefined();
    const emb = await post('/v1/embeddings', { model: 'Model-A', input: 'x' });
    expect(emb.got.raw).toBe(JSON.stringify({ model: 'Model-A', input: 'x' }));
  });
});

describe('traces', () => {
  it("a client's X-Request-Id reaches the upstream, comes back, and finds its rows (reused ids included)", async () => {
    const trace = 'order-42/step 3';
    const first = await post('/v1/chat/completions', { model: 'Model-B', messages: MSG }, { 'x-request-id': trace });
    expect(first.got.headers['x-request-id']).toBe(trace);
    expect(first.headers['x-request-id']).toBe(trace);
    const ours = first.headers['x-gpu-console-request-id']!;
    expect(ours).toMatch(/^req_[0-9a-f]{24}$/);
    const second = await post('/v1/chat/completions', { model: 'Model-B', messages: MSG }, { 'x-request-id': trace });
    expect(second.headers['x-gpu-console-request-id']).not.toBe(ours);
    const rows = p.log.query({ limit: 10, outcome: 'all', trace });
    expect(rows.map((r) => r.id)).toEqual([second.headers['x-gpu-console-request-id'], ours]);
    expect(rows.every((r) => r.traceId === trace)).toBe(true);
    // Our own id finds its row too.
    expect(p.log.query({ limit: 10, outcome: 'all', trace: ours }).map((r) => r.id)).toEqual([ours]);
  });

  it('a W3C traceparent is forwarded as sent; its trace-id is the trace', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const traceparent = `00-${traceId}-00f067aa0ba902b7-01`;
    const a = await post('/v1/chat/completions', { model: 'Model-B', messages: MSG }, { traceparent, tracestate: 'congo=t61rcWkgMzE' });
    expect(a.got.headers['traceparent']).toBe(traceparent);
    expect(a.got.headers['tracestate']).toBe('congo=t61rcWkgMzE');
    expect(a.got.headers['x-request-id']).toBe(traceId);
    expect(a.headers['traceparent']).toBe(traceparent);
    expect(a.headers['x-request-id']).toBe(traceId);
    expect(p.log.query({ limit: 5, outcome: 'all', trace: traceId }).map((r) => r.id)).toEqual([a.headers['x-gpu-console-request-id']]);
  });

  it('without one, ours is made, sent upstream and returned; the row has no client trace', async () => {
    const a = await post('/v1/chat/completions', { model: 'Model-B', messages: MSG });
    const ours = a.headers['x-gpu-console-request-id']!;
    expect(a.headers['x-request-id']).toBe(ours);
    expect(a.got.headers['x-request-id']).toBe(ours);
    expect(a.got.headers['traceparent']).toBeUndefined();
    expect(p.log.query({ limit: 5, outcome: 'all', trace: ours })[0]).toMatchObject({ id: ours, traceId: null });
  });

  it('a 10 kB X-Request-Id is refused, never echoed, and nothing reaches the upstream', async () => {
    const before = received.length;
    const a = await post('/v1/chat/completions', { model: 'Model-B', messages: MSG }, { 'x-request-id': 'x'.repeat(10_240) });
    expect(a.status).toBe(400);
    expect(JSON.parse(a.text).error).toMatchObject({ code: 'invalid_request_id', param: 'x-request-id' });
    expect(a.headers['x-request-id']).toMatch(/^req_/);
    expect(received.length).toBe(before);
  });
});

describe('timeouts per model', () => {
  it("the model's idle timeout fires with its own value; another model keeps the global one", async () => {
    const t0 = performance.now();
    const a = await post('/v1/chat/completions', { model: 'a', messages: [{ role: 'user', content: 'stall' }], stream: true, max_tokens: 5 });
    const aMs = performance.now() - t0;
    expect(a.text).toContain('proxy.models.a.timeouts.idleMs');
    expect(a.text).toContain('sent nothing for 1000 ms');
    expect(aMs).toBeLessThan(GLOBAL_IDLE_MS);

    const t1 = performance.now();
    const b = await post('/v1/chat/completions', { model: 'Model-B', messages: [{ role: 'user', content: 'stall' }], stream: true });
    const bMs = performance.now() - t1;
    expect(b.text).toContain(`sent nothing for ${GLOBAL_IDLE_MS} ms`);
    expect(b.text).toContain('proxy.upstreamIdleTimeoutMs');
    expect(bMs).toBeGreaterThanOrEqual(GLOBAL_IDLE_MS - 50);
  });

  it('the total deadline cuts a stream that never falls silent, and names itself', async () => {
    const t0 = performance.now();
    const a = await post('/v1/chat/completions', { model: 'a', messages: [{ role: 'user', content: 'drip' }], stream: true, max_tokens: 5 });
    const ms = performance.now() - t0;
    expect(a.text).toContain('did not finish within 1500 ms (total timeout, proxy.models.a.timeouts.totalMs)');
    expect(ms).toBeGreaterThanOrEqual(1_450);
    expect(ms).toBeLessThan(GLOBAL_IDLE_MS + 1_000);
    p.log.flush();
    const row = p.log.query({ limit: 1, outcome: 'all', trace: a.headers['x-gpu-console-request-id']! })[0];
    expect(row).toMatchObject({ status: 502, errorCode: 'upstream_reset' });
  });
});
