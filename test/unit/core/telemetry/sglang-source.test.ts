import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { ServiceDeriver, SglangHttpSource, readSglangMetrics, type ServiceReading } from '../../../../src-main/core/telemetry/index.js';
import { parsePrometheusText } from '../../../../src-main/core/telemetry/prometheus.js';
import { histogramQuantile } from '../../../../src-main/core/telemetry/histogram.js';
import { fakeGet, refused } from './fake-http.js';

// SGLang's /metrics as composed from its collector.py (test/fixtures/sglang/SOURCE.txt), read
// into the same readings as vLLM's, and the pages that are not SGLang's.
const METRICS = readFileSync(new URL('../../../fixtures/sglang/metrics.txt', import.meta.url), 'utf8');
const MODELS = JSON.stringify({ object: 'list', data: [{ id: 'qwen2.5-7b-instruct', object: 'model', owned_by: 'sglang', root: 'qwen2.5-7b-instruct', max_model_len: 32768 }] });
const INFO = JSON.stringify({ model_path: 'Qwen/Qwen2.5-7B-Instruct', tp_size: 1, version: '0.5.4' });

function source(routes: Parameters<typeof fakeGet>[0]) {
  const clock = new FakeClock();
  return { clock, src: new SglangHttpSource({ id: 'h/sg', get: fakeGet(routes), clock }) };
}

async function service(src: SglangHttpSource): Promise<{ service: ServiceReading; issues: string[] }> {
  const r = await src.scrape();
  if (!r.ok) throw new Error(`stale: ${r.stale.code} ${r.stale.message}`);
  return { service: r.service!, issues: r.issues ?? [] };
}

describe('SGLang metrics', () => {
  it('reads the fixture exactly: scheduler gauges, tokenizer counters, the three histograms', () => {
    const m = readSglangMetrics(parsePrometheusText(METRICS).families);
    expect(m).toMatchObject({
      running: 3,
      waiting: 2,
      tokenUsage: 0.25,
      usedTokens: 16384,
      maxTotalTokens: 65536,
      promptTokensTotal: 182340,
      generationTokensTotal: 51210,
      cachedTokensTotal: 91170,
      requestsTotal: 412,
      schedulers: 1,
      modelName: 'qwen2.5-7b-instruct',
      issues: [],
    });
    expect(m.ttft).toMatchObject({ count: 412, sum: 95.3 });
    expect(m.ttft!.buckets).toHaveLength(19);
    expect(m.itl).toMatchObject({ count: 50798, sum: 760.2 });
    expect(m.e2e).toMatchObject({ count: 412, sum: 1318.4 });
    // rank 206 of 412 falls in (0.1, 0.2]: 120 below, 140 inside
    expect(histogramQuantile(0.5, m.ttft!.buckets).value).toBeCloseTo(0.1 + (0.1 * 86) / 140, 9);
  });

  it('maps onto the vLLM readings: KV pool as KV cache, cached ÷ prompt tokens as the prefix hit rate over the window', async () => {
    const { clock, src } = source({ '/metrics': { status: 200, text: METRICS }, '/health': { status: 200, text: '' }, '/v1/models': { status: 200, text: MODELS }, '/get_server_info': { status: 200, text: INFO } });
    const { service: s, issues } = await service(src);
    expect(s).toMatchObject({ kind: 'sglang', health: 'ok', running: 3, waiting: 2, kvCacheUsage: 0.25, kvTokensInUse: 16384, kvCapacityTokens: 65536, maxModelLen: 32768, version: '0.5.4', requestsFinishedTotal: 412, sleepState: 'unknown' });
    expect(issues).toEqual([]);
    const deriver = new ServiceDeriver();
    deriver.push(s, 0);
    clock.advance(10_000);
    const next = METRICS.replace('sglang:cached_tokens_total{model_name="qwen2.5-7b-instruct",engine_type="unified"} 91170.0', 'sglang:cached_tokens_total{model_name="qwen2.5-7b-instruct",engine_type="unified"} 91570.0')
      .replace('sglang:prompt_tokens_total{model_name="qwen2.5-7b-instruct",engine_type="unified"} 182340.0', 'sglang:prompt_tokens_total{model_name="qwen2.5-7b-instruct",engine_type="unified"} 183340.0')
      .replace('sglang:generation_tokens_total{model_name="qwen2.5-7b-instruct",engine_type="unified"} 51210.0', 'sglang:generation_tokens_total{model_name="qwen2.5-7b-instruct",engine_type="unified"} 52710.0');
    const again = source({ '/metrics': { status: 200, text: next }, '/health': { status: 200, text: '' } });
    const f = deriver.push((await service(again.src)).service, 10_000);
    expect(f.kvCachePct).toBe(25);
    expect(f.prefixHitPct).toBeCloseTo(40, 9); // 400 of 1000 prompt tokens in the window came from the cache
    expect(f.genTokPerS).toBeCloseTo(150, 9);
    expect(f.promptTokPerS).toBeCloseTo(100, 9);
  });

  it('adds data-parallel schedulers, reads one tensor rank of each, and averages the token usage', () => {
    const g = (name: string, rows: [string, string, number][]) =>
      [`# TYPE ${name} gauge`, ...rows.map(([dp, tp, v]) => `${name}{model_name="m",engine_type="unified",tp_rank="${tp}",pp_rank="0",dp_rank="${dp}"} ${v}`)].join('\n');
    const text = [
      g('sglang:num_running_reqs', [['0', '0', 2], ['0', '1', 2], ['1', '0', 5], ['1', '1', 5]]),
      g('sglang:token_usage', [['0', '0', 0.2], ['0', '1', 0.2], ['1', '0', 0.6], ['1', '1', 0.6]]),
    ].join('\n');
    const m = readSglangMetrics(parsePrometheusText(text).families);
    expect(m.running).toBe(7);
    expect(m.tokenUsage).toBeCloseTo(0.4, 9);
    expect(m.schedulers).toBe(2);
  });

  it('a page without some families: those figures unknown, each named with a coded issue, the rest read', async () => {
    const partial = METRICS.split('\n').filter((l) => !l.includes('sglang:num_queue_reqs') && !l.includes('sglang:time_to_first_token_seconds')).join('\n');
    const { src } = source({ '/metrics': { status: 200, text: partial }, '/health': { status: 200, text: '' } });
    const { service: s, issues } = await service(src);
    expect(s.waiting).toBeNull();
    expect(s.ttft).toBeNull();
    expect(s.running).toBe(3);
    expect(issues).toEqual(['TELEMETRY_FAMILY_MISSING: GET /metrics: no sglang:num_queue_reqs series', 'TELEMETRY_FAMILY_MISSING: GET /metrics: no sglang:time_to_first_token_seconds series']);
  });

  it('a page that is not SGLang Prometheus text is a coded stale reading, never figures', async () => {
    const cases: [string, { status: number; text: string }, string, RegExp][] = [
      ['html', { status: 200, text: '<!doctype html><title>login</title>' }, 'TELEMETRY_NOT_METRICS', /HTML page/],
      ['json', { status: 200, text: '{"detail":"metrics disabled"}' }, 'TELEMETRY_UNPARSEABLE', /none of 1 lines/],
      ['vllm', { status: 200, text: '# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1\n' }, 'TELEMETRY_NOT_METRICS', /no sglang: series.*--enable-metrics/],
      ['404', { status: 404, text: 'Not Found' }, 'TELEMETRY_HTTP_STATUS', /HTTP 404/],
    ];
    for (const [name, answer, code, message] of cases) {
      const { src } = source({ '/metrics': answer, '/health': { status: 200, text: '' } });
      const r = await src.scrape();
      expect(r.ok, name).toBe(false);
      if (!r.ok) {
        expect(r.stale.code, name).toBe(code);
        expect(r.stale.message, name).toMatch(message);
      }
    }
    const { src } = source({ '/metrics': refused() });
    const r = await src.scrape();
    expect(r.ok ? null : r.stale.code).toBe('TELEMETRY_SCRAPE_FAILED');
  });

  it('health is down when the health path fails while /metrics answers', async () => {
    const { src } = source({ '/metrics': { status: 200, text: METRICS }, '/health': { status: 503, text: '' } });
    expect((await service(src)).service.health).toBe('down');
  });
});
