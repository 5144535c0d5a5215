import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src-main/core/app.js';
import type { CaptureDetail, CaptureStatus, CaptureSummary } from '../../../src-preload/contract/index.js';
import { createApi } from '../../../src-main/core/api.js';
import { silentLogger } from '../../../src-main/core/base/index.js';
import { startDemoConsole, waitForTunnels } from './helpers.js';

// Issue #32's "Done when" for captured requests, on the demo: a failed request (HTTP client → proxy →
// SSH tunnel → the demo's vLLM simulator, which refuses the body 400) has its bodies captured, is
// opened through the contract with an audit row, is exported, and expires by the capture retention.

let c: Awaited<ReturnType<typeof startDemoConsole>>;
let app: App;
let token: string;
let call: <T>(channel: string, input: unknown) => Promise<T>;

beforeAll(async () => {
  c = await startDemoConsole();
  app = c.app;
  await waitForTunnels(app);
  token = app.proxy.createToken('capture-test', 'interactive', 'test').token;
  const api = createApi(app, silentLogger);
  call = async <T>(channel: string, input: unknown): Promise<T> => {
    const r = await api.invoke(channel, input, { caller: 'test' });
    if (!r.ok) throw Object.assign(new Error(r.error.message), r.error);
    return r.data as T;
  };
});
afterAll(async () => {
  await c?.close();
});

async function badChat(note: string): Promise<string> {
  const res = await request(`${app.proxy.url()!}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'qwen', messages: note, max_tokens: 8 }),
  });
  const body = await res.body.text();
  expect(res.statusCode, body).toBe(400);
  expect(body).toContain('Invalid request');
  return (res.headers['x-gpu-console-request-id'] ?? res.headers['x-request-id']) as string;
}

describe('captured requests on the demo fleet', () => {
  it('the demo has capture on for failures', async () => {
    const status = await call<CaptureStatus>('proxy.captureStatus', {});
    expect(status).toMatchObject({ enabled: true, failures: true, maxBodyBytes: 65536 });
  });

  it("a failed request's bodies are captured, viewed (audited), exported, and expire by the retention", async () => {
    const first = await badChat('not a list of messages (first)');
    await app.proxy.captures.settle();
    const { captures } = await call<{ captures: CaptureSummary[] }>('proxy.listCaptures', { requestId: first });
    expect(captures).toHaveLength(1);
    expect(captures[0]).toMatchObject({ client: 'capture-test', upstream: 'l20-poc/qwen', status: 400, reason: 'failure' });

    const detail = await call<CaptureDetail>('proxy.showCapture', { id: captures[0]!.id });
    expect(detail.request.text).toContain('not a list of messages (first)');
    expect(detail.answer.text).toContain('Invalid request');
    expect(JSON.stringify(detail)).not.toContain(token);
    const [viewed] = app.store.audit.list({ type: 'proxy.capture.viewed', limit: 1 });
    expect(viewed).toMatchObject({ target: String(captures[0]!.id), payload: { requestId: first, client: 'capture-test', status: 400 } });

    const exported = await call<{ captures: CaptureDetail[] }>('proxy.exportCaptures', { query: { client: 'capture-test' } });
    expect(exported.captures.map((x) => x.requestId)).toContain(first);
    expect(app.store.audit.list({ type: 'proxy.capture.exported', limit: 1 })[0]?.payload).toMatchObject({ count: exported.captures.length });

    // The retention keeps the newest capture only: the first one goes at the next pass.
    const current = app.config.current;
    app.config.replace({ ...current, proxy: { ...current.proxy, capture: { ...current.proxy.capture, retention: { ...current.proxy.capture.retention, rows: 1 } } } });
    const second = await badChat('not a list of messages (second)');
    await app.proxy.captures.settle();
    expect((await call<{ captures: CaptureSummary[] }>('proxy.listCaptures', { requestId: first })).captures).toEqual([]);
    expect((await call<{ captures: CaptureSummary[] }>('proxy.listCaptures', { requestId: second })).captures).toHaveLength(1);
    await expect(call('proxy.showCapture', { id: captures[0]!.id })).rejects.toMatchObject({ code: 'PROXY_CAPTURE_NOT_FOUND' });
  });
});
