import { spawnSync } from 'node:child_process';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetSnapshot } from '../../../src-preload/contract/index.js';
import { parsePrometheusText } from '../../../src-main/core/telemetry/index.js';
import { waitForTick } from '../fleet/helpers/wait.js';
import { startDemoConsole, waitForTunnels } from './helpers.js';

// The proxy's real /metrics on the demo console also exports the fleet (hosts,
// GPUs, services, tunnels), and Prometheus's own linter accepts the whole page
// (`promtool check metrics`, Debian package `prometheus`).

const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const havePromtool = promtool.status === 0;
if (!havePromtool) console.warn('fleet-metrics: promtool not found (apt-get install prometheus), skipping the promtool check');

let c: Awaited<ReturnType<typeof startDemoConsole>>;

beforeAll(async () => {
  c = await startDemoConsole();
  await waitForTunnels(c.app);
});
afterAll(async () => {
  await c?.close();
});

async function scrape(): Promise<{ status: number; type: string; text: string }> {
  const origin = new URL(c.app.proxy.url()!).origin;
  const res = await request(`${origin}/metrics`);
  return { status: res.statusCode, type: String(res.headers['content-type']), text: await res.body.text() };
}

describe('proxy /metrics with the fleet', () => {
  it('answers without a token, in the text format, with every demo GPU, service and tunnel', async () => {
    // The first GPU reading and the first health checks may land a poll or two after the tunnels.
    const ready = (s: FleetSnapshot) => s.hosts.every((h) => h.gpus.length > 0 && h.services.every((v) => v.health !== 'unknown'));
    if (!ready(c.app.fleet.snapshot())) await waitForTick(c.app.fleet, ready, 15_000);
    const page = await scrape();
    expect(page.status).toBe(200);
    expect(page.type).toContain('text/plain; version=0.0.4');
    const parsed = parsePrometheusText(page.text);
    expect(parsed.errors).toBe(0);
    const snap = c.app.fleet.snapshot();
    const family = (name: string) => parsed.families.find((f) => f.name === name)?.samples ?? [];
    expect(family('gpu_console_host_connected').map((s) => [s.labels['host'], s.value])).toEqual(snap.hosts.map((h) => [h.label, 1]));
    const gpus = snap.hosts.flatMap((h) => h.gpus.map((g) => `${h.label}/${g.index}`));
    expect(family('gpu_console_gpu_memory_total_bytes').map((s) => `${s.labels['host']}/${s.labels['gpu']}`).sort()).toEqual(gpus.sort());
    const services = snap.hosts.flatMap((h) => h.services.map((s) => `${h.label}/${s.id}`));
    expect(family('gpu_console_tunnel_state').filter((s) => s.value === 1 && s.labels['state'] === 'up').map((s) => `${s.labels['host']}/${s.labels['service']}`).sort()).toEqual(
      services.sort(),
    );
    expect(family('gpu_console_service_up').map((s) => s.labels['model']).sort()).toEqual(snap.hosts.flatMap((h) => h.services.map((s) => s.model)).sort());
    // The proxy's own families are still there.
    expect(page.text).toContain('# TYPE gpu_console_proxy_slots gauge');
  });

  it.skipIf(!havePromtool)('passes `promtool check metrics`', async () => {
    const page = await scrape();
    const check = spawnSync('promtool', ['check', 'metrics'], { input: page.text, encoding: 'utf8' });
    console.info(`promtool check metrics: exit ${check.status}; ${page.text.split('\n').length} lines; output: ${JSON.stringify((check.stdout + check.stderr).trim())}`);
    expect(check.stdout + check.stderr).toBe('');
    expect(check.status).toBe(0);
  });
});
