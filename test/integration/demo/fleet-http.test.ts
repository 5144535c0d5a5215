import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';
import { connectSsh, exec, forward, http, metricValue, sseEvents } from './demo-client.js';

// decodeSpeedFactor 5: 87.5 tok/s per sequence on l20-poc, so a natural answer
// (60–120 tokens) takes about a second — long enough to observe queueing.
let dir: string;
let fleet: DemoFleet;
let l20: Client;
let tri: Client;
const QWEN = 'Qwen3.6-27B-FP8';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'demo-http-'));
  fleet = await startDemoFleet({ dir, timeScale: 1000, decodeSpeedFactor: 5 });
  l20 = await connectSsh(fleet, fleet.host('l20-poc'));
  tri = await connectSsh(fleet, fleet.host('tri-gpu'));
});

afterAll(async () => {
  l20?.end();
  tri?.end();
  await fleet?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const chat = (content: string, extra: Record<string, unknown> = {}) => ({ model: QWEN, messages: [{ role: 'user', content }], ...extra });

describe('vLLM simulator through the SSH forward', () => {
  it('answers /health, /version and /v1/models like vLLM', async () => {
    const health = await http(l20, 8000, 'GET', '/health');
    expect([health.status, health.body]).toEqual([200, '']);
    expect(JSON.parse((await http(l20, 8000, 'GET', '/version')).body)).toEqual({ version: expect.stringMatching(/^0\.\d+\.\d+$/) });
    const models = JSON.parse((await http(l20, 8000, 'GET', '/v1/models')).body);
    expect(models.object).toBe('list');
    expect(models.data).toHaveLength(1);
    expect(models.data[0]).toMatchObject({ id: QWEN, object: 'model', owned_by: 'vllm', max_model_len: 32768, parent: null, root: expect.any(String) });
    expect(models.data[0].permission[0]).toMatchObject({ object: 'model_permission', allow_sampling: true, organization: '*' });
    const gemma = JSON.parse((await http(tri, 8000, 'GET', '/v1/models')).body);
    expect(gemma.data[0].id).toBe('Gemma-3-27B-it');
  });

  it('answers errors in the vLLM ≥0.10.1 shape', async () => {
    const unknown = await http(l20, 8000, 'POST', '/v1/chat/completions', { ...chat('hi'), model: 'gpt-4' });
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body)).toEqual({ error: { message: expect.stringContaining('gpt-4'), type: 'NotFoundError', param: null, code: 404 } });
    const bad = await http(l20, 8000, 'POST', '/v1/chat/completions', '{"model":');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error).toMatchObject({ type: 'BadRequestError', code: 400 });
    const noMessages = await http(l20, 8000, 'POST', '/v1/chat/completions', { model: QWEN });
    expect(noMessages.status).toBe(400);
    const tooLong = await http(l20, 8000, 'POST', '/v1/chat/completions', chat('x', { max_tokens: 40_000 }));
    expect(tooLong.status).toBe(400);
    expect(JSON.parse(tooLong.body).error.message).toContain('maximum context length is 32768');
    expect((await http(l20, 8000, 'GET', '/nope')).status).toBe(404);
    const embedOnChat = await http(l20, 8000, 'POST', '/v1/embeddings', { model: QWEN, input: 'x' });
    expect(embedOnChat.status).toBe(400);
    const chatOnEmbed = await http(tri, 8002, 'POST', '/v1/chat/completions', { model: 'bge-m3', messages: [{ role: 'user', content: 'x' }] });
    expect(chatOnEmbed.status).toBe(400);
  });

  it('serves a non-streaming chat completion with usage, cut by max_tokens → length', async () => {
    const full = await http(l20, 8000, 'POST', '/v1/chat/completions', chat('Describe the GPU fleet.', { temperature: 0, chat_template_kwargs: { enable_thinking: false }, frobnicate: 1 }));
    expect(full.status).toBe(200);
    const body = JSON.parse(full.body);
    expect(body).toMatchObject({ object: 'chat.completion', model: QWEN, id: expect.stringMatching(/^chatcmpl-/) });
    expect(body.choices[0].message.role).toBe('assistant');
    expect(body.choices[0].finish_reason).toBe('stop');
    expect(body.usage.completion_tokens).toBeGreaterThanOrEqual(60);
    expect(body.usage.completion_tokens).toBeLessThanOrEqual(120);
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
    expect(body.choices[0].message.content).toMatch(/^[A-Z][a-z]+( [a-zA-Z]+\.?)+$/);

    const cut = JSON.parse((await http(l20, 8000, 'POST', '/v1/chat/completions', chat('Describe the GPU fleet.', { max_tokens: 7 }))).body);
    expect(cut.choices[0].finish_reason).toBe('length');
    expect(cut.usage.completion_tokens).toBe(7);
  });

  it('streams one SSE chunk per token with include_usage and [DONE]', async () => {
    const res = await http(l20, 8000, 'POST', '/v1/chat/completions', chat('Stream please', { stream: true, stream_options: { include_usage: true }, max_tokens: 12 }));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = sseEvents(res.body);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    const usageChunk = chunks.at(-1);
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toMatchObject({ completion_tokens: 12 });
    const tokenChunks = chunks.slice(0, -2);
    expect(tokenChunks).toHaveLength(12);
    expect(tokenChunks[0].choices[0].delta.role).toBe('assistant');
    for (const c of chunks.slice(0, -1)) {
      expect(c.object).toBe('chat.completion.chunk');
      expect(c.usage).toBeNull();
    }
    expect(chunks.at(-2).choices[0].finish_reason).toBe('length');

    const plain = sseEvents((await http(l20, 8000, 'POST', '/v1/chat/completions', chat('Stream please', { stream: true, max_tokens: 3 }))).body);
    expect(plain.at(-1)).toBe('[DONE]');
    expect(plain.slice(0, -1).every((e) => !('usage' in JSON.parse(e)))).toBe(true);
  });

  it('serves /v1/completions too', async () => {
    const res = JSON.parse((await http(l20, 8000, 'POST', '/v1/completions', { model: QWEN, prompt: 'Once upon a time', max_tokens: 5 })).body);
    expect(res.object).toBe('text_completion');
    expect(res.choices[0]).toMatchObject({ finish_reason: 'length', text: expect.any(String) });
    expect(res.usage.completion_tokens).toBe(5);
  });

  it('produces JSON for a json_schema response_format', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string' }, score: { type: 'number' }, ok: { type: 'boolean' }, tags: { type: 'array', items: { type: 'string' } } }, required: ['name', 'score', 'ok', 'tags'] };
    const res = JSON.parse((await http(l20, 8000, 'POST', '/v1/chat/completions', chat('json please', { response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } }))).body);
    const value = JSON.parse(res.choices[0].message.content);
    expect(value).toEqual({ name: expect.any(String), score: expect.any(Number), ok: expect.any(Boolean), tags: expect.any(Array) });
  });

  it('serves embeddings on the embedding model (dim 1024, float and base64)', async () => {
    const res = await http(tri, 8002, 'POST', '/v1/embeddings', { model: 'bge-m3', input: ['first text', 'second text'] });
    expect(res.status).toBe(200);
    const body = JSON.parse(res.body);
    expect(body.object).toBe('list');
    expect(body.data).toHaveLength(2);
    const v: number[] = body.data[0].embedding;
    expect(v).toHaveLength(1024);
    expect(Math.sqrt(v.reduce((s, x) => s + x * x, 0))).toBeCloseTo(1, 5);
    expect(body.usage.prompt_tokens).toBeGreaterThan(0);
    const b64 = JSON.parse((await http(tri, 8002, 'POST', '/v1/embeddings', { model: 'bge-m3', input: 'first text', encoding_format: 'base64' })).body);
    const floats = new Float32Array(Buffer.from(b64.data[0].embedding, 'base64').buffer.slice(0));
    expect(floats).toHaveLength(1024);
    expect(floats[0]).toBeCloseTo(v[0]!, 5);
  });

  it('keeps /metrics in agreement with the usage it returned', async () => {
    const before = (await http(tri, 8001, 'GET', '/metrics')).body;
    const p0 = metricValue(before, 'vllm:prompt_tokens_total') ?? NaN;
    const g0 = metricValue(before, 'vllm:generation_tokens_total') ?? NaN;
    let prompt = 0;
    let completion = 0;
    const bodies = [
      { model: 'olmOCR-2-7B', messages: [{ role: 'user', content: [{ type: 'text', text: 'Read this page' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }] },
      { model: 'olmOCR-2-7B', messages: [{ role: 'user', content: 'short' }], max_tokens: 9 },
      { model: 'olmOCR-2-7B', messages: [{ role: 'user', content: 'streamed' }], stream: true, stream_options: { include_usage: true } },
    ];
    const results = await Promise.all(bodies.map((b) => http(tri, 8001, 'POST', '/v1/chat/completions', b)));
    for (const r of results) {
      const usage = r.body.startsWith('data:') ? JSON.parse(sseEvents(r.body).at(-2)!).usage : JSON.parse(r.body).usage;
      prompt += usage.prompt_tokens;
      completion += usage.completion_tokens;
    }
    const after = (await http(tri, 8001, 'GET', '/metrics')).body;
    expect(metricValue(after, 'vllm:prompt_tokens_total')! - p0).toBe(prompt);
    expect(metricValue(after, 'vllm:generation_tokens_total')! - g0).toBe(completion);
    expect(prompt).toBeGreaterThan(1200); // the page image counts
    expect(metricValue(after, 'vllm:request_success_total', { finished_reason: 'length' })).toBeGreaterThanOrEqual(1);
    expect(metricValue(after, 'vllm:time_to_first_token_seconds_count')).toBe(3);
    expect(metricValue(after, 'vllm:cache_config_info', { num_gpu_blocks: '16000' })).toBe(1);
    expect(metricValue(after, 'vllm:engine_sleep_state', { sleep_state: 'awake' })).toBe(1);
  });

  it('queues beyond 4 slots: 6 concurrent → 4 running / 2 waiting; GPU busy, then idle', async () => {
    const firstChunk: Promise<void>[] = [];
    const done: Promise<unknown>[] = [];
    for (let i = 0; i < 6; i++) {
      let signal!: () => void;
      firstChunk.push(new Promise<void>((r) => (signal = r)));
      done.push(http(l20, 8000, 'POST', '/v1/chat/completions', chat(`concurrent request number ${i}`, { stream: true }), () => signal()));
    }
    // Four sequences got slots and are streaming; two must still be queued.
    await new Promise<void>((resolve) => {
      let n = 0;
      for (const f of firstChunk) void f.then(() => ++n >= 4 && resolve());
    });
    const metrics = (await http(l20, 8000, 'GET', '/metrics')).body;
    expect(metricValue(metrics, 'vllm:num_requests_running')).toBe(4);
    expect(metricValue(metrics, 'vllm:num_requests_waiting')).toBe(2);
    expect(metricValue(metrics, 'vllm:kv_cache_usage_perc')).toBeGreaterThan(0);
    const busy = (await exec(l20, 'nvidia-smi --query-gpu=utilization.gpu,power.draw,memory.used --format=csv,noheader,nounits')).stdout.trim().split(', ').map(Number);
    expect(busy[0]).toBeGreaterThanOrEqual(90);
    expect(busy[1]).toBeGreaterThan(200);
    expect(busy[2]).toBeGreaterThan(38_000);
    await Promise.all(done);
    const idle = (await exec(l20, 'nvidia-smi --query-gpu=utilization.gpu,power.draw --format=csv,noheader,nounits')).stdout.trim().split(', ').map(Number);
    expect(idle[0]).toBe(0);
    expect(idle[1]).toBeLessThan(80);
    const end = (await http(l20, 8000, 'GET', '/metrics')).body;
    expect(metricValue(end, 'vllm:num_requests_running')).toBe(0);
    expect(metricValue(end, 'vllm:request_queue_time_seconds_bucket', { le: '0.3' })).toBeLessThan(metricValue(end, 'vllm:request_queue_time_seconds_count')!);
  });

  it('aborts the sequence when the client goes away', async () => {
    const before = metricValue((await http(tri, 8000, 'GET', '/metrics')).body, 'vllm:request_success_total', { finished_reason: 'abort' })!;
    const stream = await forward(tri, 8000);
    const payload = JSON.stringify({ model: 'Gemma-3-27B-it', stream: true, messages: [{ role: 'user', content: 'long answer' }] });
    const gotData = new Promise<void>((resolve) => stream.once('data', () => resolve()));
    stream.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`);
    await gotData;
    const sim = fleet.host('tri-gpu').simulator('gemma');
    const aborted = new Promise<void>((resolve) => {
      // No event marks an engine-side abort; poll the in-process snapshot once per loop turn.
      const check = () => (sim.snapshot().running + sim.snapshot().waiting === 0 ? resolve() : setImmediate(check));
      check();
    });
    stream.destroy();
    await aborted;
    const after = metricValue((await http(tri, 8000, 'GET', '/metrics')).body, 'vllm:request_success_total', { finished_reason: 'abort' })!;
    expect(after - before).toBe(1);
  });
});
