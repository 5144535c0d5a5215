import OpenAI from 'openai';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startStub, startStubProxy, type StubHandler, type StubProxy } from './helpers.js';

// Stub upstreams on loopback that stall, reset, refuse and stream, with the proxy in front.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(handler: StubHandler, proxy: Parameters<typeof startStubProxy>[1] = {}, slots = 2) {
  const stub = await startStub(handler);
  const p = await startStubProxy([{ label: 'h', id: 's', model: 'M', url: stub.url, slots, aliases: ['m-alias'] }], proxy);
  cleanups.push(() => stub.close(), () => p.close());
  const token = p.token('t', 'interactive');
  return { stub, p, token, client: (opts: Partial<ConstructorParameters<typeof OpenAI>[0]> = {}) => new OpenAI({ baseURL: p.proxy.url, apiKey: token, maxRetries: 0, ...opts }) };
}

const completion = (content: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    id: 'c1',
    object: 'chat.completion',
    created: 1,
    model: 'M',
    choices: [{ index: 0, message: { role: 'assistant', content, ...extra }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  });

function okAfter(ms: number): StubHandler {
  return (_req, res) => {
    const t = setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(completion('ok'));
    }, ms);
    res.on('close', () => clearTimeout(t));
  };
}

const msg = [{ role: 'user' as const, content: 'x' }];

async function rowsEventually(p: StubProxy, n: number): Promise<number> {
  for (let i = 0; i < 50 && p.rows() < n; i++) await new Promise((r) => setTimeout(r, 20));
  return p.rows();
}

describe('proxy against stub upstreams', () => {
  it('passes tool calls through untouched', async () => {
    const toolCalls = [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }];
    let seen: Record<string, unknown> = {};
    const { client } = await setup((_req, res, body) => {
      seen = JSON.parse(body.toString()) as Record<string, unknown>;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(completion('', { tool_calls: toolCalls }));
    });
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const r = await client().chat.completions.create({ model: 'm-alias', messages: msg, tools, tool_choice: 'auto' });
    expect(r.choices[0]!.message.tool_calls).toEqual(toolCalls);
    expect(seen['tools']).toEqual(tools);
    expect(seen['model']).toBe('M');
  });

  it('the openai client retries our 429 queue_full, honouring Retry-After, and then succeeds', async () => {
    const { client } = await setup(okAfter(300), { queueBound: { interactive: 0 } }, 1);
    const c = client({ maxRetries: 2 });
    const first = c.chat.completions.create({ model: 'M', messages: msg });
    await new Promise((r) => setTimeout(r, 30));
    const t0 = Date.now();
    const { response } = await c.chat.completions.create({ model: 'M', messages: msg }).withResponse();
    const waited = Date.now() - t0;
    expect(response.status).toBe(200);
    // Retry-After was 1 s (one service time, rounded up); the client waited for it rather than its own 0.5 s backoff.
    expect(waited).toBeGreaterThanOrEqual(900);
    await first;
    const raw = await request(`${client().baseURL}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${c.apiKey}`, 'content-type': 'application/json' }, body: '{"model":"M"}' });
    await raw.body.dump();
  });

  it('429 queue_full and hold_timeout carry Retry-After, retry-after-ms, X-Queue-Depth and an OpenAI error body', async () => {
    // The third request must arrive while the second still waits in the one queue place: a hold budget of 100 ms
    // left 60 ms for that, and a full CI run (load 8) once took longer, so the second had already timed out and the
    // third was queued (hold_timeout, not queue_full). 1 s of budget, the slot busy for 1.5 s.
    const { client } = await setup(okAfter(1_500), { queueBound: { interactive: 1 }, holdBudgetMs: { interactive: 1_000 } }, 1);
    const c = client();
    const running = c.chat.completions.create({ model: 'M', messages: msg });
    await new Promise((r) => setTimeout(r, 20));
    const held = c.chat.completions.create({ model: 'M', messages: msg }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 20));
    const full = (await c.chat.completions.create({ model: 'M', messages: msg }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(full.status).toBe(429);
    expect(full.code).toBe('queue_full');
    expect(full.type).toBe('rate_limit_error');
    expect(full.headers!.get('retry-after')).toMatch(/^\d+$/);
    expect(full.headers!.get('retry-after-ms')).toMatch(/^\d+$/);
    expect(full.headers!.get('x-queue-depth')).toBe('1');
    const timedOut = (await held) as InstanceType<typeof OpenAI.APIError>;
    expect(timedOut.status).toBe(429);
    expect(timedOut.code).toBe('hold_timeout');
    await running;
  });

  it('passes upstream 429 and 5xx answers through with their bodies', async () => {
    let n = 0;
    const { client } = await setup((_req, res) => {
      n++;
      const status = n === 1 ? 429 : 500;
      res.writeHead(status, { 'content-type': 'application/json', 'retry-after': '2' });
      res.end(JSON.stringify({ error: { message: `upstream says ${status}`, type: 'x', param: null, code: String(status) } }));
    });
    const e1 = (await client().chat.completions.create({ model: 'M', messages: msg }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(e1.status).toBe(429);
    expect(e1.headers!.get('retry-after')).toBe('2');
    const e2 = (await client().chat.completions.create({ model: 'M', messages: msg }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(e2.status).toBe(500);
    expect(e2.message).toContain('upstream says 500');
  });

  it('an upstream that resets the connection → 502 upstream_unreachable with Retry-After; the slot is freed', async () => {
    const { client, p } = await setup((req) => req.socket.destroy(), {}, 1);
    for (let i = 0; i < 3; i++) {
      const e = (await client().chat.completions.create({ model: 'M', messages: msg }).catch((x: unknown) => x)) as InstanceType<typeof OpenAI.APIError>;
      expect(e.status).toBe(502);
      expect(e.code).toBe('upstream_unreachable');
      expect(e.headers!.get('retry-after')).toBe('1');
    }
    expect(p.proxy.snapshot().inFlight).toBe(0);
  });

  it('an upstream that is not listening → 502; a tunnel that is down → 503 tunnel_down', async () => {
    const stub = await startStub(() => undefined);
    const url = stub.url;
    await stub.close();
    const down = await startStubProxy([{ label: 'h', id: 's', model: 'M', url }], {}, {
      resolve: (spec) => (spec.key === 'h/s' ? { ok: true, url } : { ok: false, code: 'tunnel_down', message: 'x', retryAfterS: 5 }),
    });
    cleanups.push(() => down.close());
    const c = new OpenAI({ baseURL: down.proxy.url, apiKey: down.token(), maxRetries: 0 });
    await expect(c.chat.completions.create({ model: 'M', messages: msg })).rejects.toMatchObject({ status: 502, code: 'upstream_unreachable' });
    const tunnel = await startStubProxy([{ label: 'h', id: 's', model: 'M', url }], {}, {
      resolve: () => ({ ok: false, code: 'tunnel_down', message: 'no tunnel to h/s', retryAfterS: 5 }),
    });
    cleanups.push(() => tunnel.close());
    const c2 = new OpenAI({ baseURL: tunnel.proxy.url, apiKey: tunnel.token(), maxRetries: 0 });
    const e = (await c2.chat.completions.create({ model: 'M', messages: msg }).catch((x: unknown) => x)) as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).toBe(503);
    expect(e.code).toBe('tunnel_down');
    expect(e.headers!.get('retry-after')).toBe('5');
  });

  it('a client that disconnects mid-stream aborts the upstream request and frees the slot', async () => {
    let upstreamClosed = false;
    const { p, token } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const t = setInterval(() => res.write('data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'), 10);
      res.on('close', () => {
        upstreamClosed = true;
        clearInterval(t);
      });
    }, {}, 1);
    const ac = new AbortController();
    const r = await request(`${p.proxy.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'M', stream: true, messages: msg }),
      signal: ac.signal,
    });
    const it0 = r.body[Symbol.asyncIterator]();
    await it0.next();
    expect(p.proxy.snapshot().inFlight).toBe(1);
    ac.abort();
    for (let i = 0; i < 50 && (!upstreamClosed || p.proxy.snapshot().inFlight > 0); i++) await new Promise((x) => setTimeout(x, 10));
    expect(upstreamClosed).toBe(true);
    expect(p.proxy.snapshot().inFlight).toBe(0);
    expect(await rowsEventually(p, 1)).toBe(1);
    expect(p.store.db.prepare('SELECT status, error_code FROM requests').get()).toEqual({ status: 499, error_code: 'client_closed' });
  });

  it('a stalled upstream streams nothing, but a waiting stream gets keep-alive comments', async () => {
    const { p, token } = await setup(okAfter(700), { keepAliveIntervalMs: 100 }, 1);
    const c = new OpenAI({ baseURL: p.proxy.url, apiKey: token, maxRetries: 0 });
    const blocker = c.chat.completions.create({ model: 'M', messages: msg });
    await new Promise((r) => setTimeout(r, 20));
    const r = await request(`${p.proxy.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'M', stream: true, messages: msg }),
    });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toContain('text/event-stream');
    const text = await r.body.text();
    expect(text.match(/^: keep-alive$/gm)?.length ?? 0).toBeGreaterThanOrEqual(3);
    await blocker;
  });

  it('Idempotency-Key: a repeat while running waits, a later one replays; one upstream run', async () => {
    const { stub, client } = await setup(okAfter(150));
    const c = client();
    const opts = { headers: { 'idempotency-key': 'order-42' } };
    const [a, b] = await Promise.all([
      c.chat.completions.create({ model: 'M', messages: msg }, opts).withResponse(),
      c.chat.completions.create({ model: 'M', messages: msg }, opts).withResponse(),
    ]);
    const later = await c.chat.completions.create({ model: 'M', messages: msg }, opts).withResponse();
    expect(stub.requests).toBe(1);
    expect(b.data).toEqual(a.data);
    expect(later.data).toEqual(a.data);
    expect(later.response.headers.get('idempotent-replayed')).toBe('true');
    await expect(c.chat.completions.create({ model: 'M', messages: [{ role: 'user', content: 'other' }] }, opts)).rejects.toMatchObject({ status: 409, code: 'idempotency_conflict' });
  });

  it('priority under overload: interactive waits at most about one service time while batch saturates', async () => {
    const serviceMs = 60;
    const { p, token } = await setup(okAfter(serviceMs), {}, 4);
    const batch = new OpenAI({ baseURL: p.proxy.url, apiKey: token, maxRetries: 0, defaultHeaders: { 'x-priority': 'batch' } });
    const inter = new OpenAI({ baseURL: p.proxy.url, apiKey: token, maxRetries: 0 });
    let stop = false;
    let sent = 0;
    const batchLoop = async () => {
      while (!stop) {
        sent++;
        await batch.chat.completions.create({ model: 'M', messages: msg });
      }
    };
    const waits: number[] = [];
    const interLoop = async () => {
      for (let i = 0; i < 8; i++) {
        sent++;
        const { response } = await inter.chat.completions.create({ model: 'M', messages: msg }).withResponse();
        waits.push(Number(response.headers.get('x-queue-ms')));
      }
    };
    const batches = Array.from({ length: 24 }, batchLoop);
    await Promise.all(Array.from({ length: 4 }, interLoop));
    stop = true;
    await Promise.all(batches);
    waits.sort((a, b) => a - b);
    const p95 = waits[Math.ceil(waits.length * 0.95) - 1]!;
    expect(p95).toBeLessThanOrEqual(serviceMs * 1.5);
    const batchFig = p.proxy.snapshot().upstreams[0]!.classes.find((c) => c.class === 'batch')!;
    expect(batchFig.waitP50Ms!).toBeGreaterThan(serviceMs);
    expect(await rowsEventually(p, sent)).toBe(sent);
    expect(p.proxy.answeredCount).toBe(sent);
  });
});
