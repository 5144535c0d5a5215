import type { Socket } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { fixtureText } from '../../fixtures/llama-server/fixtures.js';
import { startStub, startStubProxy, type StubProxy } from './helpers.js';

// Upstreams that misbehave the way real ones do: llama-server b10573 ending a
// failed generation with an error event and no [DONE] (recorded fixture), an
// upstream that closes in the middle of its headers, a 429 with a bogus
// Retry-After. Each gets a correct pass-through or a clear error, and a
// request running beside it is not affected.

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

const MIDSTREAM = fixtureText('chat-stream-midstream-error.txt');
const OK = JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'fine' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });

async function proxyFor(handler: Parameters<typeof startStub>[0]): Promise<{ p: StubProxy; token: string; upstream: { requests: number } }> {
  const upstream = await startStub(handler);
  closers.push(() => upstream.close());
  const p = await startStubProxy([
    { label: 'bad', id: 'm', model: 'broken', url: upstream.url },
    { label: 'good', id: 'm', model: 'healthy', url: upstream.url },
  ]);
  closers.push(() => p.close());
  return { p, token: p.token(), upstream };
}

function chat(p: StubProxy, token: string, model: string, stream: boolean) {
  return request(`${p.proxy.url}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hi' }] }),
  });
}

function lastRow(p: StubProxy, model: string): { status: number; errorCode: string | null } {
  p.log.flush();
  return p.store.db.prepare('SELECT status, error_code AS errorCode FROM requests WHERE model = ? ORDER BY seq DESC LIMIT 1').get(model) as { status: number; errorCode: string | null };
}

describe('misbehaving upstreams', () => {
  it('200 with an error event and no [DONE] (llama-server fixture): relayed as it came, the row says upstream_error_event, a healthy request beside it is fine', async () => {
    const { p, token } = await proxyFor((_req, res, body) => {
      const model = (JSON.parse(body.toString()) as { model: string }).model;
      if (model === 'broken') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(MIDSTREAM);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(OK);
      }
    });
    const [bad, good] = await Promise.all([chat(p, token, 'broken', true), chat(p, token, 'healthy', false)]);
    expect(bad.statusCode).toBe(200);
    const text = await bad.body.text();
    const events = text.split('\n\n').filter((e) => e.startsWith('data:'));
    const upstreamEvents = MIDSTREAM.split('\n\n').filter((e) => e.startsWith('data:'));
    expect(events.length).toBe(upstreamEvents.length);
    expect(events.at(-1)).toContain('"error":{"code":500');
    expect(text).not.toContain('[DONE]');
    expect(good.statusCode).toBe(200);
    expect(JSON.parse(await good.body.text()).choices[0].message.content).toBe('fine');
    expect(lastRow(p, 'broken')).toEqual({ status: 200, errorCode: 'upstream_error_event' });
    expect(lastRow(p, 'healthy')).toEqual({ status: 200, errorCode: null });
  });

  it('closes in the middle of its headers: 502 upstream_unreachable with Retry-After, nothing half-relayed', async () => {
    const { p, token, upstream } = await proxyFor((req, res) => {
      const socket = req.socket as Socket;
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/ev');
      socket.destroy();
      void res;
    });
    const r = await chat(p, token, 'broken', false);
    expect(r.statusCode).toBe(502);
    expect(r.headers['retry-after']).toBe('1');
    expect(r.headers['retry-after-ms']).toBe('1000');
    const body = JSON.parse(await r.body.text());
    expect(body.error).toMatchObject({ code: 'upstream_unreachable', type: 'server_error' });
    // At most one more attempt on a fresh connection, never more.
    expect(upstream.requests).toBeLessThanOrEqual(2);
  });

  it('a 429 with a bogus Retry-After: the client gets a valid one, and the upstream body as it was', async () => {
    const { p, token } = await proxyFor((_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': 'soon' });
      res.end(JSON.stringify({ error: { message: 'slow down', code: 429 } }));
    });
    const r = await chat(p, token, 'broken', false);
    expect(r.statusCode).toBe(429);
    const s = Number(r.headers['retry-after']);
    expect(Number.isInteger(s) && s >= 1).toBe(true);
    expect(Number(r.headers['retry-after-ms'])).toBe(s * 1000);
    expect(JSON.parse(await r.body.text()).error.message).toBe('slow down');
  });
});
