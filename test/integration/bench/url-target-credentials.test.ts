import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BenchScenarioSchema } from '../../../src-preload/contract/index.js';
import type { App } from '../../../src-main/core/app.js';
import { startDemoConsole, waitForTunnels } from '../proxy/helpers.js';

// A benchmark's `url` target is chosen by the caller (any loopback listener). The console must
// not hand that listener a credential of its own: before, the core sent the console process's
// GPU_CONSOLE_TOKEN as Bearer to whatever URL was named. A run token goes only to the console's
// own proxy, minted for the run and revoked after it.

let c: Awaited<ReturnType<typeof startDemoConsole>>;
let app: App;
let listener: Server;
const seen: IncomingHttpHeaders[] = [];
const saved = process.env.GPU_CONSOLE_TOKEN;

beforeAll(async () => {
  process.env.GPU_CONSOLE_TOKEN = 'gpc_operator-token-that-must-not-leak';
  c = await startDemoConsole({ decodeSpeedFactor: 64 });
  app = c.app;
  await waitForTunnels(app);
  listener = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.url?.endsWith('/models')) return res.end(JSON.stringify({ object: 'list', data: [{ id: 'x', object: 'model' }] }));
      res.end(JSON.stringify({ id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }));
    });
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
}, 30_000);
afterAll(async () => {
  if (saved === undefined) delete process.env.GPU_CONSOLE_TOKEN;
  else process.env.GPU_CONSOLE_TOKEN = saved;
  await new Promise((r) => listener?.close(r));
  await c?.close();
});

const scenario = (baseUrl: string, model: string) =>
  BenchScenarioSchema.parse({ name: 'url-target', target: { kind: 'url', baseUrl, model }, prompts: { kind: 'synthetic', inputTokens: 8 }, maxTokens: 4, levels: [1], perLevel: { kind: 'requests', count: 2 } });

describe('a benchmark aimed at a URL', () => {
  it('sends no credential of the console to a listener the caller chose', async () => {
    const port = (listener.address() as AddressInfo).port;
    const id = await app.bench.start(scenario(`http://127.0.0.1:${port}/v1`, 'x'), 'test');
    const run = await app.bench.service.whenFinished(id);
    expect(run.state).toBe('completed');
    expect(seen.length).toBeGreaterThan(0);
    for (const h of seen) expect(h.authorization).toBeUndefined();
    expect(JSON.stringify(seen)).not.toContain('operator-token');
  }, 30_000);

  it("gets a run token of its own when the URL is the console's proxy, revoked when the run ends", async () => {
    const proxyUrl = app.proxy.url()!;
    const id = await app.bench.start(scenario(proxyUrl, 'Qwen3.6-27B-FP8'), 'test');
    const run = await app.bench.service.whenFinished(id);
    expect(run.state).toBe('completed');
    expect(run.levels[0]!.completed).toBe(2);
    expect(run.levels[0]!.failed).toBe(0);
    const tokenEvents = app.store.audit.list({ limit: 200 }).filter((e) => e.type.startsWith('proxy.token.') && String(e.target).startsWith('bench-'));
    const created = tokenEvents.filter((e) => e.type === 'proxy.token.created').map((e) => e.target);
    const revoked = tokenEvents.filter((e) => e.type === 'proxy.token.revoked').map((e) => e.target);
    expect(created).toHaveLength(1);
    expect(created[0]).toMatch(/^bench-/);
    expect(revoked).toEqual(created);
  }, 30_000);
});
