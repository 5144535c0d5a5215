import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src-main/core/app.js';
import { startDemoConsole, type DemoConsole } from '../../helpers/demo-console.js';
import { chooseLatency, latencySeries, type LatencyFigures } from '../../../src-preload/contract/latency.js';
import type { HostTick } from '../../../src-preload/contract/index.js';
import { until } from '../../helpers/until.js';

// Issue #27 finding 8 through the demo console: requests to strix's
// llama-server go through the proxy; the telemetry ticks (what the host view
// and the fleet card read) carry the proxy's TTFT / end-to-end percentiles for
// that model, the server's own stay unknown (llama-server has no histograms),
// and chooseLatency shows the proxy's, labelled.

let app: App;
let c: DemoConsole | undefined;
const ticks: HostTick[] = [];

beforeAll(async () => {
  c = await startDemoConsole({
    dataDir: mkdtempSync(join(tmpdir(), 'gc-proxy-latency-')),
    fleet: { timeScale: 10, decodeSpeedFactor: 20 }, proxyPort: 0, pollIntervalMs: 200,
  });
  app = c.app;
  app.onEvent((e) => {
    if (e.channel !== 'telemetry.tick') return;
    const strix = (e.payload as { hosts: HostTick[] }).hosts.find((h) => h.host === 'strix');
    if (strix) ticks.push(strix);
  });
  await until(() => app.fleet.snapshot().hosts.find((h) => h.label === 'strix')?.services[0]?.health === 'ok', { timeoutMs: 20_000 });
}, 40_000);

afterAll(async () => {
  await c?.dispose();
});

const figures = (values: HostTick['values'], names: Record<keyof LatencyFigures, string>): LatencyFigures => ({
  ttftP50S: values[names.ttftP50S] ?? null,
  ttftP95S: values[names.ttftP95S] ?? null,
  e2eP50S: values[names.e2eP50S] ?? null,
  e2eP95S: values[names.e2eP95S] ?? null,
});

describe("a llama-server host's latency", () => {
  it('is the proxy’s, measured for that model, while the server keeps none', async () => {
    const token = app.proxy.createToken('latency-test', 'interactive', 'test').token;
    const ask = async (stream: boolean) => {
      const r = await request(`${app.proxy.url()}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ model: 'coder', messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 8, stream }),
      });
      await r.body.text();
      return r.statusCode;
    };
    expect(await Promise.all([ask(true), ask(true), ask(true), ask(false)])).toEqual([200, 200, 200, 200]);

    const names = latencySeries('coder');
    await until(() => ticks.some((t) => t.values[names.proxy.e2eP95S] != null), { timeoutMs: 20_000 });
    const tick = ticks.findLast((t) => t.values[names.proxy.e2eP95S] != null)!;
    expect(figures(tick.values, names.server)).toEqual({ ttftP50S: null, ttftP95S: null, e2eP50S: null, e2eP95S: null });
    const proxy = figures(tick.values, names.proxy);
    for (const v of Object.values(proxy)) expect(v).toBeGreaterThan(0);
    // TTFT from the streamed answers comes before their end
    expect(proxy.ttftP50S!).toBeLessThan(proxy.e2eP95S!);
    expect(chooseLatency('llama-server', figures(tick.values, names.server), proxy)).toMatchObject({ basis: 'proxy', label: 'measured at the proxy' });
    expect(app.proxy.snapshot().upstreams.find((u) => u.upstream === 'strix/coder')!.latency).toMatchObject({ requests: 4, streamed: 3 });

    // the host view's chart reads the stored series: they are recorded too
    const stored = app.telemetry.series.query({ host: 'strix', range: '15m', metrics: ['svc.coder.proxy_*'] });
    expect(stored.series.map((s) => s.metric)).toEqual(expect.arrayContaining(Object.values(names.proxy)));
  }, 40_000);
});
