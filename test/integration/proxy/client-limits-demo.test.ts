import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src-main/core/app.js';
import { createApi } from '../../../src-main/core/api.js';
import { silentLogger } from '../../../src-main/core/base/index.js';
import { TokenLimitErrorCode, type RequestRow, type TokenView } from '../../../src-preload/contract/index.js';
import { startDemoConsole, waitForTunnels } from './helpers.js';

// Issue #32's "Done when" for per-client limits, on the demo (HTTP client → proxy → SSH tunnel → the demo's
// simulators): a token limited to 10 requests a minute gets its 11th refused 429 with Retry-After and a body
// naming the limit; a token allowed only `qwen` cannot reach `gemma`. Tokens are made through the contract,
// as the UI and the CLI make them, and each refusal is a request row of its token with its code.

let c: Awaited<ReturnType<typeof startDemoConsole>>;
let app: App;
let call: <T>(channel: string, input: unknown) => Promise<T>;

beforeAll(async () => {
  c = await startDemoConsole();
  app = c.app;
  await waitForTunnels(app);
  const api = createApi(app, silentLogger);
  call = async <T>(channel: string, input: unknown): Promise<T> => {
    const r = await api.invoke(channel, input, { caller: 'test' });
    if (!r.ok) throw Object.assign(new Error(r.error.message), r.error);
    return r.data as T;
  };
}, 40_000);
afterAll(async () => {
  await c?.close();
});

async function chat(token: string, model: string): Promise<{ status: number; headers: Record<string, unknown>; body: { error?: Record<string, unknown> } }> {
  const res = await request(`${app.proxy.url()!}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.statusCode, headers: res.headers, body: (await res.body.json()) as { error?: Record<string, unknown> } };
}

describe('per-client limits on the demo fleet', () => {
  it("a token limited to 10 requests a minute gets its 11th refused 429 with Retry-After, naming the limit; the refusal is the token's row", async () => {
    const { token, view } = await call<{ token: string; view: TokenView }>('proxy.createToken', { name: 'ten-a-minute', maxClass: 'interactive', limits: { rpm: 10 } });
    expect(view.limits.rpm).toBe(10);
    const answers = [];
    for (let i = 0; i < 11; i++) answers.push(await chat(token, 'qwen'));
    expect(answers.slice(0, 10).map((a) => a.status)).toEqual(Array(10).fill(200));
    const last = answers[10]!;
    expect(last.status).toBe(429);
    expect(last.body.error).toMatchObject({ code: 'rate_limit_rpm', type: 'rate_limit_error', limit: 'rpm', limit_value: 10, token: 'ten-a-minute' });
    // Ten taken at once from a bucket of ten refilling one per 6 s: the next is 6 s away, at most.
    const retryAfter = Number(last.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(6);
    expect(Number(last.headers['retry-after-ms'])).toBeLessThanOrEqual(retryAfter * 1000);

    const rows = await waitRows('ten-a-minute', 11);
    expect(rows.filter((r) => r.errorCode === 'rate_limit_rpm')).toHaveLength(1);
  });

  it('a token allowed only qwen cannot reach gemma (403 naming both), and still reaches qwen', async () => {
    const { token } = await call<{ token: string; view: TokenView }>('proxy.createToken', { name: 'qwen-only', maxClass: 'interactive', limits: { models: ['qwen'] } });
    const refused = await chat(token, 'gemma');
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'model_not_allowed', type: 'permission_error', model: 'gemma', token: 'qwen-only', allowed: ['qwen'] });
    expect(String(refused.body.error!['message'])).toContain('"qwen-only" may not use "gemma"');
    expect((await chat(token, 'qwen')).status).toBe(200);
    // qwen's canonical model name is the same model, so allowed through the alias.
    const qwenModel = app.proxy.snapshot().upstreams.find((u) => u.aliases.includes('qwen'))!.model;
    expect((await chat(token, qwenModel)).status).toBe(200);
  });

  it('bad limits are refused with a code and nothing stored; a set is audited old -> new', async () => {
    await expect(call('proxy.createToken', { name: 'nope', maxClass: 'batch', limits: { models: ['qwen', 'no-such-model'] } })).rejects.toMatchObject({
      code: TokenLimitErrorCode.UNKNOWN_MODELS,
      details: { unknown: ['no-such-model'] },
    });
    await expect(call('proxy.createToken', { name: 'nope', maxClass: 'batch', limits: { rpm: 0 } })).rejects.toMatchObject({ code: 'CONTRACT_INVALID_INPUT' });
    await expect(call('proxy.createToken', { name: 'nope', maxClass: 'batch', limits: { expiresAt: Date.now() - 1000 } })).rejects.toMatchObject({ code: TokenLimitErrorCode.EXPIRY_PAST });
    const { tokens } = await call<{ tokens: TokenView[] }>('proxy.listTokens', {});
    expect(tokens.some((t) => t.name === 'nope')).toBe(false);

    await call('proxy.setToken', { name: 'qwen-only', limits: { rpm: 100, models: [] } });
    const audit = app.store.audit.list({ limit: 50 }).find((e) => e.type === 'proxy.token.changed' && e.target === 'qwen-only');
    expect(audit?.payload).toMatchObject({ changes: { rpm: { from: null, to: 100 }, models: { from: ['qwen'], to: [] } } });
  });
});

async function waitRows(client: string, n: number): Promise<RequestRow[]> {
  const end = Date.now() + 10_000;
  for (;;) {
    const { rows } = await call<{ rows: RequestRow[] }>('proxy.requests', { limit: 200 });
    const mine = rows.filter((r) => r.client === client);
    if (mine.length >= n || Date.now() > end) return mine;
    await new Promise((r) => setTimeout(r, 200));
  }
}
