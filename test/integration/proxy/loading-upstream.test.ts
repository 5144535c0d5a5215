import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeFleet, hostView, serviceView } from './fake-fleet.js';
import { startStub, startStubProxy } from './helpers.js';
import { fleetStateOf } from '../../helpers/fleet-state.js';

// Issue #27 finding 7: a llama-server loading its model answers /v1/models
// (so the tunnel probe passes) but 503 "Loading model" to everything else.
// The proxy takes a service the fleet reads as `loading` for not ready: it
// refuses with model_restarting and a Retry-After from the load's expected
// time, or holds a request within its budget until the model is in — it
// never hands the request to the loading server.

const LOADING_503 = '{"error":{"message":"Loading model","type":"unavailable_error","code":503}}';
const COMPLETION = JSON.stringify({
  id: 'c1', object: 'chat.completion', created: 1, model: 'M',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(holdMs: number, loadingForMs: number, restartMs: number | null = null) {
  const state = { loaded: false };
  const stub = await startStub((_req, res) => {
    res.writeHead(state.loaded ? 200 : 503, { 'content-type': 'application/json' });
    res.end(state.loaded ? COMPLETION : LOADING_503);
  });
  cleanups.push(() => stub.close());
  const fleet = fakeFleet({
    url: stub.url,
    service: { health: 'loading', loadingSince: Date.now() - loadingForMs, sleep: 'unknown' },
    estimates: { expectedWakeMs: () => null, expectedRestartMs: () => restartMs },
  });
  const p = await startStubProxy([{ label: 'h', id: 's', model: 'M', url: stub.url }], { holdBudgetMs: { interactive: holdMs } }, fleet.resolver);
  cleanups.push(() => p.close());
  const token = p.token('t', 'interactive');
  const send = async () => {
    const r = await request(`${p.proxy.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'M', messages: [{ role: 'user', content: 'x' }] }),
    });
    return { status: r.statusCode, retryAfter: r.headers['retry-after'], body: (await r.body.json()) as { error?: Record<string, unknown> } };
  };
  /** The model is in: the server answers, and the fleet's next snapshot says so. */
  const loaded = () => {
    state.loaded = true;
    fleet.resolver.remember(fleetStateOf({ at: Date.now(), hosts: [hostView('h', [serviceView('s', { health: 'ok' })])] }));
  };
  return { stub, send, loaded, p };
}

describe('an upstream loading its model', () => {
  it('is refused with model_restarting, Retry-After from the expected load left, and never reached', async () => {
    const { stub, send, p } = await setup(1_000, 5_000);
    const a = await send();
    expect(a.status).toBe(503);
    expect(a.body.error).toMatchObject({ code: 'model_restarting', reason: 'restarting', load_estimate: 'default' });
    expect(String(a.body.error!['message'])).toMatch(/h\/s is loading its model \(its \/health answers 503 "Loading model"\)/);
    // 30 s default load, 5 s of it gone
    expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(24);
    expect(Number(a.retryAfter)).toBeLessThanOrEqual(25);
    expect(stub.requests).toBe(0);
    expect(p.proxy.snapshot().upstreams[0]!.state).toBe('down');
  });

  it("a measured restart time is what the Retry-After counts down from", async () => {
    const { send } = await setup(1_000, 2_000, 12_000);
    const a = await send();
    expect(a.body.error).toMatchObject({ code: 'model_restarting', load_estimate: 'measured' });
    expect(Number(a.retryAfter)).toBe(10);
  });

  it('a request within its hold budget waits for the load and is answered once the model is in', async () => {
    const { stub, send, loaded } = await setup(5_000, 0, 1_000);
    const answer = send();
    await new Promise((r) => setTimeout(r, 200));
    expect(stub.requests).toBe(0);
    loaded();
    const a = await answer;
    expect(a.status).toBe(200);
    expect(stub.requests).toBe(1);
  });
});
