import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PrometheusClient, PrometheusErrorCode, fillMatchers, promqlString, regexLiteral } from '../../../../src-main/core/telemetry/index.js';
import { startFakePrometheus, vector, type FakePrometheus } from './fake-prometheus.js';
import { closeUrlClients, urlClient } from '../../../helpers/upstream.js';

// The Prometheus HTTP API client against a fake on 127.0.0.1: answers read
// leniently, every failure a coded AppError naming Prometheus; and the PromQL
// text helpers (string and regex escaping, matcher templates).

let prom: FakePrometheus;
const client = (over: { timeoutMs?: number; maxBytes?: number; url?: string } = {}) =>
  new PrometheusClient({ client: urlClient(over.url ?? prom.url), timeoutMs: over.timeoutMs ?? 2_000, maxBytes: over.maxBytes });

beforeAll(async () => {
  prom = await startFakePrometheus();
});
afterAll(async () => {
  await prom.close();
  await closeUrlClients();
});
beforeEach(() => {
  prom.requests.length = 0;
});

describe('PromQL text', () => {
  it('quotes strings with backslash, quote and control characters escaped', () => {
    expect(promqlString('a"b\\c\nd')).toBe('"a\\"b\\\\c\\nd"');
    expect(promqlString('plain')).toBe('"plain"');
  });

  it('escapes regex metacharacters', () => {
    expect(regexLiteral('gpu-a.example.com')).toBe('gpu-a\\.example\\.com');
    expect(regexLiteral('a+b(c)|[d]{2}^$*?\\')).toBe('a\\+b\\(c\\)\\|\\[d\\]\\{2\\}\\^\\$\\*\\?\\\\');
  });

  it('fills matcher templates: inside a string escaped for it, after =~ for a regex too, unquoted placeholders quoted', () => {
    expect(fillMatchers('host="{host}",service="{service}"', { host: 'gpu-a', service: 'qwen' })).toBe('host="gpu-a",service="qwen"');
    expect(fillMatchers('host="{host}"', { host: 'we"ird\\name' })).toBe('host="we\\"ird\\\\name"');
    expect(fillMatchers('instance=~"{host}:.*"', { host: 'gpu-a.lan' })).toBe('instance=~"gpu-a\\\\.lan:.*"');
    expect(fillMatchers('host={host},port!~{port}', { host: 'a"b', port: '8000' })).toBe('host="a\\"b",port!~"8000"');
    expect(fillMatchers('job="vllm",model_name="{model}"', { model: 'Qwen/Qwen3 (FP8)' })).toBe('job="vllm",model_name="Qwen/Qwen3 (FP8)"');
    // A value containing a quote does not throw off a later placeholder.
    expect(fillMatchers('a="{host}",b=~"{service}"', { host: 'x"y', service: 'q.w' })).toBe('a="x\\"y",b=~"q\\\\.w"');
    expect(fillMatchers('host="{host}",x="{unknown}"', { host: 'h' })).toBe('host="h",x="{unknown}"');
  });
});

describe('PrometheusClient', () => {
  it('runs an instant query with its own timeout and reads the vector', async () => {
    prom.answer = () =>
      vector([
        { metric: { __name__: 'up', job: 'vllm' }, value: [1_700_000_000.5, '1'] },
        { metric: { __name__: 'x' }, value: [1_700_000_000.5, 'NaN'] },
        { metric: { __name__: 'y' }, value: [1_700_000_000.5, '+Inf'] },
      ]);
    const r = await client().instant('up{job="vllm"}');
    expect(r.series).toEqual([
      { labels: { __name__: 'up', job: 'vllm' }, points: [{ tMs: 1_700_000_000_500, value: 1 }] },
      { labels: { __name__: 'x' }, points: [{ tMs: 1_700_000_000_500, value: Number.NaN }] },
      { labels: { __name__: 'y' }, points: [{ tMs: 1_700_000_000_500, value: Infinity }] },
    ]);
    const url = prom.requests[0]!;
    expect(url.pathname).toBe('/api/v1/query');
    expect(url.searchParams.get('query')).toBe('up{job="vllm"}');
    expect(url.searchParams.get('timeout')).toBe('2000ms');
    expect(url.searchParams.has('time')).toBe(false);
  });

  it('keeps a path prefix of the URL and runs range queries', async () => {
    prom.answer = () => ({
      kind: 'json',
      body: { status: 'success', data: { resultType: 'matrix', result: [{ metric: { __name__: 'up' }, values: [[10, '1'], [11, '0'], [12, 'bad']] }] } },
    });
    const r = await client({ url: `${prom.url}/prom/` }).range('up', { startMs: 10_000, endMs: 12_000, stepMs: 1_000 });
    expect(r.series[0]!.points).toEqual([{ tMs: 10_000, value: 1 }, { tMs: 11_000, value: 0 }]);
    expect(r.unreadable).toBe(1);
    const url = prom.requests[0]!;
    expect(url.pathname).toBe('/prom/api/v1/query_range');
    expect([url.searchParams.get('start'), url.searchParams.get('end'), url.searchParams.get('step')]).toEqual(['10.000', '12.000', '1.000']);
  });

  it('counts result items it cannot read (native histograms, bad shapes) and keeps the rest', async () => {
    prom.answer = () =>
      vector([
        { metric: { __name__: 'ok' }, value: [1, '2'] },
        { metric: { __name__: 'native' }, histogram: [1, { count: '2', sum: '3', buckets: [] }] } as never,
        { metric: 'nope', value: [1, '2'] } as never,
      ]);
    const r = await client().instant('x');
    expect(r.series.map((s) => s.labels['__name__'])).toEqual(['ok']);
    expect(r.unreadable).toBe(2);
  });

  it('status: error → TELEMETRY_PROMETHEUS_QUERY_ERROR with Prometheus\'s reason', async () => {
    prom.answer = () => ({ kind: 'json', status: 400, body: { status: 'error', errorType: 'bad_data', error: 'invalid parameter "query": 1:6: parse error: unexpected "}"' } });
    await expect(client().instant('up{}}')).rejects.toMatchObject({
      code: PrometheusErrorCode.QUERY_ERROR,
      message: expect.stringMatching(/refused the query \(bad_data\): invalid parameter "query": 1:6: parse error/),
      retryable: false,
    });
    prom.answer = () => ({ kind: 'json', status: 503, body: { status: 'error', errorType: 'timeout', error: 'query timed out in expression evaluation' } });
    await expect(client().instant('up')).rejects.toMatchObject({ code: PrometheusErrorCode.QUERY_ERROR, retryable: true });
  });

  it('a non-2xx answer that is not the API → TELEMETRY_HTTP_STATUS; an HTML page → TELEMETRY_NOT_METRICS', async () => {
    prom.answer = () => ({ kind: 'text', status: 502, contentType: 'text/html', body: '<html><body>502 Bad Gateway</body></html>' });
    await expect(client().instant('up')).rejects.toMatchObject({ code: 'TELEMETRY_HTTP_STATUS', message: expect.stringContaining('HTTP 502') });
    prom.answer = () => ({ kind: 'text', contentType: 'text/html', body: '<!doctype html><html><body>Sign in</body></html>' });
    await expect(client().instant('up')).rejects.toMatchObject({ code: 'TELEMETRY_NOT_METRICS' });
  });

  it('garbage: not JSON, or JSON of another shape → TELEMETRY_UNPARSEABLE with an excerpt', async () => {
    prom.answer = () => ({ kind: 'text', body: '{"status":"success","data":{"resultType":"vector","result":[{"met' });
    await expect(client().instant('up')).rejects.toMatchObject({ code: 'TELEMETRY_UNPARSEABLE', message: expect.stringContaining('is not JSON: {"status"') });
    prom.answer = () => ({ kind: 'json', body: { hello: 'world' } });
    await expect(client().instant('up')).rejects.toMatchObject({ code: 'TELEMETRY_UNPARSEABLE', message: expect.stringContaining('not a Prometheus query answer') });
    prom.answer = () => ({ kind: 'json', body: { status: 'success', data: { resultType: 'scalar', result: [1, '2'] } } });
    await expect(client().instant('1+1')).rejects.toMatchObject({ code: 'TELEMETRY_UNPARSEABLE', message: expect.stringContaining('scalar') });
  });

  it('a Prometheus that does not answer → TELEMETRY_SCRAPE_TIMEOUT at the deadline', async () => {
    prom.answer = () => ({ kind: 'stall' });
    const started = Date.now();
    await expect(client({ timeoutMs: 300 }).instant('up')).rejects.toMatchObject({
      code: 'TELEMETRY_SCRAPE_TIMEOUT',
      message: expect.stringContaining('did not answer within 300 ms'),
    });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a Prometheus that is down or resets → TELEMETRY_SCRAPE_FAILED naming it', async () => {
    await expect(client({ url: 'http://127.0.0.1:1' }).instant('up')).rejects.toMatchObject({
      code: 'TELEMETRY_SCRAPE_FAILED',
      message: expect.stringMatching(/^Prometheus at http:\/\/127\.0\.0\.1:1 is unreachable: .*ECONNREFUSED/),
    });
    prom.answer = () => ({ kind: 'reset' });
    await expect(client().instant('up')).rejects.toMatchObject({ code: 'TELEMETRY_SCRAPE_FAILED' });
  });

  it('an answer over the cap → TELEMETRY_BODY_TOO_LARGE', async () => {
    prom.answer = () => vector(Array.from({ length: 2_000 }, (_, i) => ({ metric: { __name__: `m${i}` }, value: [1, '1'] })));
    await expect(client({ maxBytes: 4_096 }).instant('x')).rejects.toMatchObject({ code: 'TELEMETRY_BODY_TOO_LARGE' });
  });

  it('a caller who aborts stops the query', async () => {
    prom.answer = () => ({ kind: 'stall' });
    const ac = new AbortController();
    const p = client({ timeoutMs: 10_000 }).instant('up', ac.signal);
    setTimeout(() => ac.abort(), 50);
    await expect(p).rejects.toMatchObject({ code: 'TELEMETRY_SCRAPE_FAILED', message: expect.stringContaining('was cancelled') });
  });
});
