import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { OpenAiHealthSource, ServiceDeriver, TeiHttpSource, readTeiMetrics, type ServiceReading } from '../../../../src-main/core/telemetry/index.js';
import { parsePrometheusText } from '../../../../src-main/core/telemetry/prometheus.js';
import { fakeGet, refused } from './fake-http.js';

// TEI's /metrics as composed from its router and core crates (test/fixtures/tei/SOURCE.txt),
// and the health-only source of kind openai.
const METRICS = readFileSync(new URL('../../../fixtures/tei/metrics.txt', import.meta.url), 'utf8');
const INFO = JSON.stringify({ model_id: 'BAAI/bge-small-en-v1.5', model_dtype: 'float16', model_type: { embedding: { pooling: 'cls' } }, max_concurrent_requests: 512, max_input_length: 512, max_batch_tokens: 16384, max_client_batch_size: 32, auto_truncate: false, tokenization_workers: 4, version: '1.9.3' });

async function reading(src: { scrape(): Promise<import('../../../../src-main/core/telemetry/index.js').SourceReading> }): Promise<{ service: ServiceReading; issues: string[] }> {
  const r = await src.scrape();
  if (!r.ok) throw new Error(`stale: ${r.stale.code} ${r.stale.message}`);
  return { service: r.service!, issues: r.issues ?? [] };
}

describe('TEI metrics', () => {
  it('reads the fixture exactly: queue, finished requests with failures, input tokens, request latency', () => {
    const m = readTeiMetrics(parsePrometheusText(METRICS).families);
    expect(m).toMatchObject({ queued: 4, requestsFinishedTotal: 1238 + 6, requestFailuresTotal: 6, inputTokensTotal: 118372, issues: [] });
    expect(m.requestDuration).toMatchObject({ count: 1238, sum: 9.84217 });
    expect(m.requestDuration!.buckets).toHaveLength(36);
    expect(m.requestDuration!.buckets[0]!.le).toBe(0.000015000000000000002);
    expect(m.queueDuration).toMatchObject({ count: 1238, sum: 0.39112 });
  });

  it('no te_request_failure yet (TEI registers a counter at its first increment) means none failed', () => {
    const m = readTeiMetrics(parsePrometheusText(METRICS.replace(/# TYPE te_request_failure counter\nte_request_failure\{err="validation"\} 6\n/, '')).families);
    expect(m.requestsFinishedTotal).toBe(1238);
    expect(m.requestFailuresTotal).toBe(0);
  });

  it('maps onto readings an embedding server has: waiting, requests/s, input tokens/s, e2e; the rest unknown', async () => {
    const clock = new FakeClock();
    const src = new TeiHttpSource({ id: 'h/emb', clock, get: fakeGet({ '/metrics': { status: 200, text: METRICS }, '/health': { status: 200, text: '' }, '/info': { status: 200, text: INFO } }) });
    const { service: s, issues } = await reading(src);
    expect(s).toMatchObject({ kind: 'tei', health: 'ok', modelName: 'BAAI/bge-small-en-v1.5', version: '1.9.3', maxModelLen: 512, waiting: 4, running: null, kvCacheUsage: null, ttft: null, generationTokensTotal: null, promptTokensTotal: 118372 });
    expect(issues).toEqual([]);
    const d = new ServiceDeriver();
    d.push(s, 0);
    const later = METRICS.replace('te_request_success{method="single"} 1175', 'te_request_success{method="single"} 1195').replace('te_request_input_length_sum 118372', 'te_request_input_length_sum 120372');
    const src2 = new TeiHttpSource({ id: 'h/emb', clock, get: fakeGet({ '/metrics': { status: 200, text: later }, '/health': { status: 200, text: '' } }) });
    const f = d.push((await reading(src2)).service, 10_000);
    expect(f.requestsPerS).toBeCloseTo(2, 9);
    expect(f.promptTokPerS).toBeCloseTo(200, 9);
    expect(f.waiting).toBe(4);
    expect(f.genTokPerS).toBeNull();
    expect(f.kvCachePct).toBeNull();
  });

  it('a page without te_ families is a coded stale reading naming what it lacks', async () => {
    const src = new TeiHttpSource({ id: 'h/emb', clock: new FakeClock(), get: fakeGet({ '/metrics': { status: 200, text: '# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 3\n' } }) });
    const r = await src.scrape();
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.stale).toMatchObject({ code: 'TELEMETRY_NOT_METRICS', message: expect.stringMatching(/no te_ series/) });
  });
});

describe('OpenAiHealthSource (kind openai)', () => {
  it('any 2xx at the health path is up, with every engine figure unknown', async () => {
    const get = fakeGet({ '/healthz': { status: 204, text: '' } });
    const { service: s } = await reading(new OpenAiHealthSource({ id: 'h/gw', get, clock: new FakeClock(), healthPath: '/healthz' }));
    expect(get.asked).toEqual(['/healthz']);
    expect(s).toMatchObject({ kind: 'openai', health: 'ok', running: null, waiting: null, kvCacheUsage: null, generationTokensTotal: null, ttft: null, e2e: null });
  });

  it('another status is down with the status named; no answer at all is stale', async () => {
    const { service: s, issues } = await reading(new OpenAiHealthSource({ id: 'h/gw', get: fakeGet({}), clock: new FakeClock(), healthPath: '/v1/models' }));
    expect(s.health).toBe('down');
    expect(issues).toEqual(['TELEMETRY_HTTP_STATUS: GET /v1/models: HTTP 404']);
    const r = await new OpenAiHealthSource({ id: 'h/gw', get: fakeGet({ '/v1/models': refused() }), clock: new FakeClock(), healthPath: '/v1/models' }).scrape();
    expect(r.ok ? null : r.stale.code).toBe('TELEMETRY_SCRAPE_FAILED');
  });
});
