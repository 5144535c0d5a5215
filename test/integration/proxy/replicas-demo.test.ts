import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src-main/core/app.js';
import { syntheticProfiles } from '../../../src-main/demo/synthetic-profiles.js';
import { startDemoConsole, type DemoConsole } from '../../helpers/demo-console.js';

// Replicas through the real path: two demo hosts (real SSH sessions, tunnels,
// vLLM simulators) serving the same model name, so the console's config has
// one model with two replicas. Requests spread over both (X-Upstream says
// where); when one host is disconnected mid-run, every request that starts
// afterwards goes to the other, none fails.

let app: App;
let c: DemoConsole | undefined;
let dir: string;
const MODEL = 'llama-3.3-70b-instruct';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-replicas-'));
  const profiles = syntheticProfiles(2, { gpusPerHost: 1, servicesPerHost: 1, engines: ['vllm'], labelPrefix: 'rep' }).map((h) => ({
    ...h,
    services: h.services.map((s) => ({ ...s, servedModelName: MODEL })),
  }));
  c = await startDemoConsole({
    dataDir: dir,
    fleet: { timeScale: 1000, decodeSpeedFactor: 40, profiles },
    pollIntervalMs: 200,
    proxyPort: 0,
  });
  app = c.app;
  const end = Date.now() + 20_000;
  while (!app.fleet.snapshot().hosts.every((h) => h.state === 'connected' && h.services.every((s) => s.tunnel.state === 'up'))) {
    if (Date.now() > end) throw new Error('demo hosts did not come up');
    await new Promise((r) => setTimeout(r, 100));
  }
}, 40_000);

afterAll(async () => {
  await c?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

async function ask(token: string): Promise<{ text: string; status: number; upstream: string | undefined; startedAt: number }> {
  const startedAt = Date.now();
  const r = await request(`${app.proxy.url()}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const text = await r.body.text();
  return { text: r.statusCode === 200 ? '' : text.slice(0, 300), status: r.statusCode, upstream: r.headers['x-upstream'] as string | undefined, startedAt };
}

describe('replicas on the demo fleet', () => {
  it('one /v1/models entry with both replicas; requests spread; a disconnected host is skipped with no failed request after it', async () => {
    const token = app.proxy.createToken('replicas', 'interactive', 'test').token;
    const models = (await (await request(`${app.proxy.url()}/models`, { headers: { authorization: `Bearer ${token}` } })).body.json()) as {
      data: { id: string; replicas: string[] }[];
    };
    const entry = models.data.filter((m) => m.id === MODEL);
    expect(entry).toHaveLength(1);
    expect(entry[0]!.replicas.sort()).toEqual(['rep-001/svc0', 'rep-002/svc0'].sort());

    const first = await Promise.all(Array.from({ length: 8 }, () => ask(token)));
    expect(first.map((a) => a.status), first.map((a) => a.text).join(' ')).toEqual(Array(8).fill(200));
    expect(new Set(first.map((a) => a.upstream))).toEqual(new Set(['rep-001/svc0', 'rep-002/svc0']));

    const label = first[0]!.upstream!.split('/')[0]!;
    const other = label === 'rep-001' ? 'rep-002/svc0' : 'rep-001/svc0';
    await app.fleet.disconnect(label);
    const cutAt = Date.now();
    // The proxy reads host states from the fleet's ticks: wait until it sees this one.
    const end = Date.now() + 5_000;
    while (app.proxy.snapshot().upstreams.find((u) => u.upstream === `${label}/svc0`)?.state !== 'down') {
      if (Date.now() > end) throw new Error('the proxy did not see the host down');
      await new Promise((r) => setTimeout(r, 50));
    }
    const after = await Promise.all(Array.from({ length: 8 }, () => ask(token)));
    expect(after.map((a) => a.status), after.map((a) => a.text).join(' ')).toEqual(Array(8).fill(200));
    expect(after.every((a) => a.upstream === other && a.startedAt >= cutAt)).toBe(true);
    const stats = app.proxy.snapshot();
    expect(stats.models?.find((m) => m.name === MODEL)?.replicas.length).toBe(2);
  }, 60_000);
});
