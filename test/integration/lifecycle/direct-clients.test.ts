import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src-main/core/app.js';
import { startDemoConsole, type DemoConsole } from '../../helpers/demo-console.js';
import { until } from '../../helpers/until.js';

// A restart of l20-poc/qwen on the demo fleet while one client goes through
// the console's proxy and another uses the SSH tunnel directly
// (http://127.0.0.1:<tunnel port>), as an application on the operator's
// machine might. The proposal counts both, and says which is which; the
// drain waits for the proxy's request, then for the direct one at the engine;
// both are answered in full before the restart command runs.

let app: App;
let c: DemoConsole | undefined;
const UP = 'l20-poc/qwen';

const up = () => app.proxy.snapshot().upstreams.find((u) => u.upstream === UP);
const svc = () => app.fleet.snapshot().hosts.find((h) => h.label === 'l20-poc')?.services.find((s) => s.id === 'qwen');

interface Answer { status: number; body: string; at: number }
function chat(url: string, maxTokens: number, token?: string): Promise<Answer> {
  return request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    // Through the proxy the alias; a direct client names no model (the server serves one).
    body: JSON.stringify({ ...(token ? { model: 'qwen' } : {}), messages: [{ role: 'user', content: 'count slowly' }], max_tokens: maxTokens }),
  }).then(async (r) => ({ status: r.statusCode, body: await r.body.text(), at: Date.now() }));
}

beforeAll(async () => {
  c = await startDemoConsole({
    dataDir: mkdtempSync(join(tmpdir(), 'gc-lc-direct-')),
    fleet: { timeScale: 100 }, proxyPort: 0, pollIntervalMs: 150,
  });
  app = c.app;
  await until(() => svc()?.sleep === 'awake' && up()?.state === 'ready', { timeoutMs: 20_000 });
}, 30_000);

afterAll(async () => {
  await c?.dispose();
});

describe('direct tunnel clients during a restart', () => {
  it('are counted in the proposal beside the proxy, waited for by the drain, and answered before the restart', async () => {
    const token = app.proxy.createToken('direct-clients', 'interactive', 'test').token;
    const viaProxy = chat(`${app.proxy.url()}/chat/completions`, 8, token);
    const direct = chat(`${svc()!.tunnel.localUrl}/v1/chat/completions`, 40); // ~2.3 s of decode
    await until(() => up()!.inFlight === 1 && svc()!.requestsRunning === 2 && !svc()!.stale);

    const { action } = app.lifecycle.service.propose({ upstream: UP, kind: 'restart', proposer: 'test', reason: 'direct clients test' });
    expect(action).toMatchObject({ inFlight: 1, queued: 0 }); // the proxy's own count, as before
    expect(action.load).toMatchObject({ engine: 'fresh', proxyInFlight: 1, engineRunning: 2, direct: 1, inFlight: 2 });
    expect(action.load!.summary).toMatch(/^2 in flight \(1 through the proxy, 1 from direct tunnel clients\), 0 waiting at the engine$/);

    app.lifecycle.service.approve({ id: action.id, nonce: action.nonce!, caller: 'test', typedLabel: 'l20-poc' });
    const done = await app.lifecycle.service.settled(action.id);
    expect(done.state, `${done.error} ${done.observed.join('; ')}`).toBe('verified');
    expect(done).toMatchObject({ drained: 1, aborted: 0 });
    expect(done.directAtDrain).toMatchObject({ outcome: 'idle', running: 0, waiting: 0 });
    expect(done.directAtDrain!.waitedMs).toBeGreaterThan(0); // the direct request outlived the proxy's

    const [p, d] = await Promise.all([viaProxy, direct]);
    expect(p.status, p.body).toBe(200);
    expect(d.status, d.body).toBe(200); // not cut by the restart
    const rows = app.store.audit.list({ limit: 1000 }).filter((e) => e.payload.actionId === action.id);
    const step = rows.find((e) => e.type === 'lifecycle.step')!;
    const drained = rows.find((e) => e.type === 'lifecycle.drained')!;
    expect(drained.payload).toMatchObject({ drained: 1, aborted: 0, direct: { outcome: 'idle' } });
    expect(d.at).toBeLessThanOrEqual(step.ts); // answered before the restart command ran
    expect(drained.seq).toBeLessThan(step.seq);
  }, 40_000);
});
