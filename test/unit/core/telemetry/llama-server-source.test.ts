import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { LlamaServerHttpSource, parseLlamaProps, parseLlamaSlots } from '../../../../src-main/core/telemetry/index.js';
import { fakeGet, refused } from './fake-http.js';

// Shapes from wire-formats §4.3: next_token as an object (README) and wrapped in
// a one-element array (some late-2025/2026 builds).
const SLOTS = JSON.stringify([
  { id: 0, n_ctx: 8192, speculative: false, is_processing: true, n_prompt_tokens: 1000, next_token: { has_next_token: true, n_remain: -1, n_decoded: 200 } },
  { id: 1, n_ctx: 8192, speculative: false, is_processing: true, n_prompt_tokens: 500, next_token: [{ has_next_token: true, n_remain: -1, n_decoded: 100 }] },
  { id: 2, n_ctx: 8192, speculative: false, is_processing: false },
  { id: 3, n_ctx: 8192, speculative: false, is_processing: false },
  'not a slot',
]);
const PROPS = JSON.stringify({
  default_generation_settings: { n_ctx: 8192, params: {} },
  total_slots: 4,
  model_alias: 'qwen-coder',
  model_path: '/models/q.gguf',
  build_info: 'b6123-abcdef0',
  is_sleeping: false,
});
const METRICS = `# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 12000
# TYPE llamacpp:tokens_predicted_total counter
llamacpp:tokens_predicted_total 3400
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 2
# TYPE llamacpp:requests_deferred gauge
llamacpp:requests_deferred 5
`;

const make = (routes: Parameters<typeof fakeGet>[0]) => {
  const get = fakeGet(routes);
  return { get, src: new LlamaServerHttpSource({ id: 'h/l', get, clock: new FakeClock() }) };
};

describe('llama-server endpoints', () => {
  it('reads both next_token shapes and counts entries that are not slots', () => {
    const r = parseLlamaSlots(SLOTS)!;
    expect(r.unreadable).toBe(1);
    expect(r.slots.map((s) => s.decodedTokens)).toEqual([200, 100, null, null]);
    expect(parseLlamaSlots('<html>')).toBeNull();
  });

  it('takes the serving context from /props, not the training context', () => {
    expect(parseLlamaProps(PROPS)).toEqual({ nCtx: 8192, totalSlots: 4, model: 'qwen-coder', modelPath: '/models/q.gguf', buildInfo: 'b6123-abcdef0', isSleeping: false });
    expect(parseLlamaProps(JSON.stringify({ total_slots: 1 }))!.isSleeping).toBeNull();
  });
});

describe('LlamaServerHttpSource', () => {
  it('combines /slots, /props and /metrics', async () => {
    const { src } = make({
      '/health': { status: 200, text: '{"status":"ok"}' },
      '/slots': { status: 200, text: SLOTS },
      '/props': { status: 200, text: PROPS },
      '/metrics': { status: 200, text: METRICS },
    });
    const r = await src.scrape();
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.unreadable).toBe(1);
    expect(r.service).toMatchObject({
      kind: 'llama-server',
      health: 'ok',
      running: 2,
      waiting: 5,
      // n_prompt_tokens is each slot's whole sequence (prompt and generated): n_decoded is in it already
      kvTokensInUse: 1500,
      kvCapacityTokens: 4 * 8192,
      maxModelLen: 8192,
      sleepState: 'awake',
      // the prompt counter moves while prompts are evaluated (live already); the generation counter
      // only when a request ends, so the running requests' n_decoded is added to it
      promptTokensTotal: 12000,
      generationTokensTotal: 3400 + 300,
      countersIncludeLive: true,
      kvEstimated: true,
      slotsReported: 4,
      version: 'b6123-abcdef0',
      modelName: 'qwen-coder',
    });
    expect(r.service!.kvCacheUsage).toBeCloseTo(1500 / 32768, 10);
  });

  it('503 "Loading model" is stale with TELEMETRY_SERVER_LOADING; a refused connection keeps its code', async () => {
    const loading = make({ '/health': { status: 503, text: '{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}' } });
    const r = await loading.src.scrape();
    expect(r.ok ? null : r.stale.code).toBe('TELEMETRY_SERVER_LOADING');
    const down = make({ '/health': refused() });
    const d = await down.src.scrape();
    expect(d.ok ? null : d.stale.code).toBe('TELEMETRY_SCRAPE_FAILED');
  });

  it('without --metrics (501) it reads slots only and stops asking for /metrics', async () => {
    const { src, get } = make({
      '/health': { status: 200, text: '{"status":"ok"}' },
      '/slots': { status: 200, text: SLOTS },
      '/metrics': { status: 501, text: '{"error":{"code":501,"type":"not_supported_error"}}' },
    });
    const r = await src.scrape();
    await src.scrape();
    expect(r.ok && r.service!.running).toBe(2);
    expect(r.ok && r.service!.waiting).toBeNull();
    expect(get.asked.filter((p) => p === '/metrics')).toHaveLength(1);
  });
});

describe('LlamaServerHttpSource: the token totals and their time', () => {
  const ok = { status: 200, text: '{"status":"ok"}' };
  const busySlots = (decoded: number) =>
    JSON.stringify([{ id: 0, n_ctx: 1024, is_processing: true, id_task: 7, n_prompt_tokens: 20 + decoded, n_prompt_tokens_processed: 20, n_prompt_tokens_cache: 0, next_token: [{ n_decoded: decoded }] }]);
  const metrics = (gen: number) => `llamacpp:prompt_tokens_total 500\nllamacpp:tokens_predicted_total ${gen}\n`;

  it('a /slots that fails once leaves the totals unknown for that reading, not the finished counters alone (a drop, then a spike)', async () => {
    let slots: { status: number; text: string } | Error = { status: 200, text: busySlots(100) };
    const { src } = make({ '/health': ok, '/slots': () => slots, '/metrics': { status: 200, text: metrics(1000) } });
    const a = await src.scrape();
    expect(a.ok && a.service!.generationTokensTotal).toBe(1100);
    slots = refused();
    const b = await src.scrape();
    expect(b.ok && b.service!.generationTokensTotal).toBeNull();
    expect(b.ok && b.service!.promptTokensTotal).toBeNull();
    slots = { status: 200, text: busySlots(150) };
    const c = await src.scrape();
    expect(c.ok && c.service!.generationTokensTotal).toBe(1150);
  });

  it('is stamped when /slots and /metrics answered, not when the slowest other GET did', async () => {
    const clock = new FakeClock(0);
    let releaseProps: () => void = () => {};
    const get = fakeGet({ '/health': ok, '/slots': { status: 200, text: busySlots(10) }, '/metrics': { status: 200, text: metrics(0) } });
    const slowProps: typeof get = Object.assign(
      (path: string, o?: Parameters<typeof get>[1]) =>
        path === '/props' ? new Promise<{ status: number; text: string }>((resolve) => (releaseProps = () => resolve({ status: 200, text: PROPS }))) : get(path, o),
      { asked: get.asked },
    );
    const src = new LlamaServerHttpSource({ id: 'h/l', get: slowProps, clock });
    const reading = src.scrape();
    await new Promise((r) => setImmediate(r));
    clock.advance(800);
    releaseProps();
    const r = await reading;
    expect(r.atMs).toBe(0);
  });
});
