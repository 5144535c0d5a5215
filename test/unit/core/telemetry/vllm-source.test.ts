import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { VllmHttpSource, parseVllmModels, vllmMaxModelLen, type ServiceReading } from '../../../../src-main/core/telemetry/index.js';
import { fakeGet, refused } from './fake-http.js';

// Expositions written from wire-formats §1 for three vLLM generations.
const V08 = `# HELP vllm:num_requests_running Number of requests currently running on GPU.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m"} 3.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="m"} 1.0
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{model_name="m"} 0.42
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{model_name="m"} 1000.0
# TYPE vllm:time_per_output_token_seconds histogram
vllm:time_per_output_token_seconds_bucket{le="0.01",model_name="m"} 0.0
vllm:time_per_output_token_seconds_bucket{le="0.05",model_name="m"} 10.0
vllm:time_per_output_token_seconds_bucket{le="+Inf",model_name="m"} 10.0
vllm:time_per_output_token_seconds_count{model_name="m"} 10.0
vllm:time_per_output_token_seconds_sum{model_name="m"} 0.3
`;

const NEWEST_DP2 = `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="q"} 2.0
vllm:num_requests_running{engine="1",model_name="q"} 1.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="q"} 0.5
vllm:kv_cache_usage_perc{engine="1",model_name="q"} 0.7
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="q"} 700.0
vllm:generation_tokens_total{engine="1",model_name="q"} 300.0
# TYPE vllm:generation_tokens_created gauge
vllm:generation_tokens_created{engine="0",model_name="q"} 1.7e9
# TYPE vllm:inter_token_latency_seconds histogram
vllm:inter_token_latency_seconds_bucket{engine="0",le="0.01",model_name="q"} 1.0
vllm:inter_token_latency_seconds_bucket{engine="0",le="+Inf",model_name="q"} 2.0
vllm:inter_token_latency_seconds_count{engine="0",model_name="q"} 2.0
vllm:inter_token_latency_seconds_sum{engine="0",model_name="q"} 0.1
# TYPE vllm:e2e_request_latency_seconds histogram
vllm:e2e_request_latency_seconds_bucket{engine="0",le="1.0",model_name="q"} 1.0
vllm:e2e_request_latency_seconds_bucket{engine="0",le="+Inf",model_name="q"} +Inf
# TYPE vllm:engine_sleep_state gauge
vllm:engine_sleep_state{engine="0",model_name="q",sleep_state="awake"} 0.0
vllm:engine_sleep_state{engine="0",model_name="q",sleep_state="weights_offloaded"} 1.0
vllm:engine_sleep_state{engine="0",model_name="q",sleep_state="discard_all"} 0.0
# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="16",engine="0",num_gpu_blocks="8000"} 1.0
vllm:cache_config_info{block_size="16",engine="1",num_gpu_blocks="8000"} 1.0
# TYPE vllm:request_success_total counter
vllm:request_success_total{engine="0",finished_reason="stop",model_name="q"} 5.0
vllm:request_success_total{engine="1",finished_reason="length",model_name="q"} 2.0
`;

const MODELS = JSON.stringify({
  object: 'list',
  data: [
    { id: 'q', object: 'model', root: '/models/q', parent: null, max_model_len: 32768 },
    { id: 'lora-a', object: 'model', root: '/adapters/a', parent: 'q' },
  ],
});

function source(routes: Parameters<typeof fakeGet>[0]) {
  const clock = new FakeClock();
  const get = fakeGet(routes);
  return { clock, get, src: new VllmHttpSource({ id: 'h/q', get, clock }) };
}

async function service(src: VllmHttpSource): Promise<ServiceReading> {
  const r = await src.scrape();
  if (!r.ok) throw new Error(`stale: ${r.stale.code} ${r.stale.message}`);
  return r.service!;
}

describe('VllmHttpSource', () => {
  it('reads a 0.8-era exposition: no engine label, old KV name, old ITL name', async () => {
    const { src } = source({ '/metrics': { status: 200, text: V08 }, '/health': { status: 200, text: '' } });
    const s = await service(src);
    expect(s).toMatchObject({ running: 3, waiting: 1, kvCacheUsage: 0.42, generationTokensTotal: 1000, engineCount: 1, health: 'ok', modelName: 'm' });
    expect(s.itl?.count).toBe(10);
    expect(s.sleepState).toBe('unknown');
  });

  it('reads the newest names with two DP engines: counters and requests summed, KV averaged, capacity summed, _created ignored', async () => {
    const { src } = source({
      '/metrics': { status: 200, text: NEWEST_DP2 },
      '/health': { status: 200, text: '' },
      '/is_sleeping': { status: 200, text: '{"is_sleeping": true}' },
      '/version': { status: 200, text: '{"version":"0.31.0"}' },
      '/v1/models': { status: 200, text: MODELS },
    });
    const s = await service(src);
    expect(s.running).toBe(3);
    expect(s.kvCacheUsage).toBeCloseTo(0.6, 10);
    expect(s.generationTokensTotal).toBe(1000);
    expect(s.kvCapacityTokens).toBe(2 * 8000 * 16);
    expect(s.engineCount).toBe(2);
    expect(s.sleepState).toBe('asleep-1'); // the metric says which level
    expect(s.version).toBe('0.31.0');
    expect(s.maxModelLen).toBe(32768);
    expect(s.requestsFinishedTotal).toBe(7);
    expect(s.itl?.count).toBe(2);
    // a +Inf sample value is not a count: the bucket is skipped, the histogram stays readable
    expect(s.e2e?.buckets).toEqual([{ le: 1, count: 1 }]);
  });

  it('falls back to /is_sleeping when the metric is absent, and stops asking after a 404 until facts refresh', async () => {
    const { src, get, clock } = source({ '/metrics': { status: 200, text: V08 }, '/health': { status: 200, text: '' } });
    await service(src);
    await service(src);
    expect(get.asked.filter((p) => p === '/is_sleeping')).toHaveLength(1);
    expect(get.asked.filter((p) => p === '/version')).toHaveLength(1);
    clock.advance(300_000);
    await service(src);
    expect(get.asked.filter((p) => p === '/is_sleeping')).toHaveLength(2);
    const { src: s2 } = source({ '/metrics': { status: 200, text: V08 }, '/is_sleeping': { status: 200, text: '{"is_sleeping": false}' } });
    const r = await service(s2);
    expect(r.sleepState).toBe('awake');
    expect(r.health).toBe('down'); // /health 404
  });

  it('a refused connection, a non-200, an HTML page and garbage give coded stale reasons', async () => {
    const cases: [Parameters<typeof fakeGet>[0]['x'], string][] = [
      [refused(), 'TELEMETRY_SCRAPE_FAILED'],
      [{ status: 500, text: 'oops' }, 'TELEMETRY_HTTP_STATUS'],
      [{ status: 200, text: '<!DOCTYPE html><html><body>Sign in</body></html>' }, 'TELEMETRY_NOT_METRICS'],
      [{ status: 200, text: 'this is {not metrics\nnor this ==' }, 'TELEMETRY_UNPARSEABLE'],
    ];
    for (const [route, code] of cases) {
      const { src } = source({ '/metrics': route!, '/health': { status: 200, text: '' } });
      const r = await src.scrape();
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.stale.code).toBe(code);
    }
  });

  it('a truncated body is a partial result with the cut line counted', async () => {
    const cut = NEWEST_DP2.slice(0, NEWEST_DP2.indexOf('vllm:generation_tokens_total{engine="1"') + 30);
    const { src } = source({ '/metrics': { status: 200, text: cut } });
    const r = await src.scrape();
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.unreadable).toBe(1);
      expect(r.service!.running).toBe(3);
      expect(r.service!.generationTokensTotal).toBe(700);
    }
  });

  it('10 MB of text is cut at the cap: what came before is read, the cut counted', async () => {
    const filler = Array.from({ length: 200_000 }, (_, i) => `junk_metric_${i}{a="${'x'.repeat(20)}"} ${i}`).join('\n');
    const text = NEWEST_DP2 + filler;
    expect(text.length).toBeGreaterThan(10_000_000);
    const { src } = source({ '/metrics': { status: 200, text } });
    const r = await src.scrape();
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.service!.running).toBe(3);
      expect(r.unreadable).toBe(1);
    }
  });

  it('NaN gauges read as unknown', async () => {
    const { src } = source({ '/metrics': { status: 200, text: 'vllm:kv_cache_usage_perc{engine="0"} NaN\nvllm:num_requests_running{engine="0"} 1' } });
    const s = await service(src);
    expect(s.kvCacheUsage).toBeNull();
    expect(s.running).toBe(1);
  });
});

describe('/v1/models', () => {
  it('takes max_model_len from the base model, not a LoRA adapter', () => {
    const cards = parseVllmModels(MODELS);
    expect(cards).toEqual([
      { id: 'q', maxModelLen: 32768, isAdapter: false },
      { id: 'lora-a', maxModelLen: null, isAdapter: true },
    ]);
    expect(vllmMaxModelLen(cards)).toBe(32768);
    expect(parseVllmModels('{"error":{"code":401}}')).toBeNull();
  });
});
