import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlaygroundErrorCode, type PlaygroundAnswer, type PlaygroundProgress } from '../../../src-preload/contract/index.js';
import type { App } from '../../../src-main/core/app.js';
import { PLAYGROUND_CLIENT } from '../../../src-main/core/proxy/index.js';
import { until } from '../../helpers/until.js';
import { startDemoConsole, waitForTunnels } from './helpers.js';

// The playground through the real path: contract call → core → proxy's HTTP
// port (as client console:playground) → SSH tunnel → demo simulator.

let c: Awaited<ReturnType<typeof startDemoConsole>>;
let app: App;
let api: { invoke(channel: string, input: unknown, ctx?: { signal?: AbortSignal }): Promise<{ ok: boolean; data?: unknown; error?: { code: string; message: string } }> };
const progress: PlaygroundProgress[] = [];

beforeAll(async () => {
  // Decoding at a tenth of real speed (not the helpers' 20x), so the stream comes in several pieces to time.
  c = await startDemoConsole({ decodeSpeedFactor: 10 });
  app = c.app;
  const { createApi } = await import('../../../src-main/core/api.js');
  const { silentLogger } = await import('../../../src-main/core/base/index.js');
  api = createApi(app, silentLogger);
  app.onEvent((e) => {
    if (e.channel === 'playground.progress') progress.push(e.payload as PlaygroundProgress);
  });
  await waitForTunnels(app);
});
afterAll(async () => {
  await c?.close();
});

let runs = 0;
const send = (input: Record<string, unknown>, signal?: AbortSignal) =>
  api.invoke('playground.send', { runId: `test-run-${++runs}`, model: 'qwen', maxTokens: 24, turns: [{ role: 'user', content: 'Say hello.' }], ...input }, { signal });
const rowOf = async (id: string) => {
  await until(() => app.proxy.requests({ limit: 2000, outcome: 'all' }).some((r) => r.id === id));
  return app.proxy.requests({ limit: 2000, outcome: 'all' }).find((r) => r.id === id)!;
};

describe('playground on the demo fleet', () => {
  it('streams an answer through the proxy with TTFT, decode tok/s and the upstream, logged as console:playground', async () => {
    const r = await send({ runId: 'stream-run-1', class: 'system', systemPrompt: 'Be brief.', temperature: 0.2 });
    expect(r.ok).toBe(true);
    const a = r.data as PlaygroundAnswer;
    expect(a).toMatchObject({ runId: 'stream-run-1', status: 200, upstream: 'l20-poc/qwen', model: 'Qwen3.6-27B-FP8', stream: true, error: null, tokensPerSBasis: 'decode' });
    expect(a.text.length).toBeGreaterThan(0);
    expect(a.ttftMs).toBeGreaterThan(0);
    expect(a.ttftMs!).toBeLessThanOrEqual(a.totalMs);
    expect(a.completionTokens).toBeGreaterThan(1);
    expect(a.tokensPerS).toBeGreaterThan(0);
    expect(a.requestId).toMatch(/^req_/);
    // The streamed text arrived as progress events too, in order, the request's identity with them.
    const mine = progress.filter((p) => p.runId === 'stream-run-1');
    expect(mine.map((p) => p.seq)).toEqual(mine.map((_, i) => i));
    expect(mine.map((p) => p.text).join('')).toBe(a.text);
    expect(mine[0]).toMatchObject({ requestId: a.requestId, upstream: 'l20-poc/qwen' });
    const row = await rowOf(a.requestId!);
    expect(row).toMatchObject({ client: PLAYGROUND_CLIENT, class: 'system', upstream: 'l20-poc/qwen', status: 200, stream: true, tokensOut: a.completionTokens });
    // The playground's token stays in main: not in what the renderer gets, not in a token row or the audit log.
    expect(JSON.stringify([a, mine])).not.toMatch(/gci_/);
    expect(app.proxy.tokens.list().map((t) => t.name)).not.toContain(PLAYGROUND_CLIENT);
    expect(JSON.stringify(app.store.audit.list({ limit: 1000 }))).not.toMatch(/gci_|console:playground/);
  });

  it('unstreamed: no TTFT, tok/s over the whole answer, a group name routed to its first model', async () => {
    const r = await send({ model: 'chat', stream: false });
    const a = r.data as PlaygroundAnswer;
    expect(a).toMatchObject({ stream: false, ttftMs: null, tokensPerSBasis: 'end_to_end', upstream: 'l20-poc/qwen', error: null });
    expect(a.tokensPerS).toBeGreaterThan(0);
    expect(a.text.length).toBeGreaterThan(0);
  });

  it('refuses bad input with coded, named errors and sends nothing', async () => {
    const before = app.proxy.snapshot().answered;
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ maxTokens: 0 }, PlaygroundErrorCode.INVALID_MAX_TOKENS, /max_tokens must be at least 1 \(got 0\)/],
      [{ maxTokens: -5 }, PlaygroundErrorCode.INVALID_MAX_TOKENS, /got -5/],
      [{ turns: [{ role: 'user', content: '   ' }] }, PlaygroundErrorCode.EMPTY_PROMPT, /prompt is empty/],
      [{ model: 'no-such-model' }, PlaygroundErrorCode.UNKNOWN_MODEL, /no-such-model/],
      [{ temperature: 3 }, PlaygroundErrorCode.INVALID_TEMPERATURE, /between 0 and 2/],
    ];
    for (const [input, code, message] of cases) {
      const r = await send(input);
      expect(r.ok).toBe(false);
      expect(r.error).toMatchObject({ code });
      expect(r.error!.message).toMatch(message);
    }
    expect(app.proxy.snapshot().answered).toBe(before);
  });

  it('a model that is asleep is refused at once, named, not held for a wake', async () => {
    const sim = c.demo.host('tri-gpu').simulator('ocr');
    await sim.sleep(1);
    await until(() => app.proxy.snapshot().upstreams.find((u) => u.upstream === 'tri-gpu/ocr')?.state === 'sleeping');
    try {
      const answered = app.proxy.snapshot().answered;
      const t0 = performance.now();
      const r = await send({ model: 'ocr' });
      expect(performance.now() - t0).toBeLessThan(1_000);
      // Nothing reached the proxy: no request held, no row.
      expect(app.proxy.snapshot().answered).toBe(answered);
      expect(r.error).toMatchObject({ code: PlaygroundErrorCode.MODEL_SLEEPING });
      expect(r.error!.message).toMatch(/asleep \(tri-gpu\/ocr\); wake it from the host card/);
    } finally {
      await sim.wakeUp();
      await until(() => app.proxy.snapshot().upstreams.find((u) => u.upstream === 'tri-gpu/ocr')?.state === 'ready');
    }
  });

  it("shows the proxy's own refusal with its code and Retry-After (a draining upstream)", async () => {
    const drained = app.proxy.drain('tri-gpu/gemma', { deadlineMs: 5_000 }, 'test');
    try {
      const r = await send({ model: 'gemma' });
      const a = r.data as PlaygroundAnswer;
      expect(a.status).toBe(503);
      expect(a.error).toMatchObject({ code: 'upstream_draining', inStream: false });
      expect(a.error!.retryAfterS).toBeGreaterThanOrEqual(1);
      expect(a.text).toBe('');
      expect(a.tokensPerS).toBeNull();
      expect((await rowOf(a.requestId!)).errorCode).toBe('upstream_draining');
    } finally {
      await drained;
      app.proxy.resume('tri-gpu/gemma', 'test');
    }
  });

  it('Stop (the call aborted) closes the request: the proxy records the client gone', async () => {
    const controller = new AbortController();
    const runId = 'stop-run-1';
    const sub = app.onEvent((e) => {
      if (e.channel === 'playground.progress' && (e.payload as PlaygroundProgress).runId === runId && (e.payload as PlaygroundProgress).text !== '') controller.abort();
    });
    const r = await send({ runId, maxTokens: 2_000 }, controller.signal);
    void sub.dispose();
    expect(r.ok).toBe(false);
    const id = progress.find((p) => p.runId === runId)!.requestId!;
    const row = await rowOf(id);
    expect(row).toMatchObject({ client: PLAYGROUND_CLIENT, status: 499, errorCode: 'client_closed' });
  });
});
