import { spawn, spawnSync } from 'node:child_process';
import OpenAI from 'openai';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src-main/core/app.js';
import { startDemoConsole, waitForTunnels } from './helpers.js';
import { until } from '../../helpers/until.js';

// The real path: openai client → proxy → SSH tunnel (ssh2) → demo vLLM simulator.

let c: Awaited<ReturnType<typeof startDemoConsole>>;
let app: App;
let token: string;
let client: OpenAI;

beforeAll(async () => {
  c = await startDemoConsole();
  app = c.app;
  await waitForTunnels(app);
  token = app.proxy.createToken('tests', 'interactive', 'test').token;
  client = new OpenAI({ baseURL: app.proxy.url()!, apiKey: token, maxRetries: 0 });
});
afterAll(async () => {
  await c?.close();
});

/** curl in a child process (the proxy runs in this one, so the test must not block). */
function runCurl(args: string[]): Promise<{ stdout: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn('curl', args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ stdout, code }));
  });
}

const rowsFor = (id: string) => app.proxy.requests({ limit: 2000, outcome: 'all' }).filter((r) => r.id === id);

describe('proxy on the demo fleet', () => {
  it('lists the union of every service with its aliases', async () => {
    const models = await client.models.list();
    const ids = models.data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['Qwen3.6-27B-FP8', 'qwen', 'Gemma-3-27B-it', 'gemma', 'olmOCR-2-7B', 'ocr', 'bge-m3', 'embed']));
  });

  it('retrieves one model by id or alias (any case), and names an unknown one', async () => {
    await expect(client.models.retrieve('QWEN')).resolves.toMatchObject({ id: 'qwen', object: 'model', root: 'Qwen3.6-27B-FP8' });
    await expect(client.models.retrieve('qwen3.6-27b-fp8')).resolves.toMatchObject({ id: 'Qwen3.6-27B-FP8' });
    await expect(client.models.retrieve('no-such/model')).rejects.toMatchObject({ status: 404, code: 'model_not_found' });
  });

  it('the built-in group alias `chat` goes to its first model, through the OpenAI SDK', async () => {
    await expect(client.models.retrieve('chat')).resolves.toMatchObject({ id: 'chat', fallback: ['Qwen3.6-27B-FP8', 'Gemma-3-27B-it'] });
    const { data, response } = await client.chat.completions
      .create({ model: 'chat', messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 4 })
      .withResponse();
    expect(data.model).toBe('Qwen3.6-27B-FP8');
    expect(response.headers.get('x-upstream')).toBe('l20-poc/qwen');
  });

  it('answers a chat through the tunnel (alias, any case) and accounts for it', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'QWEN', messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 12 })
      .withResponse();
    expect(data.model).toBe('Qwen3.6-27B-FP8');
    expect(data.usage?.completion_tokens).toBeGreaterThan(0);
    expect(response.headers.get('x-queue-ms')).toMatch(/^\d+$/);
    const id = response.headers.get('x-request-id')!;
    const [row] = rowsFor(id);
    expect(row).toMatchObject({ client: 'tests', class: 'interactive', upstream: 'l20-poc/qwen', status: 200, tokensOut: data.usage!.completion_tokens });
  });

  it('streams with usage captured even when the client did not ask for it, and removes the extra chunk', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'gemma', messages: [{ role: 'user', content: 'Count.' }], max_tokens: 8, stream: true })
      .withResponse();
    const chunks = [];
    for await (const ch of stream) chunks.push(ch);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.every((ch) => ch.choices.length === 1 && !('usage' in ch && ch.usage))).toBe(true);
    const [row] = rowsFor(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ stream: true, tokensOut: 8, status: 200 });
    expect(row!.ttftMs).not.toBeNull();
  });

  it('streams with the usage chunk when the client asked for it', async () => {
    const stream = await client.chat.completions.create({
      model: 'gemma',
      messages: [{ role: 'user', content: 'Count.' }],
      max_tokens: 5,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const ch of stream) chunks.push(ch);
    expect(chunks.at(-1)?.usage?.completion_tokens).toBe(5);
  });

  it('serves embeddings', async () => {
    const r = await client.embeddings.create({ model: 'embed', input: ['alpha', 'beta'] });
    expect(r.data).toHaveLength(2);
    expect(r.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('curl -N sees raw SSE: queue frames while waiting, then tokens, then [DONE]', async () => {
    if (spawnSync('curl', ['--version']).status !== 0) throw new Error('curl is required for this test');
    // Fill the l20 qwen pool (4 slots) with slow batch work so the interactive curl request must wait.
    const batch = new OpenAI({ baseURL: app.proxy.url()!, apiKey: token, maxRetries: 0, defaultHeaders: { 'x-priority': 'batch' } });
    const inter = new OpenAI({ baseURL: app.proxy.url()!, apiKey: token, maxRetries: 0 });
    const fill = [
      ...[1, 2, 3].map(() => batch.chat.completions.create({ model: 'qwen', messages: [{ role: 'user', content: 'long' }], max_tokens: 60 })),
      inter.chat.completions.create({ model: 'qwen', messages: [{ role: 'user', content: 'long' }], max_tokens: 60 }),
    ];
    await new Promise((r) => setTimeout(r, 50));
    const curl = await runCurl(
      ['-sN', '-H', `authorization: Bearer ${token}`, '-H', 'content-type: application/json', '-H', 'x-queue-events: on',
        '-d', JSON.stringify({ model: 'qwen', stream: true, max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] }),
        `${app.proxy.url()}/chat/completions`]);
    await Promise.all(fill);
    const out = curl.stdout;
    // Each frame names the request's trace (ours here: the client sent no X-Request-Id).
    expect(out).toMatch(/^event: queue\ndata: \{"position":1,"eta_ms":(null|\d+),"reason":"busy","upstream":"[^"]+","request_id":"req_[0-9a-f]{24}"\}/);
    expect(out).toMatch(/event: queue\ndata: \{"position":0,"eta_ms":0,"queue_ms":\d+,"upstream":"[^"]+","request_id":"req_[0-9a-f]{24}"\}/);
    expect(out.indexOf('event: queue')).toBeLessThan(out.indexOf('chat.completion.chunk'));
    expect(out.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(out).not.toContain('"usage"');
  });

  it('refuses a sleeping model with 503 model_sleeping and Retry-After', async () => {
    const sim = c.demo.host('tri-gpu').simulator('ocr');
    await sim.sleep(1);
    await new Promise<void>((resolve) => {
      const sub = app.fleet.onDidTick((s) => {
        const svc = s.hosts.find((h) => h.label === 'tri-gpu')?.services.find((v) => v.id === 'ocr');
        if (svc?.sleep === 'asleep-1') {
          void sub.dispose();
          resolve();
        }
      });
    });
    const r = await request(`${app.proxy.url()}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'ocr', messages: [{ role: 'user', content: 'x' }] }),
    });
    const body = (await r.body.json()) as { error: { code: string; queue_depth: number; expected_wake_ms: number | null } };
    expect(r.statusCode).toBe(503);
    expect(body.error.code).toBe('model_sleeping');
    expect(body.error.queue_depth).toBe(0);
    // Retry-After follows the expected wake time when the lifecycle capability has one, else 30 s.
    const expected = body.error.expected_wake_ms === null ? '30' : String(Math.max(1, Math.ceil(body.error.expected_wake_ms / 1000)));
    expect(r.headers['retry-after']).toBe(expected);
    await sim.wakeUp();
  });

  it('the group alias falls back to its second model while the first sleeps', async () => {
    const sim = c.demo.host('l20-poc').simulator('qwen');
    await sim.sleep(1);
    await until(() => app.proxy.snapshot().upstreams.find((u) => u.upstream === 'l20-poc/qwen')?.state === 'sleeping');
    try {
      const { data, response } = await client.chat.completions
        .create({ model: 'chat', messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 4 })
        .withResponse();
      expect(response.headers.get('x-upstream')).toBe('tri-gpu/gemma');
      expect(data.model).toBe('Gemma-3-27B-it');
    } finally {
      await sim.wakeUp();
      await until(() => app.proxy.snapshot().upstreams.find((u) => u.upstream === 'l20-poc/qwen')?.state === 'ready');
    }
  });

  it('changes caps at runtime with an audit event', () => {
    const caps = { reservedInteractive: 2, interactive: 4, system: 1, batch: 2 };
    expect(app.proxy.setCaps('l20-poc/qwen', caps, 'test')).toEqual(caps);
    const [event] = app.store.audit.list({ type: 'proxy.caps.changed', limit: 1 });
    expect(event).toMatchObject({ target: 'l20-poc/qwen', payload: { after: caps, before: { reservedInteractive: 1 } } });
    expect(app.proxy.snapshot().upstreams.find((u) => u.upstream === 'l20-poc/qwen')!.caps).toEqual(caps);
    expect(() => app.proxy.setCaps('l20-poc/qwen', { ...caps, batch: 9 }, 'test')).toThrow(/exceeds/);
  });

  it('under load through the tunnels: every request answered, store rows equal answers', async () => {
    await new Promise((r) => setTimeout(r, 300));
    const before = app.proxy.server.answeredCount;
    const rowsBefore = app.proxy.requests({ limit: 2000, outcome: 'all' }).length;
    const classes = ['interactive', 'system', 'batch'] as const;
    const results = await Promise.allSettled(
      Array.from({ length: 60 }, (_, i) =>
        client.chat.completions.create(
          { model: i % 2 ? 'qwen' : 'gemma', messages: [{ role: 'user', content: `q${i}` }], max_tokens: 6 },
          { headers: { 'x-priority': classes[i % 3] } },
        ),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(60);
    expect(app.proxy.server.answeredCount - before).toBe(60);
    expect(app.proxy.requests({ limit: 2000, outcome: 'all' }).length - rowsBefore).toBe(60);
  });

  it('drains one upstream: in-flight work finishes, new requests get 503 upstream_draining, resume admits again', async () => {
    const running = client.chat.completions.create({ model: 'gemma', messages: [{ role: 'user', content: 'x' }], max_tokens: 200 });
    // Drain once the proxy has it in flight (a fixed delay races the admission on a loaded machine).
    const inFlight = () => app.proxy.snapshot().upstreams.find((u) => u.upstream === 'tri-gpu/gemma')?.inFlight ?? 0;
    for (let i = 0; i < 1000 && inFlight() === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(inFlight()).toBe(1);
    const draining = app.proxy.drain('tri-gpu/gemma', { deadlineMs: 5_000 }, 'test');
    await expect(client.chat.completions.create({ model: 'gemma', messages: [{ role: 'user', content: 'x' }], max_tokens: 2 })).rejects.toMatchObject({
      status: 503,
      code: 'upstream_draining',
    });
    expect(await draining).toEqual({ drained: 1, aborted: 0 });
    await expect(running).resolves.toBeTruthy();
    app.proxy.resume('tri-gpu/gemma', 'test');
    await expect(client.chat.completions.create({ model: 'gemma', messages: [{ role: 'user', content: 'x' }], max_tokens: 2 })).resolves.toBeTruthy();
  });
});
