import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src-main/core/app.js';
import { startDemoConsole, waitForTunnels } from './helpers.js';
import { until } from '../../helpers/until.js';

// Issue #32's "Done when", on the demo (HTTP client → proxy → SSH tunnel → simulated vLLM):
// a request without max_tokens carries the model's default to the server (the demo config
// shapes `qwen`: default 256), and a client's X-Request-Id reaches the server (vLLM names its
// answer `chatcmpl-<X-Request-Id>`) and is what the Proxy view's query finds. /v1/models
// entries carry the context length the servers report.

let c: Awaited<ReturnType<typeof startDemoConsole>>;
let app: App;
let token: string;

beforeAll(async () => {
  c = await startDemoConsole();
  app = c.app;
  await waitForTunnels(app);
  token = app.proxy.createToken('g3-demo', 'interactive', 'test').token;
});
afterAll(async () => {
  await c?.close();
});

async function chat(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const r = await request(app.proxy.url()! + '/chat/completions', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: r.statusCode, headers: r.headers, json: (await r.body.json()) as { id: string; usage: { completion_tokens: number } } };
}

describe('request shaping and traces on the demo fleet', () => {
  it("a request without max_tokens carries qwen's default (256) to the server", async () => {
    // ignore_eos (vLLM): the server generates exactly max_tokens, so its usage shows the limit it received.
    const a = await chat({ model: 'qwen', messages: [{ role: 'user', content: 'Write at length.' }], ignore_eos: true });
    expect(a.status).toBe(200);
    expect(a.headers['x-gpu-console-max-tokens']).toBe('default 256');
    expect(a.json.usage.completion_tokens).toBe(256);
  });

  it("a client's X-Request-Id reaches the server, comes back, and the Proxy view's query finds the row", async () => {
    const trace = `checkout-${Date.now()}`;
    const a = await chat({ model: 'gemma', messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 4 }, { 'x-request-id': trace });
    expect(a.status).toBe(200);
    expect(a.json.id).toBe(`chatcmpl-${trace}`);
    expect(a.headers['x-request-id']).toBe(trace);
    const ours = a.headers['x-gpu-console-request-id'] as string;
    const rows = app.proxy.requests({ limit: 10, outcome: 'all', trace });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: ours, traceId: trace, client: 'g3-demo', upstream: 'tri-gpu/gemma', status: 200 });
  });

  it('/v1/models entries carry the context length each server reports (vLLM max_model_len, llama-server n_ctx per slot)', async () => {
    type Entry = { id: string; max_model_len?: number };
    let data: Entry[] = [];
    await until(
      async () => {
        const r = await request(app.proxy.url()! + '/models', { headers: { authorization: `Bearer ${token}` } });
        data = ((await r.body.json()) as { data: Entry[] }).data;
        return ['Qwen3.6-27B-FP8', 'olmOCR-2-7B', 'Qwen3-Coder-30B-A3B'].every((id) => data.find((m) => m.id === id)?.max_model_len !== undefined);
      },
      { what: 'context lengths from the telemetry', timeoutMs: 20_000, intervalMs: 200 },
    );
    const len = (id: string) => data.find((m) => m.id === id)?.max_model_len;
    expect(len('Qwen3.6-27B-FP8')).toBe(32768);
    expect(len('qwen')).toBe(32768);
    expect(len('olmOCR-2-7B')).toBe(16384);
    expect(len('Qwen3-Coder-30B-A3B')).toBe(131072);
    // Never 0: an entry is either a reported length or has none.
    expect(data.every((m) => m.max_model_len === undefined || m.max_model_len > 0)).toBe(true);
  });
});
