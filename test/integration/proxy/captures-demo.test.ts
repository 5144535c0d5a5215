import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src-main/core/app.js';
import type { CaptureDetail, CaptureStatus, CaptureSummary } from '../../../src-preload/contract/index.js';
import { createApi } from '../../../src-main/core/api.js';
import { silentLogger } from '../../../src-main/core/base/index.js';
import { createOutput } from '../../../src-main/cli/output.js';
import { runCli } from '../../../src-main/cli/run.js';
import { readyFilePath, writeReadyFile } from '../../../src-main/core/instance/index.js';
import { startWebBridge, type WebBridge } from '../../../src-main/web/index.js';
import { startDemoConsole, waitForTunnels } from './helpers.js';

// Issue #32's "Done when" for captured requests, on the demo: a failed request (HTTP client → proxy →
// SSH tunnel → the demo's vLLM simulator, which refuses the body 400) has its bodies captured, is
// opened through the contract with an audit row, is exported, and expires by the capture retention.

let c: Awaited<ReturnType<typeof startDemoConsole>>;
let app: App;
let token: string;
let call: <T>(channel: string, input: unknown) => Promise<T>;
let bridge: WebBridge;

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
  // The CLI finds the running console the way it always does: ready.json and the web bridge.
  bridge = await startWebBridge({ api, rendererDir: c.dir, port: 0, logger: silentLogger });
  writeReadyFile(readyFilePath(c.dir), { ui: bridge.url, proxy: app.proxy.url(), pid: process.pid });
});
afterAll(async () => {
  await bridge?.close();
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

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const output = createOutput(args.includes('--json'), { stdout: (s) => (out += s), stderr: (s) => (err += s) });
  const code = await runCli(['captures', ...args, '--data-dir', c.dir], output);
  return { code, out, err };
}

describe('captured requests on the demo fleet', () => {
  it('the demo has capture on for failures', async () => {
    const status = await call<CaptureStatus>('proxy.captureStatus', {});
    expect(status).toMatchObject({ enabled: true, failures: true, maxBodyBytes: 65536 });
  });

  it('gpu-console captures list, show (audited as the CLI) and export --out (0600); bad input exits non-zero', async () => {
    const id = await badChat('seen from the CLI');
    await app.proxy.captures.settle();
    const listed = await cli(['list', '--client', 'capture-test', '--json']);
    expect(listed.code, listed.err).toBe(0);
    const { captures } = JSON.parse(listed.out) as { captures: CaptureSummary[] };
    const mine = captures.find((x) => x.requestId === id)!;
    expect(mine).toMatchObject({ status: 400, model: 'Qwen3.6-27B-FP8' });
    const human = await cli(['list', '--request', id]);
    expect(human.out).toContain(id);

    const shown = await cli(['show', String(mine.id)]);
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toContain('seen from the CLI');
    expect(shown.out).toContain('authorization: [redacted]');
    expect(shown.out).not.toContain(token);
    const [viewed] = app.store.audit.list({ type: 'proxy.capture.viewed', limit: 1 });
    expect(viewed).toMatchObject({ target: String(mine.id) });
    expect(viewed!.actor).toMatch(/@/);

    const file = join(c.dir, 'captures.json');
    const exported = await cli(['export', '--ids', String(mine.id), '--out', file]);
    expect(exported.code, exported.err).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect((JSON.parse(readFileSync(file, 'utf8')) as { captures: CaptureDetail[] }).captures[0]!.request.text).toContain('seen from the CLI');

    expect((await cli(['show', 'abc'])).code).toBe(2);
    expect((await cli(['list', '--limit', '0'])).err).toMatch(/--limit must be a whole number from 1 to 500/);
    const missing = await cli(['show', '999999']);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/PROXY_CAPTURE_NOT_FOUND/);
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
