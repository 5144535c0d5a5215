import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src-main/core/app.js';
import type { ServiceState } from '../../../src-main/core/fleet/index.js';
import { startDemoConsole, waitForTunnels } from './helpers.js';
import { until } from '../../helpers/until.js';

// Issue #32 item 3 "Done when": an SGLang- and a TEI-shaped server (recorded shapes) are proxied
// with their figures. The real path: OpenAI client → proxy → SSH tunnel (ssh2) → the demo's
// SGLang- and TEI-shaped servers on tri-gpu; their figures read from their own /metrics into the
// fleet state the cards and alerts read.

let c: Awaited<ReturnType<typeof startDemoConsole>>;
let app: App;
let client: OpenAI;

beforeAll(async () => {
  c = await startDemoConsole();
  app = c.app;
  await waitForTunnels(app);
  const token = app.proxy.createToken('kinds', 'interactive', 'test').token;
  client = new OpenAI({ baseURL: app.proxy.url()!, apiKey: token, maxRetries: 0 });
}, 60_000);
afterAll(async () => {
  await c?.close();
});

const service = (id: string): ServiceState => app.fleet.state().hosts.find((h) => h.label === 'tri-gpu')!.services.find((s) => s.id === id)!;

describe('SGLang and TEI servers behind the proxy (demo)', () => {
  it('answers a chat on the SGLang server through the tunnel and reads its sglang: figures', async () => {
    const { data, response } = await client.chat.completions.create({ model: 'qwen-sgl', messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 8 }).withResponse();
    expect(response.headers.get('x-upstream')).toBe('tri-gpu/sgl');
    expect(data.model).toBe('Qwen2.5-3B-Instruct');
    expect(data.usage?.completion_tokens).toBeGreaterThan(0);
    await until(() => (service('sgl').reading?.requestsFinishedTotal ?? 0) > 0 && service('sgl').figures !== null, { timeoutMs: 20_000, what: 'sgl figures after a request' });
    const s = service('sgl');
    expect(s.source?.kind).toBe('sglang');
    expect(s.source?.detail).toBe('GET /metrics, /health, /v1/models, /get_server_info');
    expect(s.stale).toBeNull();
    expect(s.issues).toEqual([]);
    expect(s.reading).toMatchObject({ kind: 'sglang', health: 'ok', version: '0.5.4', maxModelLen: 32768, modelName: 'Qwen2.5-3B-Instruct', kvCapacityTokens: 120000 });
    expect(s.reading!.generationTokensTotal).toBeGreaterThan(0);
    expect(s.reading!.ttft?.count).toBeGreaterThan(0);
    expect(s.figures!.kvCachePct).not.toBeNull();
    expect(s.sleepControl).toBe('none');
    expect(app.fleet.snapshot().hosts.find((h) => h.label === 'tri-gpu')!.services.find((v) => v.id === 'sgl')).toMatchObject({ kind: 'sglang', version: '0.5.4' });
  });

  it('embeds through the TEI server (it has no /v1/models: the tunnel is proved at /health) and reads its te_ figures', async () => {
    const { data, response } = await client.embeddings.create({ model: 'embed-small', input: ['one', 'two'] }).withResponse();
    expect(response.headers.get('x-upstream')).toBe('tri-gpu/tei');
    expect(data.data).toHaveLength(2);
    expect(data.data[0]!.embedding).toHaveLength(384);
    await until(() => (service('tei').reading?.requestsFinishedTotal ?? 0) > 0, { timeoutMs: 20_000, what: 'tei figures after a request' });
    const s = service('tei');
    expect(s.tunnel.state).toBe('up');
    expect(s.tunnel.probe?.ok).toBe(true);
    expect(s.source?.kind).toBe('tei');
    expect(s.reading).toMatchObject({ kind: 'tei', health: 'ok', version: '1.9.3', maxModelLen: 512, modelName: 'BAAI/bge-small-en-v1.5', running: null, kvCacheUsage: null, ttft: null });
    expect(s.reading!.promptTokensTotal).toBeGreaterThan(0);
    expect(s.reading!.waiting).not.toBeNull();
    expect(s.reading!.e2e?.count).toBeGreaterThan(0);
    // No engine figure an embedding server lacks is shown as a zero.
    expect(s.figures?.kvCachePct ?? null).toBeNull();
    expect(s.figures?.genTokPerS ?? null).toBeNull();
  });

  it("the operator's Test: SGLang lists its models and answers a 1-token chat; TEI names its model at /info and embeds", async () => {
    const sgl = await app.fleet.testTunnel('tri-gpu', 'sgl');
    expect(sgl).toMatchObject({ ok: true, error: null });
    expect(sgl.steps.map((s) => [s.name, s.ok])).toEqual([['models', true], ['chat', true]]);
    const tei = await app.fleet.testTunnel('tri-gpu', 'tei');
    expect(tei).toMatchObject({ ok: true, error: null });
    expect(tei.steps.map((s) => [s.name, s.ok, s.detail])).toEqual([
      ['models', true, '1 model: BAAI/bge-small-en-v1.5 (GET /info)'],
      ['embeddings', true, '1 embedding of 384 dimensions'],
    ]);
  });

  it('a chat sent to the TEI model is answered by TEI itself: 404, it has no chat route', async () => {
    await expect(client.chat.completions.create({ model: 'embed-small', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 })).rejects.toMatchObject({ status: 404 });
  });
});
