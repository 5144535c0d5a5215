import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src-main/core/app.js';
import { DEMO_HOSTS, startDemoFleet, type DemoFleet, type HostProfile } from '../../../src-main/demo/index.js';
import type { FleetSnapshot } from '../../../src-preload/contract/index.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';

// A llama-server started with --sleep-idle-seconds unloads its model when idle
// and loads it again on the next request. The console shows it asleep, but
// must forward a request to it (that request is what wakes it): answering
// 503 model_sleeping, as for a vLLM that only an approved wake can bring back,
// would make the model unreachable through the proxy.

let dir: string;
let demo: DemoFleet;
let core: TestApp;
let app: App;
let token: string;

const coder = (s: FleetSnapshot) => s.hosts.find((h) => h.label === 'strix')?.services.find((v) => v.id === 'coder');

function waitFor(predicate: (s: FleetSnapshot) => boolean, timeoutMs = 20_000): Promise<FleetSnapshot> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void sub.dispose();
      reject(new Error(`no matching tick: ${JSON.stringify(coder(app.fleet.snapshot()))}`));
    }, timeoutMs);
    const sub = app.fleet.onDidTick((s) => {
      if (!predicate(s)) return;
      clearTimeout(timer);
      void sub.dispose();
      resolve(s);
    });
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-self-sleep-'));
  const strix = DEMO_HOSTS.find((h) => h.label === 'strix')!;
  // 60 s idle at timeScale 1000: asleep 60 ms after the last request.
  const profile: HostProfile = { ...strix, services: strix.services.map((s) => ({ ...s, sleepIdleSeconds: 60 })) } as HostProfile;
  demo = await startDemoFleet({ dir: join(dir, 'demo'), timeScale: 1000, decodeSpeedFactor: 20, profiles: [profile] });
  const configFile = join(dir, 'config.yaml');
  writeFileSync(configFile, JSON.stringify({ hosts: demo.config.hosts }));
  core = await startTestApp({ dataDir: join(dir, 'console'), configFile, pollIntervalMs: 200, proxyPort: 0 });
  app = core.app;
  token = app.proxy.createToken('tests', 'interactive', 'test').token;
}, 60_000);
afterAll(async () => {
  await core?.dispose();
  await demo?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('proxy and a llama-server that sleeps by itself', () => {
  it('shows it asleep (automatic), then forwards a request, which wakes it; the answer is the model\'s', async () => {
    const asleep = await waitFor((s) => coder(s)?.sleep === 'asleep-2' && coder(s)?.tunnel.state === 'up');
    expect(coder(asleep)).toMatchObject({ sleepControl: 'automatic', kind: 'llama-server' });
    const r = await request(`${app.proxy.url()}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'coder', max_tokens: 8, messages: [{ role: 'user', content: 'wake up' }] }),
    });
    const body = (await r.body.json()) as { choices?: { message: { content: string } }[]; error?: { code: string } };
    expect(body.error?.code).toBeUndefined();
    expect(r.statusCode).toBe(200);
    expect(body.choices?.[0]?.message.content.length).toBeGreaterThan(0);
  }, 40_000);
});
