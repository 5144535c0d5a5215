import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetSnapshot } from '../../../src-preload/contract/index.js';
import { systemClock } from '../../../src-main/core/base/index.js';
import { ConfigSchema, type PrometheusSourceConfig, type ServiceConfig } from '../../../src-main/core/config/index.js';
import { startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';
import { FleetService } from '../../../src-main/core/fleet/index.js';
import {
  PrometheusApiSource,
  PrometheusClient,
  PrometheusErrorCode,
  renderFleetExposition,
  scrapeLlamaServerMetrics,
  scrapeVllmMetrics,
  serviceReadingFromLlama,
  serviceReadingFromVllm,
  serviceReadingFromFamilies,
  type ServiceReading,
  type SourceReading,
} from '../../../src-main/core/telemetry/index.js';
import { parsePrometheusText } from '../../../src-main/core/telemetry/prometheus.js';
import { waitForTick } from '../fleet/helpers/wait.js';
import { freePort, startPrometheus, which, type PromTarget, type RunningPrometheus } from './prometheus-harness.js';
import { until } from '../../helpers/until.js';
import { closeUrlClients, urlClient } from '../../helpers/upstream.js';

// The Prometheus API source against the REAL Prometheus (Debian's package),
// on 127.0.0.1 only: it scrapes the demo fleet's services through the
// console's tunnels (their local ports), the console's own fleet exposition
// (GPUs: console → Prometheus → console) and a DCGM-shaped exporter; the
// source's readings must equal what a direct scrape reads.

const prometheusVersion = which('prometheus');
if (prometheusVersion === null) console.warn('prometheus-source: no `prometheus` binary (apt-get install prometheus); skipping the real-Prometheus tests');

const DCGM_TEXT = `# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).
# TYPE DCGM_FI_DEV_FB_USED gauge
DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-aaaa",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7"} 19818
DCGM_FI_DEV_FB_USED{gpu="1",UUID="GPU-bbbb",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7"} 512
# HELP DCGM_FI_DEV_FB_FREE Framebuffer memory free (in MiB).
# TYPE DCGM_FI_DEV_FB_FREE gauge
DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-aaaa",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7"} 61108
DCGM_FI_DEV_FB_FREE{gpu="1",UUID="GPU-bbbb",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7"} 80414
# HELP DCGM_FI_DEV_FB_RESERVED Framebuffer memory reserved (in MiB).
# TYPE DCGM_FI_DEV_FB_RESERVED gauge
DCGM_FI_DEV_FB_RESERVED{gpu="0",UUID="GPU-aaaa",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7"} 633
DCGM_FI_DEV_FB_RESERVED{gpu="1",UUID="GPU-bbbb",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7"} 633
# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-aaaa",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7"} 100
DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-bbbb",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7"} 0
# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).
# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-aaaa",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7"} 631.95
DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="GPU-bbbb",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7"} 71.2
# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).
# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-aaaa",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7"} 59
DCGM_FI_DEV_GPU_TEMP{gpu="1",UUID="GPU-bbbb",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7"} 31
`;

let dir: string;
let demo: DemoFleet;
let fleet: FleetService;
let prom: RunningPrometheus;
const servers: Server[] = [];
const agent = new Agent({ connections: 8 });
let services: { host: string; service: ServiceConfig; url: string }[] = [];
let promConfig: PrometheusSourceConfig;

async function serve(handler: () => string): Promise<number> {
  const server = createServer((_req, res) => {
    const text = handler();
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return (server.address() as AddressInfo).port;
}

const allUp = (s: FleetSnapshot) =>
  s.hosts.length > 0 && s.hosts.every((h) => h.state === 'connected' && h.services.every((v) => v.tunnel.state === 'up'));

/** Reads until `done` accepts a reading and returns it; a timeout shows the last reading and Prometheus's log. */
async function readUntil<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  let last: T | undefined;
  const seen = () => `${what}; last ${JSON.stringify(last).slice(0, 2000)}\nprometheus log: ${prom?.log().slice(-2000)}`;
  await until(async () => done((last = await read())), { timeoutMs, intervalMs: 200, what: seen });
  return last as T;
}

const source = (host: string, target: ConstructorParameters<typeof PrometheusApiSource>[0]['target'], over: Partial<PrometheusSourceConfig> = {}) =>
  new PrometheusApiSource({ id: `${host}/${target.kind === 'gpus' ? 'gpus' : target.service.id}`, clock: systemClock, client: urlClient({ ...promConfig, ...over }.url), prometheus: { ...promConfig, ...over }, host, target });

async function directReading(s: { service: ServiceConfig; url: string }): Promise<ServiceReading> {
  if (s.service.kind === 'vllm') return { ...serviceReadingFromVllm((await scrapeVllmMetrics(urlClient(s.url))).metrics), health: 'ok' };
  if (s.service.kind === 'llama-server') return { ...serviceReadingFromLlama((await scrapeLlamaServerMetrics(urlClient(s.url))).metrics), health: 'ok' };
  // SGLang and TEI: the same families, read by the same function the Prometheus source uses.
  const res = await urlClient(s.url).request({ path: '/metrics', deadlineMs: 3_000, maxBodyBytes: 8 * 1024 * 1024 });
  return { ...serviceReadingFromFamilies(s.service.kind, parsePrometheusText(res.text).families), health: 'ok' };
}

describe.skipIf(prometheusVersion === null)(`PrometheusApiSource against a real Prometheus (${prometheusVersion ?? 'absent'})`, () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gc-prom-'));
    demo = await startDemoFleet({ dir: join(dir, 'demo'), timeScale: 1000, decodeSpeedFactor: 20 });
    const config = ConfigSchema.parse(demo.config);
    fleet = new FleetService({ config, pollIntervalMs: 250 });
    fleet.start();
    await waitForTick(fleet, allUp, 20_000);
    // Prometheus scrapes the tunnels' public ports (GET /metrics passes the gate), as a fleet's own Prometheus would.
    const localUrl = (label: string, id: string) => fleet.snapshot().hosts.find((h) => h.label === label)!.services.find((v) => v.id === id)!.tunnel.localUrl!;
    services = config.hosts.flatMap((h) => h.services.map((service) => ({ host: h.label, service, url: localUrl(h.label, service.id) })));

    const consolePort = await serve(() => renderFleetExposition(fleet.snapshot()));
    const dcgmPort = await serve(() => DCGM_TEXT);
    const deadPort = await freePort();
    const targets: PromTarget[] = [
      ...services.map((s) => ({ job: 'models', target: new URL(s.url).host, labels: { host: s.host, service: s.service.id } })),
      // No `host` label on the console's own target: its series carry their own.
      { job: 'console', target: `127.0.0.1:${consolePort}` },
      { job: 'dcgm', target: `127.0.0.1:${dcgmPort}`, labels: { cluster: 'lab' } },
      { job: 'models', target: `127.0.0.1:${deadPort}`, labels: { host: 'l20-poc', service: 'dead' } },
    ];
    const started = Date.now();
    prom = await startPrometheus(join(dir, 'prom'), targets);
    promConfig = ConfigSchema.parse({ telemetry: { prometheus: { url: prom.url, timeoutMs: 3_000 } } }).telemetry.prometheus!;
    // Wait until every target has been scraped once (its `up` exists).
    const client = new PrometheusClient({ client: urlClient(prom.url), timeoutMs: 3_000 });
    await readUntil(
      'every target scraped',
      async () => (await client.instant('up')).series.length,
      (n) => n === targets.length,
    );
    console.info(`prometheus-source: ${prometheusVersion} ready and all ${targets.length} targets scraped ${Date.now() - started} ms after start`);
  }, 90_000);

  afterAll(async () => {
    await prom?.stop();
    for (const s of servers) await new Promise<void>((resolve) => s.close(() => resolve()));
    await fleet?.dispose();
    await demo?.dispose();
    await agent.close();
    await closeUrlClients();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('every demo service: the readings through Prometheus equal a direct scrape of its tunnel', async () => {
    // Some work first, so counters and histograms are not all zero.
    const chat = services.find((s) => s.service.id === 'qwen') ?? services[0]!;
    for (let i = 0; i < 3; i++) {
      const res = await request(`${chat.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: chat.service.model, max_tokens: 16, messages: [{ role: 'user', content: `note ${i}` }] }),
        dispatcher: agent,
      });
      await res.body.dump();
      expect(res.statusCode).toBe(200);
    }
    for (const s of services) {
      const src = source(s.host, { kind: 'service', service: s.service });
      let lastProm: SourceReading | null = null;
      let lastDirect: ServiceReading | null = null;
      const started = Date.now();
      // Prometheus scrapes every second: wait until it has seen what the direct scrape sees.
      await readUntil(
        `${s.host}/${s.service.id} through Prometheus equals the direct scrape`,
        async () => {
          [lastProm, lastDirect] = await Promise.all([src.scrape(), directReading(s)]);
          return { prom: lastProm, direct: lastDirect };
        },
        (v) => v.prom.ok && JSON.stringify(v.prom.service) === JSON.stringify(v.direct),
      );
      const r = lastProm!;
      expect(r.ok).toBe(true);
      if (!r.ok) continue;
      expect(r.service).toEqual(lastDirect);
      expect(Math.abs(r.atMs - Date.now())).toBeLessThan(3_000);
      console.info(
        `prometheus-source: ${s.host}/${s.service.id} equal after ${Date.now() - started} ms (gen tokens ${r.service!.generationTokensTotal}, ttft count ${r.service!.ttft?.count ?? '—'}, KV ${r.service!.kvCacheUsage})`,
      );
    }
    const qwen = services.find((s) => s.service.id === 'qwen');
    if (qwen) {
      const r = await source(qwen.host, { kind: 'service', service: qwen.service }).scrape();
      expect(r.ok && r.service!.generationTokensTotal).toBeGreaterThan(0);
      expect(r.ok && r.service!.ttft!.count).toBeGreaterThanOrEqual(3);
    }
  });

  it('GPUs: the console\'s own exported series read back through Prometheus match the fleet\'s view', async () => {
    // Prometheus scraped the exposition at some moment of the last seconds: its live figures equal those of
    // one of the fleet's recent views (power jumps by ~200 W when decoding starts, so "close to now" is not a test).
    const recent: FleetSnapshot[] = [fleet.snapshot()];
    const sub = fleet.onDidTick((t) => recent.push(t));
    try {
      // Prometheus's newest sample is up to one scrape interval (plus its lag) old: keep that much history first.
      await new Promise((r) => setTimeout(r, 3_000));
      const withGpus = await waitForTick(fleet, (t) => t.hosts.some((h) => h.gpus.length > 0 && !h.gpuStale));
      let compared = 0;
      for (const h of withGpus.hosts.filter((x) => x.gpus.length > 0 && !x.gpuStale)) {
        const src = source(h.label, { kind: 'gpus' });
        const r = await readUntil(`${h.label} GPUs through Prometheus`, () => src.scrape(), (x) => x.ok && x.gpus!.length === h.gpus.length);
        if (!r.ok) continue;
        await waitForTick(fleet, () => true);
        const views = recent.slice(-60).flatMap((t) => t.hosts.filter((x) => x.label === h.label && !x.gpuStale));
        for (const g of views.at(-1)!.gpus) {
          const p = r.gpus!.find((x) => x.index === g.index)!;
          expect(p).toMatchObject({ name: g.name, memoryTotalMiB: g.memoryTotalMiB, vendor: g.vendor ?? h.gpuVendor ?? 'nvidia' });
          if (g.gttTotalMiB != null) expect(p.gttTotalMiB).toBe(g.gttTotalMiB);
          if (g.powerLimitW !== null) expect(p.powerLimitW).toBe(g.powerLimitW);
          const same = views
            .map((v) => v.gpus.find((x) => x.index === g.index)!)
            .some(
              (v) =>
                Math.abs(p.memoryUsedMiB! - v.memoryUsedMiB!) <= 1 &&
                (v.powerW === null || Math.abs(p.powerW! - v.powerW) <= 0.01) &&
                (v.temperatureC === null || Math.abs(p.temperatureC! - v.temperatureC) <= 0.01),
            );
          expect(same, `${h.label} GPU ${g.index}: ${JSON.stringify(p)} is none of the last ${views.length} views`).toBe(true);
          compared++;
        }
      }
      expect(compared).toBeGreaterThan(0);
      console.info(`prometheus-source: ${compared} GPUs read back through Prometheus from the console's own /metrics series`);
    } finally {
      void sub.dispose();
    }
  });

  it('GPUs: DCGM exporter series through Prometheus, host picked by a mapped label (Hostname)', async () => {
    const src = source('node-7', { kind: 'gpus' }, { hostMatch: 'job="dcgm",Hostname="{host}"' });
    const r = await readUntil('DCGM GPUs', () => src.scrape(), (x) => x.ok);
    expect(r.ok && r.gpus).toEqual([
      {
        index: 0,
        uuid: 'GPU-aaaa',
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
      { index: 1, uuid: 'GPU-bbbb', name: 'NVIDIA H100 80GB HBM3', vendor: 'nvidia', memoryUsedMiB: 512, memoryTotalMiB: 512 + 80414 + 633, utilizationPct: 0, powerW: 71.2, powerLimitW: null, temperatureC: 31, migEnabled: false, processes: null },
    ]);
  });

  it('backfill: one range query gives the readings Prometheus holds, one per scrape, oldest first', async () => {
    const s = services[0]!;
    const readings = await source(s.host, { kind: 'service', service: s.service }).backfill({ windowMs: 8_000, stepMs: 1_000 });
    expect(readings.length).toBeGreaterThanOrEqual(2);
    expect(readings.every((r) => r.ok && r.service!.health === 'ok')).toBe(true);
    for (let i = 1; i < readings.length; i++) expect(readings[i]!.atMs).toBeGreaterThan(readings[i - 1]!.atMs);
    console.info(`prometheus-source: backfill of 8 s at 1 s steps gave ${readings.length} readings`);
  });

  it('bad input from a real Prometheus: a target it cannot scrape, no matching series, a bad matcher — each a coded stale reading', async () => {
    const base = services[0]!;
    const dead = source('l20-poc', { kind: 'service', service: { ...base.service, id: 'dead' } });
    const down = await readUntil('dead target has up = 0', () => dead.scrape(), (x) => !x.ok && x.stale.code === PrometheusErrorCode.TARGET_DOWN);
    expect(!down.ok && down.stale.message).toMatch(/Prometheus cannot scrape models\/127\.0\.0\.1:\d+ \(up = 0\)/);

    const none = await source('l20-poc', { kind: 'service', service: { ...base.service, id: 'nope' } }).scrape();
    expect(!none.ok && none.stale).toMatchObject({ code: PrometheusErrorCode.NO_DATA, message: expect.stringContaining('{host="l20-poc",service="nope"}') });

    const bad = await source('l20-poc', { kind: 'service', service: base.service }, { serviceMatch: 'host=~"(unclosed"' }).scrape();
    expect(!bad.ok && bad.stale.code).toBe(PrometheusErrorCode.QUERY_ERROR);
    expect(!bad.ok && bad.stale.message).toMatch(/refused the query \(bad_data\)/);

    const noGpus = await source('no-such-host', { kind: 'gpus' }).scrape();
    expect(!noGpus.ok && noGpus.stale.code).toBe(PrometheusErrorCode.NO_DATA);
  });

  it('the shipped Grafana dashboard: every query runs on this Prometheus, and the fleet panels have data', async () => {
    const dashboard = JSON.parse(readFileSync(join(import.meta.dirname, '../../../resources/grafana/gpu-console-dashboard.json'), 'utf8')) as {
      panels: { title: string; targets?: { expr: string }[] }[];
    };
    const client = new PrometheusClient({ client: urlClient(prom.url), timeoutMs: 3_000 });
    // As Grafana would send them with "All" picked.
    const expand = (expr: string) => expr.replaceAll('$host', '.*').replaceAll('$service', '.*').replaceAll('$__rate_interval', '1m');
    const mustHaveData = ['Connected', 'GPU memory used', 'GPU utilisation', 'GPU power', 'GPU temperature', 'Up', 'Requests running', 'KV cache', 'Tunnel probe latency'];
    const empty: string[] = [];
    let queries = 0;
    for (const p of dashboard.panels) {
      for (const t of p.targets ?? []) {
        const r = await client.instant(expand(t.expr));
        queries++;
        if (r.series.length === 0) empty.push(p.title);
      }
    }
    for (const title of mustHaveData) expect(empty, `${title} has no data`).not.toContain(title);
    console.info(`prometheus-source: ${queries} dashboard queries ran; empty (no such state now, or proxy series not scraped here): ${[...new Set(empty)].join(', ')}`);
  });

  it('a fleet configured with telemetry.source prometheus shows the same views, its figures marked as from Prometheus', async () => {
    const config = ConfigSchema.parse({ ...demo.config, telemetry: { source: 'prometheus', prometheus: { url: prom.url } } });
    const viaProm = new FleetService({ config, pollIntervalMs: 500 });
    viaProm.start();
    try {
      const snap = await waitForTick(
        viaProm,
        (t) => t.hosts.every((h) => h.gpus.length > 0 && h.services.every((v) => !v.stale && v.source?.atMs != null)),
        20_000,
      );
      for (const h of snap.hosts) {
        expect(h.gpuSource).toMatchObject({ kind: 'prometheus', detail: expect.stringContaining(prom.url) });
        for (const v of h.services) {
          expect(v.source).toMatchObject({ kind: 'prometheus', detail: expect.stringContaining(`service="${v.id}"`) });
          expect(v.health).toBe('ok');
          // TEI exports its queue but no running-request count: unknown, not 0.
          if (v.kind === 'tei') {
            expect(v.requestsRunning).toBeNull();
            expect(v.requestsWaiting).not.toBeNull();
          } else expect(v.requestsRunning).not.toBeNull();
        }
      }
      const direct = fleet.snapshot().hosts.find((h) => h.label === 'tri-gpu')!;
      const through = snap.hosts.find((h) => h.label === 'tri-gpu')!;
      expect(through.gpus.map((g) => g.memoryTotalMiB)).toEqual(direct.gpus.map((g) => g.memoryTotalMiB));
    } finally {
      await viaProm.dispose();
    }
  }, 40_000);

  it('Prometheus gone: TELEMETRY_SCRAPE_FAILED; the fleet goes on', async () => {
    await prom.stop();
    const s = services[0]!;
    const r = await source(s.host, { kind: 'service', service: s.service }).scrape();
    expect(!r.ok && r.stale.code).toBe('TELEMETRY_SCRAPE_FAILED');
    expect(!r.ok && r.stale.message).toMatch(/^Prometheus at http:\/\/127\.0\.0\.1:\d+ is unreachable: ECONNREFUSED/);
    const tick = await waitForTick(fleet, allUp);
    expect(tick.hosts.length).toBeGreaterThan(0);
  });
});
