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
    expect(parseLlamaProps(PROPS)).toEqual({ nCtx: 8192, totalSlots: 4, model: 'qwen-coder', buildInfo: 'b6123-abcdef0', isSleeping: false });
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
      kvTokensInUse: 1800,
      kvCapacityTokens: 4 * 8192,
      maxModelLen: 8192,
      sleepState: 'awake',
      // finished-request counters plus the progress of the two running requests
      promptTokensTotal: 12000 + 1500,
      generationTokensTotal: 3400 + 300,
      countersIncludeLive: true,
      kvEstimated: true,
      slotsReported: 4,
      version: 'b6123-abcdef0',
      modelName: 'qwen-coder',
    });
    expect(r.service!.kvCacheUsage).toBeCloseTo(1800 / 32768, 10);
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
