import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import type { UpstreamSpec } from '../../../src-main/core/proxy/registry.js';
import type { Unavailable, UpstreamAvailability, UpstreamResolver } from '../../../src-main/core/proxy/resolver.js';
import { startStub, startStubProxy, type StubProxy } from './helpers.js';

// Known-down upstreams are not held silently: a request waits only while the
// expected recovery fits its class's hold budget (and says why, in queue
// frames and headers), otherwise it is refused at once with Retry-After; a
// wake on request is started once for all the requests that wait for it.

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

const okBody = JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });

async function upstream() {
  const stub = await startStub((req, res, body) => {
    const stream = (JSON.parse(body.toString()) as { stream?: boolean }).stream === true;
    if (stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\ndata: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}\n\ndata: [DONE]\n\n');
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(okBody);
    }
  });
  closers.push(() => stub.close());
  return stub;
}

/** A resolver whose answer the test sets; counts wake requests. */
function switchable(url: string) {
  let down: Unavailable | null = null;
  const listeners = new Set<() => void>();
  const r: UpstreamResolver & { set(u: Unavailable | null): void; wakes: number } = {
    wakes: 0,
    resolve(_spec: UpstreamSpec): UpstreamAvailability {
      return down ?? { ok: true, url };
    },
    requestWake() {
      r.wakes++;
    },
    onDidChange(listener) {
      listeners.add(listener);
      return { dispose: () => listeners.delete(listener) };
    },
    set(u) {
      down = u;
      for (const l of listeners) l();
    },
  };
  return r;
}

const reconnecting = (expectedMs: number): Unavailable => ({
  ok: false,
  code: 'tunnel_down',
  message: 'SSH to gpu is reconnecting',
  retryAfterS: Math.ceil(expectedMs / 1000),
  recovery: { reason: 'reconnecting', expectedMs },
});

async function proxyWith(resolver: UpstreamResolver, settings: Record<string, unknown> = {}): Promise<StubProxy> {
  const p = await startStubProxy([{ label: 'gpu', id: 'm', model: 'qwen', url: 'http://unused' }], settings, resolver);
  closers.push(() => p.close());
  return p;
}

function chat(p: StubProxy, token: string, extra: Record<string, string> = {}, stream = false) {
  return request(`${p.proxy.url}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...extra },
    body: JSON.stringify({ model: 'qwen', stream, messages: [{ role: 'user', content: 'hi' }] }),
  });
}

describe('holding while an upstream recovers', () => {
  it('held through a reconnect that fits the budget, then served; the answer says how long and why', async () => {
    const up = await upstream();
    const r = switchable(up.url);
    r.set(reconnecting(1_000));
    const p = await proxyWith(r);
    const t0 = performance.now();
    const pending = chat(p, p.token());
    setTimeout(() => r.set(null), 600);
    const res = await pending;
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(await res.body.text()).choices[0].message.content).toBe('hi');
    expect(performance.now() - t0).toBeGreaterThan(550);
    expect(res.headers['x-hold-reason']).toBe('reconnecting');
    expect(Number(res.headers['x-hold-ms'])).toBeGreaterThanOrEqual(550);
  });

  it('a held stream with X-Queue-Events: on gets queue frames naming the reason before the first token', async () => {
    const up = await upstream();
    const r = switchable(up.url);
    r.set(reconnecting(2_000));
    const p = await proxyWith(r, { keepAliveIntervalMs: 200 });
    const pending = chat(p, p.token(), { 'x-queue-events': 'on' }, true);
    setTimeout(() => r.set(null), 700);
    const res = await pending;
    expect(res.statusCode).toBe(200);
    const text = await res.body.text();
    const first = /event: queue\ndata: (\{[^\n]+\})/.exec(text);
    expect(first).not.toBeNull();
    expect(JSON.parse(first![1]!)).toMatchObject({ reason: 'reconnecting', upstream: 'gpu/m', position: 1 });
    expect(text.indexOf('event: queue')).toBeLessThan(text.indexOf('"content":"hi"'));
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('refused at once when the expected recovery is longer than the class budget (system: 10 s)', async () => {
    const up = await upstream();
    const r = switchable(up.url);
    r.set(reconnecting(120_000));
    const p = await proxyWith(r);
    const t0 = performance.now();
    const res = await chat(p, p.token('sys', 'system'), { 'x-priority': 'system' });
    const ms = performance.now() - t0;
    expect(res.statusCode).toBe(503);
    expect(ms).toBeLessThan(500);
    expect(res.headers['retry-after']).toBe('120');
    expect(res.headers['retry-after-ms']).toBe('120000');
    const body = JSON.parse(await res.body.text());
    expect(body.error).toMatchObject({ code: 'tunnel_down', type: 'server_error', reason: 'reconnecting', expected_back_ms: 120_000 });
  });

  it('held until what is left of its budget no longer covers the expected reconnect: refused with the latest reason, not silently timed out', async () => {
    const up = await upstream();
    const r = switchable(up.url);
    r.set(reconnecting(300));
    const p = await proxyWith(r, { holdBudgetMs: { interactive: 800 } });
    const t0 = performance.now();
    const res = await chat(p, p.token());
    expect(res.statusCode).toBe(503);
    // Re-checked every 250 ms: released at the first check with less than 300 ms left (about 500 ms in).
    expect(performance.now() - t0).toBeGreaterThan(450);
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(res.headers['retry-after']).toBeDefined();
    expect(res.headers['x-hold-reason']).toBe('reconnecting');
    expect(JSON.parse(await res.body.text()).error.code).toBe('tunnel_down');
  });

  it('released at once when the link turns hard while held, with the answer a new request gets', async () => {
    const up = await upstream();
    const r = switchable(up.url);
    r.set(reconnecting(5_000));
    const p = await proxyWith(r);
    const pending = chat(p, p.token());
    const hard: Unavailable = { ok: false, code: 'tunnel_down', message: 'SSH to gpu refuses connections', retryAfterS: 6, recovery: null, extra: { recovery_expected: false } };
    let turnedAt = 0;
    setTimeout(() => {
      turnedAt = performance.now();
      r.set(hard);
    }, 300);
    const res = await pending;
    const answeredAt = performance.now();
    expect(res.statusCode).toBe(503);
    expect(answeredAt - turnedAt).toBeLessThan(200);
    expect(res.headers['retry-after']).toBe('6');
    expect(res.headers['x-hold-reason']).toBe('reconnecting');
    expect(JSON.parse(await res.body.text()).error).toMatchObject({ code: 'tunnel_down', recovery_expected: false });
    // A new request: the same answer, not held.
    const t0 = performance.now();
    const again = await chat(p, p.token());
    expect(performance.now() - t0).toBeLessThan(200);
    expect(again.statusCode).toBe(503);
    expect(again.headers['retry-after']).toBe('6');
    expect(again.headers['x-hold-reason']).toBeUndefined();
    await again.body.text();
  });

  it('a held stream already answered 200 (keep-alives) and then released: the error frame carries the Retry-After figure', async () => {
    const up = await upstream();
    const r = switchable(up.url);
    r.set(reconnecting(5_000));
    const p = await proxyWith(r, { keepAliveIntervalMs: 100 });
    const pending = chat(p, p.token(), {}, true);
    setTimeout(() => r.set({ ok: false, code: 'tunnel_down', message: 'SSH to gpu refuses connections', retryAfterS: 6, recovery: null }), 400);
    const res = await pending;
    expect(res.statusCode).toBe(200);
    const text = await res.body.text();
    expect(text).toContain(': keep-alive');
    const frame = /data: (\{"error"[^\n]+\})/.exec(text);
    expect(frame).not.toBeNull();
    expect(JSON.parse(frame![1]!).error).toMatchObject({ code: 'tunnel_down', retry_after_s: 6 });
  });

  it('the client\'s stated timeout caps the hold: refused at once when the reconnect is expected after it', async () => {
    const up = await upstream();
    const r = switchable(up.url);
    r.set(reconnecting(5_000));
    const p = await proxyWith(r);
    for (const header of ['x-request-timeout', 'x-stainless-timeout', 'x-stainless-read-timeout']) {
      const t0 = performance.now();
      const res = await chat(p, p.token(), { [header]: '4' });
      expect(performance.now() - t0).toBeLessThan(500);
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      await res.body.text();
    }
    // Without it the same request is held (the class budget is 45 s); a bad value is ignored.
    const held = chat(p, p.token(), { 'x-request-timeout': '4s' });
    setTimeout(() => r.set(null), 400);
    const res = await held;
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-hold-reason']).toBe('reconnecting');
    await res.body.text();
  });

  it('the client\'s stated timeout ends a hold under way a second before it, and never stretches the class budget', async () => {
    const up = await upstream();
    const r = switchable(up.url);
    r.set(reconnecting(300));
    const p = await proxyWith(r);
    let t0 = performance.now();
    const res = await chat(p, p.token(), { 'x-stainless-timeout': '2' });
    let ms = performance.now() - t0;
    expect(res.statusCode).toBe(503);
    expect(ms).toBeGreaterThan(400);
    expect(ms).toBeLessThan(1_000);
    expect(res.headers['x-hold-reason']).toBe('reconnecting');
    await res.body.text();

    const q = await proxyWith(r, { holdBudgetMs: { interactive: 800 } });
    t0 = performance.now();
    const capped = await chat(q, q.token(), { 'x-request-timeout': '3600' });
    ms = performance.now() - t0;
    expect(capped.statusCode).toBe(503);
    expect(ms).toBeLessThan(800);
    await capped.body.text();
  });

  it('a host awaiting trust is refused at once: a person must act (long Retry-After, action_required)', async () => {
    const up = await upstream();
    const r = switchable(up.url);
    r.set({ ok: false, code: 'host_awaiting_trust', message: 'confirm the key', retryAfterS: 600, recovery: null, actionRequired: true });
    const p = await proxyWith(r);
    const t0 = performance.now();
    const res = await chat(p, p.token());
    expect(performance.now() - t0).toBeLessThan(500);
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('600');
    expect(res.headers['x-action-required']).toBe('true');
    expect(JSON.parse(await res.body.text()).error).toMatchObject({ code: 'host_awaiting_trust', action_required: true });
  });
});

describe('wake on request', () => {
  const sleeping = (wakeable: boolean): Unavailable => ({
    ok: false,
    code: 'model_sleeping',
    message: 'qwen is asleep (level 1)',
    retryAfterS: 10,
    recovery: wakeable ? { reason: 'waking', expectedMs: 10_000 } : null,
    actionRequired: !wakeable,
  });

  it('with a standing approval: five requests wait for one wake and are all served', async () => {
    const up = await upstream();
    const r = switchable(up.url);
    r.set(sleeping(true));
    const p = await proxyWith(r);
    const token = p.token();
    const all = Array.from({ length: 5 }, () => chat(p, token));
    setTimeout(() => r.set(null), 800);
    const answers = await Promise.all(all);
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200, 200]);
    for (const a of answers) {
      expect(a.headers['x-hold-reason']).toBe('waking');
      await a.body.text();
    }
    // One wake asked per request that began to wait; the lifecycle collapses them into one action.
    expect(r.wakes).toBeGreaterThanOrEqual(1);
    expect(r.wakes).toBeLessThanOrEqual(5);
  });

  it('past the hold budget: 503 model_waking with Retry-After', async () => {
    const up = await upstream();
    const r = switchable(up.url);
    r.set({ ...sleeping(true), recovery: { reason: 'waking', expectedMs: 500 } });
    const p = await proxyWith(r, { holdBudgetMs: { interactive: 700 } });
    const res = await chat(p, p.token());
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('10');
    expect(JSON.parse(await res.body.text()).error.code).toBe('model_waking');
  });

  it('without a standing approval: 503 model_sleeping at once, no wake started by the proxy', async () => {
    const up = await upstream();
    const r = switchable(up.url);
    r.set(sleeping(false));
    const p = await proxyWith(r);
    const t0 = performance.now();
    const res = await chat(p, p.token());
    expect(performance.now() - t0).toBeLessThan(500);
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(await res.body.text()).error.code).toBe('model_sleeping');
    expect(r.wakes).toBe(0);
  });
});
