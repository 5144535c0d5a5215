import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { HostView } from '../../../../src-preload/contract/index.js';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { ConfigSchema, type PrometheusSourceConfig, type ServiceConfig } from '../../../../src-main/core/config/index.js';
import {
  PrometheusApiSource,
  PrometheusErrorCode,
  mergePrometheusConfig,
  parsePrometheusText,
  readLlamaServerMetrics,
  readVllmMetrics,
  renderFleetExposition,
  serviceReadingFromLlama,
  serviceReadingFromVllm,
  type SourceReading,
} from '../../../../src-main/core/telemetry/index.js';
import { scrapedAt, seriesFromText, startFakePrometheus, up, vector, type FakePrometheus, type Series } from './fake-prometheus.js';
import { closeUrlClients, urlClient } from '../../../helpers/upstream.js';

// The Prometheus API source against a fake Prometheus on 127.0.0.1: the same
// figures as a direct scrape of the same exposition, the series picked by the
// configured matchers, and every kind of bad answer a coded stale reading.

const VLLM_TEXT = readFileSync(join(import.meta.dirname, '../../../fixtures/vllm/vllm-0.10.x.txt'), 'utf8');
const NOW_S = 1_700_000_100;
const clock = new FakeClock(NOW_S * 1000);
let prom: FakePrometheus;

const config = (over: Partial<PrometheusSourceConfig> = {}): PrometheusSourceConfig =>
  ConfigSchema.parse({ telemetry: { prometheus: { url: prom.url, timeoutMs: 1_000, ...over } } }).telemetry.prometheus!;

const qwen: ServiceConfig = ConfigSchema.parse({
  hosts: [
    {
      label: 'gpu-a',
      ssh: { host: '10.0.0.5', user: 'ops', agent: true },
      services: [
        { id: 'qwen', kind: 'vllm', remotePort: 8000, model: 'Qwen3-8B' },
        { id: 'llama', kind: 'llama-server', remotePort: 8080, model: 'gemma' },
      ],
    },
  ],
}).hosts[0]!.services[0]!;
const llama: ServiceConfig = { ...qwen, id: 'llama', kind: 'llama-server', remotePort: 8080, model: 'gemma' };

const serviceSource = (service: ServiceConfig = qwen, over: Partial<PrometheusSourceConfig> = {}, host = 'gpu-a') =>
  new PrometheusApiSource({ id: `${host}/${service.id}`, clock, client: urlClient(config(over).url), prometheus: config(over), host, target: { kind: 'service', service } });
const gpuSource = (over: Partial<PrometheusSourceConfig> = {}, host = 'gpu-a') =>
  new PrometheusApiSource({ id: `${host}/gpus`, clock, client: urlClient(config(over).url), prometheus: config(over), host, target: { kind: 'gpus' } });

const target = { host: 'gpu-a', service: 'qwen', job: 'vllm', instance: '10.0.0.5:8000' };
const direct = (text: string) => serviceReadingFromVllm(readVllmMetrics(parsePrometheusText(text).families));

function expectStale(r: SourceReading, code: string, message: RegExp | string): void {
  expect(r.ok).toBe(false);
  if (r.ok) return;
  expect(r.stale.code).toBe(code);
  expect(r.stale.message).toMatch(message);
  expect(r.atMs).toBe(clock.now());
}

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

describe('PrometheusApiSource: a vLLM service', () => {
  it('reads the same figures as a direct scrape of the same exposition, with health from up', async () => {
    prom.answer = () => vector([...seriesFromText(VLLM_TEXT, target, NOW_S), up(target, 1, NOW_S), scrapedAt(target, NOW_S - 0.4, NOW_S)]);
    const r = await serviceSource().scrape();
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.service).toEqual({ ...direct(VLLM_TEXT), health: 'ok' });
    expect(r.service!.ttft!.count).toBeGreaterThan(0);
    expect(r.service!.kvCapacityTokens).not.toBeNull();
    // When Prometheus scraped it, on our clock.
    expect(r.atMs).toBe(NOW_S * 1000 - 400);
    expect(r.unreadable).toBe(0);
  });

  it('asks one instant query: the vllm:* families (no _created) and up with the configured matchers, plus the scrape time', async () => {
    prom.answer = () => vector([]);
    const source = serviceSource(qwen, { serviceMatch: 'job="vllm",instance=~"{host}:{port}",model_name="{model}"' }, 'gpu-a.lan');
    await source.scrape();
    expect(prom.requests).toHaveLength(1);
    const q = prom.requests[0]!.searchParams.get('query')!;
    const m = 'job="vllm",instance=~"gpu-a\\\\.lan:8000",model_name="Qwen3-8B"';
    expect(q).toBe(`{__name__=~"up|vllm:.+",__name__!~".+_created",${m}} or label_replace(timestamp(up{${m}}), "gpu_console_part", "scraped_at", "", "")`);
    expect(source.query).toBe(q);
    expect(source.detail).toBe(`prometheus ${prom.url} {${m}}`);
  });

  it('escapes label values for PromQL', async () => {
    prom.answer = () => vector([]);
    await serviceSource(qwen, {}, 'we"ird\\host').scrape();
    expect(prom.requests[0]!.searchParams.get('query')).toContain('{host="we\\"ird\\\\host",service="qwen"}');
  });

  it('sums data-parallel engines and keeps the engine label', async () => {
    const text = `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="q"} 2.0
vllm:num_requests_running{engine="1",model_name="q"} 3.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="q"} 0.2
vllm:kv_cache_usage_perc{engine="1",model_name="q"} 0.6
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="q"} 100.0
vllm:generation_tokens_total{engine="1",model_name="q"} 50.0
`;
    prom.answer = () => vector([...seriesFromText(text, target, NOW_S), up(target, 1, NOW_S), scrapedAt(target, NOW_S, NOW_S)]);
    const r = await serviceSource().scrape();
    expect(r.ok && r.service).toMatchObject({ running: 5, kvCacheUsage: 0.4, generationTokensTotal: 150, engineCount: 2, modelName: 'q' });
    expect(r.ok && r.service).toEqual({ ...direct(text), health: 'ok' });
  });

  it('two targets matching (two jobs scraping one server): reads one healthy target, never the sum', async () => {
    const text = '# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine="0",model_name="q"} 2.0\n';
    const a = { ...target, job: 'vllm-b' };
    const b = { ...target, job: 'vllm-a' };
    const down = { ...target, job: 'vllm-0' };
    prom.answer = () =>
      vector([...seriesFromText(text, a, NOW_S), ...seriesFromText(text, b, NOW_S), up(a, 1, NOW_S), up(b, 1, NOW_S), up(down, 0, NOW_S), scrapedAt(b, NOW_S - 2, NOW_S), scrapedAt(a, NOW_S - 1, NOW_S)]);
    const r = await serviceSource().scrape();
    expect(r.ok && r.service!.running).toBe(2);
    expect(r.ok && r.atMs).toBe((NOW_S - 2) * 1000); // vllm-a sorts first
  });

  it('two scrapes of the same Prometheus sample carry the same atMs; the skew to Prometheus\'s clock is applied', async () => {
    const skewed = new FakeClock(NOW_S * 1000 + 5_000);
    const source = new PrometheusApiSource({ id: 'gpu-a/qwen', clock: skewed, client: urlClient(config().url), prometheus: config(), host: 'gpu-a', target: { kind: 'service', service: qwen } });
    let evalS = NOW_S;
    prom.answer = () => vector([...seriesFromText(VLLM_TEXT, target, evalS), up(target, 1, evalS), scrapedAt(target, NOW_S - 1, evalS)]);
    const first = await source.scrape();
    skewed.advance(300);
    evalS = NOW_S + 0.3;
    const second = await source.scrape();
    expect(first.ok && second.ok).toBe(true);
    expect(first.atMs).toBe((NOW_S - 1) * 1000 + 5_000);
    expect(second.atMs).toBe(first.atMs);
  });

  it('a llama-server: the llamacpp:* families through the same reader', async () => {
    const text = `# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 1200
# TYPE llamacpp:tokens_predicted_total counter
llamacpp:tokens_predicted_total 340
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 2
# TYPE llamacpp:requests_deferred gauge
llamacpp:requests_deferred 1
`;
    const t = { ...target, service: 'llama', job: 'llama' };
    prom.answer = () => vector([...seriesFromText(text, t, NOW_S), up(t, 1, NOW_S), scrapedAt(t, NOW_S, NOW_S)]);
    const r = await serviceSource(llama).scrape();
    expect(r.ok && r.service).toEqual({ ...serviceReadingFromLlama(readLlamaServerMetrics(parsePrometheusText(text).families)), health: 'ok' });
    expect(r.ok && r.service).toMatchObject({ running: 2, waiting: 1, promptTokensTotal: 1200, generationTokensTotal: 340 });
    expect(prom.requests[0]!.searchParams.get('query')).toContain('{__name__=~"up|llamacpp:.+"');
  });

  it('series without an up (labels added by metric relabelling): read, health unknown', async () => {
    prom.answer = () => vector(seriesFromText('# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name="q"} 4\n', target, NOW_S));
    const r = await serviceSource().scrape();
    expect(r.ok && r.service).toMatchObject({ waiting: 4, health: 'unknown' });
    expect(r.atMs).toBe(NOW_S * 1000);
  });
});

describe('PrometheusApiSource: bad input is a coded stale reading, and the next good answer reads again', () => {
  const good = () => vector([...seriesFromText(VLLM_TEXT, target, NOW_S), up(target, 1, NOW_S), scrapedAt(target, NOW_S, NOW_S)]);

  it('the target is down (up = 0) → TELEMETRY_PROMETHEUS_TARGET_DOWN naming it', async () => {
    prom.answer = () => vector([up(target, 0, NOW_S), scrapedAt(target, NOW_S, NOW_S)]);
    expectStale(await serviceSource().scrape(), PrometheusErrorCode.TARGET_DOWN, 'Prometheus cannot scrape vllm/10.0.0.5:8000 (up = 0)');
  });

  it('an empty result → TELEMETRY_PROMETHEUS_NO_DATA naming the matchers', async () => {
    prom.answer = () => vector([]);
    expectStale(await serviceSource().scrape(), PrometheusErrorCode.NO_DATA, `has no series matching {host="gpu-a",service="qwen"}`);
  });

  it('up = 1 but no vllm:* series (the matchers point at another exporter) → TELEMETRY_PROMETHEUS_NO_DATA', async () => {
    prom.answer = () => vector([up(target, 1, NOW_S), scrapedAt(target, NOW_S, NOW_S)]);
    expectStale(await serviceSource().scrape(), PrometheusErrorCode.NO_DATA, 'scrapes vllm/10.0.0.5:8000 (up = 1) but it has no vllm:* series');
  });

  it('samples older than staleAfterMs → TELEMETRY_PROMETHEUS_STALE saying how old', async () => {
    prom.answer = () => vector([...seriesFromText(VLLM_TEXT, target, NOW_S), up(target, 1, NOW_S), scrapedAt(target, NOW_S - 95, NOW_S)]);
    expectStale(await serviceSource(qwen, { staleAfterMs: 60_000 }).scrape(), PrometheusErrorCode.STALE, 'last scraped vllm/10.0.0.5:8000 95 s ago (more than 60 s)');
  });

  it('Prometheus down, slow, an error answer, garbage: each its code; nothing else stops', async () => {
    const down = new PrometheusApiSource({ id: 'gpu-a/qwen', clock, client: urlClient('http://127.0.0.1:1'), prometheus: { ...config(), url: 'http://127.0.0.1:1' }, host: 'gpu-a', target: { kind: 'service', service: qwen } });
    expectStale(await down.scrape(), 'TELEMETRY_SCRAPE_FAILED', /^Prometheus at http:\/\/127\.0\.0\.1:1 is unreachable/);

    const source = serviceSource(qwen, { timeoutMs: 200 });
    prom.answer = () => ({ kind: 'stall' });
    expectStale(await source.scrape(), 'TELEMETRY_SCRAPE_TIMEOUT', 'did not answer within 200 ms');
    prom.answer = () => ({ kind: 'json', status: 422, body: { status: 'error', errorType: 'execution', error: 'many-to-many matching not allowed' } });
    expectStale(await source.scrape(), PrometheusErrorCode.QUERY_ERROR, 'refused the query (execution): many-to-many matching not allowed');
    prom.answer = () => ({ kind: 'text', body: 'garbage \u0000\u0001 not json' });
    expectStale(await source.scrape(), 'TELEMETRY_UNPARSEABLE', 'is not JSON: garbage ?? not json');
    prom.answer = () => ({ kind: 'text', status: 500, body: 'internal error' });
    expectStale(await source.scrape(), 'TELEMETRY_HTTP_STATUS', 'answered HTTP 500');

    prom.answer = good;
    const r = await source.scrape();
    expect(r.ok && r.service!.health).toBe('ok');
  });
});

describe('PrometheusApiSource: GPUs', () => {
  const dcgm = (gpu: string, extra: Record<string, string> = {}) => ({
    gpu,
    UUID: `GPU-0000000${gpu}`,
    device: `nvidia${gpu}`,
    modelName: 'NVIDIA H100 80GB HBM3',
    Hostname: 'gpu-a',
    host: 'gpu-a',
    job: 'dcgm',
    instance: '10.0.0.5:9400',
    ...extra,
  });
  const s = (name: string, labels: Record<string, string>, value: number): Series => ({ metric: { __name__: name, ...labels }, value: [NOW_S, String(value)] });

  it('reads DCGM exporter series: memory (total = used + free + reserved), utilisation, power, temperature, name, UUID', async () => {
    prom.answer = () =>
      vector([
        ...['0', '1'].flatMap((g, i) => [
          s('DCGM_FI_DEV_FB_USED', dcgm(g), 19818 + i),
          s('DCGM_FI_DEV_FB_FREE', dcgm(g), 61108),
          s('DCGM_FI_DEV_FB_RESERVED', dcgm(g), 633),
          s('DCGM_FI_DEV_GPU_UTIL', dcgm(g), 100),
          s('DCGM_FI_DEV_POWER_USAGE', dcgm(g), 631.95),
          s('DCGM_FI_DEV_GPU_TEMP', dcgm(g), 59),
        ]),
        { metric: { gpu_console_part: 'scraped_at', ...dcgm('0') }, value: [NOW_S, String(NOW_S - 3)] },
      ]);
    const r = await gpuSource().scrape();
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.gpus).toEqual([
      {
        index: 0,
        uuid: 'GPU-00000000',
        name: 'NVIDIA H100 80GB HBM3',
        vendor: 'nvidia',
        memoryUsedMiB: 19818,
        memoryTotalMiB: 19818 + 61108 + 633,
        utilizationPct: 100,
        powerW: 631.95,
        powerLimitW: null,
        temperatureC: 59,
        migEnabled: false,
        processes: null,
      },
      expect.objectContaining({ index: 1, memoryUsedMiB: 19819, uuid: 'GPU-00000001' }),
    ]);
    expect(r.atMs).toBe((NOW_S - 3) * 1000);
    const q = prom.requests[0]!.searchParams.get('query')!;
    expect(q).toContain('DCGM_FI_DEV_FB_USED|DCGM_FI_DEV_FB_FREE');
    expect(q).toContain('gpu_console_gpu_memory_used_bytes');
    expect(q).toContain('label_replace(up{host="gpu-a"} == 0, "gpu_console_part", "down", "", "")');
  });

  it('the GPU index label is configurable (gpuLabel), and series without it are counted unreadable', async () => {
    prom.answer = () =>
      vector([s('DCGM_FI_DEV_FB_USED', { minor: '3', host: 'gpu-a' }, 100), s('DCGM_FI_DEV_FB_USED', { host: 'gpu-a' }, 5), s('DCGM_FI_DEV_GPU_TEMP', { minor: 'x', host: 'gpu-a' }, 40)]);
    const r = await gpuSource({ gpuLabel: 'minor' }).scrape();
    expect(r.ok && r.gpus!.map((g) => [g.index, g.memoryUsedMiB, g.name])).toEqual([[3, 100, 'GPU 3']]);
    expect(r.ok && r.unreadable).toBe(2);
    prom.answer = () => vector([s('DCGM_FI_DEV_FB_USED', { host: 'gpu-a' }, 5)]);
    expectStale(await gpuSource({ gpuLabel: 'minor' }).scrape(), 'TELEMETRY_UNPARSEABLE', 'carry no GPU index in label "minor"');
  });

  it('MIG: memory adds up over the GPU instances, utilisation is left unknown', async () => {
    prom.answer = () =>
      vector([
        s('DCGM_FI_DEV_FB_USED', dcgm('0', { GPU_I_ID: '1', GPU_I_PROFILE: '3g.40gb' }), 1000),
        s('DCGM_FI_DEV_FB_USED', dcgm('0', { GPU_I_ID: '2', GPU_I_PROFILE: '3g.40gb' }), 3000),
        s('DCGM_FI_DEV_FB_FREE', dcgm('0', { GPU_I_ID: '1', GPU_I_PROFILE: '3g.40gb' }), 39000),
        s('DCGM_FI_DEV_FB_FREE', dcgm('0', { GPU_I_ID: '2', GPU_I_PROFILE: '3g.40gb' }), 37000),
        s('DCGM_FI_DEV_GPU_UTIL', dcgm('0', { GPU_I_ID: '1' }), 50),
        s('DCGM_FI_DEV_GPU_TEMP', dcgm('0', { GPU_I_ID: '1' }), 44),
      ]);
    const r = await gpuSource().scrape();
    expect(r.ok && r.gpus![0]).toMatchObject({ memoryUsedMiB: 4000, memoryTotalMiB: 80000, utilizationPct: null, temperatureC: 44, migEnabled: true });
  });

  it('reads the console\'s own exported GPU series back (console → Prometheus → console)', async () => {
    const host: HostView = {
      label: 'gpu-a',
      address: 'ops@10.0.0.5:22',
      state: 'connected',
      lastError: null,
      nextRetryAt: null,
      hostKeyFingerprint: null,
      gpuModel: 'L40S',
      pricePerHourUsd: null,
      gpus: [
        { index: 0, uuid: null, name: 'NVIDIA L40S', memoryUsedMiB: 30000, memoryTotalMiB: 46068, utilizationPct: 87, powerW: 250.5, powerLimitW: 350, temperatureC: 61 },
        { index: 1, uuid: null, name: 'NVIDIA L40S', memoryUsedMiB: 512, memoryTotalMiB: 46068, utilizationPct: null, powerW: null, powerLimitW: null, temperatureC: 30 },
      ],
      gpuStale: false,
      gpuStaleReason: null,
      gpuVendor: 'nvidia',
      services: [],
      updatedAt: null,
    };
    const text = renderFleetExposition({ at: 0, hosts: [host] });
    prom.answer = () => vector(seriesFromText(text, { job: 'console', instance: '127.0.0.1:4000' }, NOW_S));
    const r = await gpuSource().scrape();
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.gpus).toEqual(
      host.gpus.map((g) => ({ ...g, vendor: 'nvidia', migEnabled: null, processes: null })),
    );
  });

  it('DCGM series win over the console\'s own for the same host', async () => {
    prom.answer = () =>
      vector([s('DCGM_FI_DEV_FB_USED', dcgm('0'), 1), s('gpu_console_gpu_memory_used_bytes', { host: 'gpu-a', gpu: '0', name: 'x' }, 2 * 1024 * 1024)]);
    const r = await gpuSource().scrape();
    expect(r.ok && r.gpus!.map((g) => g.memoryUsedMiB)).toEqual([1]);
  });

  it('no GPU series: the exporter is down (up = 0) → TARGET_DOWN; nothing at all → NO_DATA', async () => {
    prom.answer = () => vector([{ metric: { __name__: 'up', gpu_console_part: 'down', host: 'gpu-a', job: 'dcgm', instance: '10.0.0.5:9400' }, value: [NOW_S, '0'] }]);
    expectStale(await gpuSource().scrape(), PrometheusErrorCode.TARGET_DOWN, 'Prometheus cannot scrape dcgm/10.0.0.5:9400 (up = 0)');
    prom.answer = () => vector([]);
    expectStale(await gpuSource().scrape(), PrometheusErrorCode.NO_DATA, 'no GPU series (DCGM_FI_DEV_*, gpu_console_gpu_*) matching {host="gpu-a"}');
  });

  it('GPU samples older than staleAfterMs → TELEMETRY_PROMETHEUS_STALE', async () => {
    prom.answer = () => vector([s('DCGM_FI_DEV_FB_USED', dcgm('0'), 1), { metric: { gpu_console_part: 'scraped_at', ...dcgm('0') }, value: [NOW_S, String(NOW_S - 200)] }]);
    expectStale(await gpuSource().scrape(), PrometheusErrorCode.STALE, 'last scraped these series 200 s ago (more than 120 s)');
  });
});

describe('PrometheusApiSource.backfill', () => {
  it('one range query over the window; one reading per Prometheus scrape, oldest first', async () => {
    const steps = [NOW_S - 20, NOW_S - 15, NOW_S - 10, NOW_S - 5, NOW_S];
    const scrapes = [NOW_S - 21, NOW_S - 16, NOW_S - 16, NOW_S - 6, NOW_S - 1]; // one scrape seen by two steps
    prom.answer = () => ({
      kind: 'json',
      body: {
        status: 'success',
        data: {
          resultType: 'matrix',
          result: [
            { metric: { __name__: 'vllm:generation_tokens_total', engine: '0', model_name: 'q', ...target }, values: steps.map((t, i) => [t, String(i * 100)]) },
            { metric: { __name__: 'up', ...target }, values: steps.map((t) => [t, '1']) },
            { metric: { gpu_console_part: 'scraped_at', ...target }, values: steps.map((t, i) => [t, String(scrapes[i])]) },
          ],
        },
      },
    });
    const source = serviceSource();
    const readings = await source.backfill({ windowMs: 20_000, stepMs: 5_000 });
    expect(readings.map((r) => r.atMs)).toEqual([NOW_S - 21, NOW_S - 16, NOW_S - 6, NOW_S - 1].map((t) => t * 1000));
    expect(readings.map((r) => (r.ok ? r.service!.generationTokensTotal : null))).toEqual([0, 100, 300, 400]);
    const url = prom.requests[0]!;
    expect(url.pathname).toBe('/api/v1/query_range');
    expect(url.searchParams.get('query')).toBe(source.query);
    expect(url.searchParams.get('step')).toBe('5.000');
  });

  it('bounds the steps and answers [] when Prometheus fails', async () => {
    prom.answer = () => ({ kind: 'text', status: 500, body: 'no' });
    await expect(serviceSource().backfill({ windowMs: 3_600_000, stepMs: 1_000 })).resolves.toEqual([]);
    expect(prom.requests[0]!.searchParams.get('step')).toBe('15.000'); // 1 h / 240 steps
  });
});

describe('mergePrometheusConfig', () => {
  const fleet = () => ConfigSchema.parse({ telemetry: { source: 'prometheus', prometheus: { url: 'http://prom:9090', timeoutMs: 10_000, gpuLabel: 'minor' } } }).telemetry.prometheus;
  const hostOverride = (prometheus: object) =>
    ConfigSchema.parse({ hosts: [{ label: 'h', ssh: { host: 'h', user: 'u', agent: true }, telemetry: { prometheus } }] }).hosts[0]!.telemetry!.prometheus;

  it('a host override replaces only the fields it names (the fleet-wide timeoutMs survives)', () => {
    expect(mergePrometheusConfig(fleet(), hostOverride({ hostMatch: 'Hostname="{host}"' }))).toEqual({
      url: 'http://prom:9090',
      timeoutMs: 10_000,
      staleAfterMs: 120_000,
      hostMatch: 'Hostname="{host}"',
      serviceMatch: 'host="{host}",service="{service}"',
      gpuLabel: 'minor',
    });
  });

  it('a host with its own URL and no fleet-wide block gets the defaults; no URL anywhere → null', () => {
    expect(mergePrometheusConfig(undefined, hostOverride({ url: 'http://other:9090' }))).toMatchObject({ url: 'http://other:9090', timeoutMs: 3_000, gpuLabel: 'gpu' });
    expect(mergePrometheusConfig(undefined, hostOverride({ hostMatch: 'a="b"' }))).toBeNull();
    expect(mergePrometheusConfig(fleet(), undefined)).toEqual(fleet());
  });
});
