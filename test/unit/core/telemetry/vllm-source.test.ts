import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { VllmHttpSource, parseVllmModels, vllmMaxModelLen, vllmModelPath, type ServiceReading } from '../../../../src-main/core/telemetry/index.js';
import { vllmDump } from '../../../fixtures/vllm/dumps.js';
import { fakeGet, refused } from './fake-http.js';

// Dumps constructed to the documented wire shapes: test/fixtures/vllm/SOURCE.txt.
const V0 = vllmDump('vllm-0.8.x-v0-engine.txt');
const DP2 = vllmDump('vllm-0.12.x-dp2.txt');

const MODELS = JSON.stringify({
  object: 'list',
  data: [
    { id: 'qwen3-30b-a3b', object: 'model', root: '/models/Qwen3-30B-A3B', parent: null, max_model_len: 32768 },
    { id: 'lora-a', object: 'model', root: '/adapters/a', parent: 'qwen3-30b-a3b' },
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
  it('reads the V0 engine of 0.8: no engine label, old KV name, old ITL name', async () => {
    const { src } = source({ '/metrics': { status: 200, text: V0 }, '/health': { status: 200, text: '' } });
    const s = await service(src);
    expect(s).toMatchObject({ running: 2, waiting: 0, kvCacheUsage: 0.0875, generationTokensTotal: 31000, engineCount: 1, perEngine: null, health: 'ok', modelName: 'meta-llama/Llama-3.1-8B-Instruct' });
    expect(s.itl?.count).toBe(64 * 380);
    expect(s.sleepState).toBe('unknown');
  });

  it('reads 0.12 with two DP engines: counters summed, KV averaged, capacity summed, per-engine figures', async () => {
    const { src } = source({
      '/metrics': { status: 200, text: DP2 },
      '/health': { status: 200, text: '' },
      '/is_sleeping': { status: 200, text: '{"is_sleeping": false}' },
      '/version': { status: 200, text: '{"version":"0.12.0"}' },
      '/v1/models': { status: 200, text: MODELS },
    });
    const r = await src.scrape();
    expect(r.ok && r.unreadable).toBe(0);
    const s = await service(src);
    expect(s.running).toBe(11);
    expect(s.waiting).toBe(2);
    expect(s.kvCacheUsage).toBeCloseTo(0.5, 12);
    expect(s.generationTokensTotal).toBe(82000);
    expect(s.prefixCacheHits! / s.prefixCacheQueries!).toBe(0.368);
    expect(s.kvCapacityTokens).toBe(2 * 20000 * 16);
    expect(s.engineCount).toBe(2);
    expect(s.perEngine).toEqual([
      { engine: '0', running: 6, waiting: 2, kvCacheUsage: 0.4, generationTokensTotal: 42000 },
      { engine: '1', running: 5, waiting: 0, kvCacheUsage: 0.6, generationTokensTotal: 40000 },
    ]);
    expect(s.sleepState).toBe('awake');
    expect(s.version).toBe('0.12.0');
    expect(s.maxModelLen).toBe(32768);
    expect(s.requestsFinishedTotal).toBe(210);
    expect(s.ttft?.count).toBe(210);
    expect([s.specDraftTokensTotal, s.specAcceptedTokensTotal, s.promptTokensCachedTotal]).toEqual([null, null, null]);
  });

  it('spec-decode counters and cached prompt tokens reach the reading', async () => {
    const spec = await service(source({ '/metrics': { status: 200, text: vllmDump('vllm-0.12.x-spec-decode.txt') } }).src);
    expect([spec.specDraftTokensTotal, spec.specAcceptedTokensTotal]).toEqual([12000, 8100]);
    const newest = await service(source({ '/metrics': { status: 200, text: vllmDump('vllm-newest.txt') } }).src);
    expect(newest.promptTokensCachedTotal).toBe(150000);
    expect(newest.waiting).toBe(5);
  });

  it('falls back to /is_sleeping when the metric is absent, and stops asking after a 404 until facts refresh', async () => {
    const { src, get, clock } = source({ '/metrics': { status: 200, text: V0 }, '/health': { status: 200, text: '' } });
    await service(src);
    await service(src);
    expect(get.asked.filter((p) => p === '/is_sleeping')).toHaveLength(1);
    expect(get.asked.filter((p) => p === '/version')).toHaveLength(1);
    clock.advance(300_000);
    await service(src);
    expect(get.asked.filter((p) => p === '/is_sleeping')).toHaveLength(2);
    const { src: s2 } = source({ '/metrics': { status: 200, text: V0 }, '/is_sleeping': { status: 200, text: '{"is_sleeping": false}' } });
    const r = await service(s2);
    expect(r.sleepState).toBe('awake');
    expect(r.health).toBe('down'); // /health 404
  });

  it('no reading at all gives a coded stale reason naming the cause', async () => {
    const llamaServer = '# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.\n# TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total 42\n';
    const cases: [Parameters<typeof fakeGet>[0]['x'], string, string][] = [
      [refused(), 'TELEMETRY_SCRAPE_FAILED', 'ECONNREFUSED'],
      [{ status: 500, text: 'oops' }, 'TELEMETRY_HTTP_STATUS', 'HTTP 500'],
      [{ status: 200, text: '<!DOCTYPE html><html><body>Sign in</body></html>' }, 'TELEMETRY_NOT_METRICS', 'HTML'],
      [{ status: 200, text: 'this is {not metrics\nnor this ==\n' }, 'TELEMETRY_UNPARSEABLE', 'none of 2 lines'],
      [{ status: 200, text: '\u0000\u0007\u00ff garbage' }, 'TELEMETRY_UNPARSEABLE', 'ends mid-line'],
      [{ status: 200, text: llamaServer }, 'TELEMETRY_NOT_METRICS', 'no vllm: series'],
      [{ status: 200, text: '' }, 'TELEMETRY_NOT_METRICS', 'empty body'],
      [{ status: 200, text: DP2.slice(0, DP2.indexOf('vllm:num_requests_running{') + 20) }, 'TELEMETRY_UNPARSEABLE', 'cut before any vllm: series'],
    ];
    for (const [route, code, says] of cases) {
      const { src } = source({ '/metrics': route!, '/health': { status: 200, text: '' } });
      const r = await src.scrape();
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.stale.code).toBe(code);
        expect(r.stale.message).toContain(says);
      }
    }
  });

  it('a body cut mid-line: a partial reading, the figures of the cut family null, the cut counted', async () => {
    const hits1 = DP2.match(/^vllm:prefix_cache_hits_total\{engine="1",.*$/m)![0];
    const cut = DP2.slice(0, DP2.indexOf(hits1) + hits1.length - 4); // "16800.0" → "168"
    const { src } = source({ '/metrics': { status: 200, text: cut } });
    const r = await src.scrape();
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.unreadable).toBe(2); // the cut line and the family it was in
      expect(r.service!.prefixCacheHits).toBeNull();
      expect(r.service!.prefixCacheQueries).toBe(100000);
      expect(r.service!.running).toBe(11);
      expect(r.service!.ttft).toBeNull();
    }
  });

  it('an engine label missing on some series: those figures null, the series counted, the rest read', async () => {
    const text = DP2.replace(/^(vllm:kv_cache_usage_perc)\{engine="1",/m, '$1{').replace(/^(vllm:num_requests_waiting)\{engine="0",/m, '$1{');
    const { src } = source({ '/metrics': { status: 200, text } });
    const r = await src.scrape();
    expect(r.ok).toBe(true);
    if (r.ok) {
      const s = r.service!;
      expect(r.unreadable).toBe(2);
      expect([s.kvCacheUsage, s.waiting]).toEqual([null, null]);
      expect(s.perEngine?.map((e) => [e.kvCacheUsage, e.waiting])).toEqual([
        [0.4, null],
        [null, 0],
      ]);
      expect(s.running).toBe(11);
      expect(s.prefixCacheHits).toBe(36800);
      expect(s.engineCount).toBe(2);
    }
  });

  it('10 MB of text is cut at the cap: what came before is read, the cut counted', async () => {
    const filler = Array.from({ length: 200_000 }, (_, i) => `junk_metric_${i}{a="${'x'.repeat(20)}"} ${i}`).join('\n');
    const text = DP2 + filler;
    expect(text.length).toBeGreaterThan(10_000_000);
    const { src } = source({ '/metrics': { status: 200, text } });
    const r = await src.scrape();
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.service!.running).toBe(11);
      expect(r.service!.prefixCacheHits).toBe(36800);
      expect(r.unreadable).toBe(1);
    }
  });

  it('NaN gauges read as unknown', async () => {
    const { src } = source({ '/metrics': { status: 200, text: 'vllm:kv_cache_usage_perc{engine="0"} NaN\nvllm:num_requests_running{engine="0"} 1\n' } });
    const s = await service(src);
    expect(s.kvCacheUsage).toBeNull();
    expect(s.running).toBe(1);
  });
});

describe('/v1/models', () => {
  it('takes max_model_len from the base model, not a LoRA adapter', () => {
    const cards = parseVllmModels(MODELS);
    expect(cards).toEqual([
      { id: 'qwen3-30b-a3b', maxModelLen: 32768, isAdapter: false, root: '/models/Qwen3-30B-A3B' },
      { id: 'lora-a', maxModelLen: null, isAdapter: true, root: '/adapters/a' },
    ]);
    expect(vllmMaxModelLen(cards)).toBe(32768);
    // The base model's folder when root is a path; a hub id names no folder on the host.
    expect(vllmModelPath(cards)).toBe('/models/Qwen3-30B-A3B');
    expect(vllmModelPath([{ id: 'q', maxModelLen: 1, isAdapter: false, root: 'Qwen/Qwen3-30B-A3B' }])).toBeNull();
    expect(parseVllmModels('{"error":{"code":401}}')).toBeNull();
  });
});
