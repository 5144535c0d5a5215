import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../../../src-main/core/api.js';
import type { App } from '../../../src-main/core/app.js';
import { startDemoConsole, type DemoConsole } from '../../helpers/demo-console.js';
import type { ActionView } from '../../../src-preload/contract/index.js';
import { until } from '../../helpers/until.js';

// Wake on request through the real path: a standing approval for wake on the
// demo's l20-poc/qwen; the model is put to sleep; requests to it are held
// while ONE wake runs (proposed by policy, approved by the standing approval,
// run over the tunnel, verified) and then served.

let app: App;
let c: DemoConsole | undefined;
let api: Api;

async function call<T>(channel: string, input: unknown): Promise<T> {
  const r = await api.invoke(channel, input, { caller: 'test' });
  if (!r.ok) throw Object.assign(new Error(r.error.message), { code: r.error.code });
  return r.data as T;
}

const qwen = () => app.fleet.snapshot().hosts.find((h) => h.label === 'l20-poc')?.services.find((s) => s.id === 'qwen');

beforeAll(async () => {
  c = await startDemoConsole({
    dataDir: mkdtempSync(join(tmpdir(), 'gc-wake-req-')),
    fleet: { timeScale: 100 },
    proxyPort: 0,
    pollIntervalMs: 150,
  });
  app = c.app;
  api = c.api;
  await until(() => qwen()?.sleep === 'awake' && qwen()?.tunnel.state === 'up', { timeoutMs: 20_000 });
  await until(() => app.fleet.snapshot().hosts.some((h) => h.label === 'l20-poc' && !h.gpuStale && h.updatedAt !== null), { timeoutMs: 15_000 });
}, 40_000);

afterAll(async () => {
  await c?.dispose();
});

describe('wake on request', () => {
  it('held requests wait for one wake approved by the standing approval, then are served', async () => {
    const { action } = await call<{ action: ActionView }>('actions.propose', { upstream: 'l20-poc/qwen', kind: 'sleep', reason: 'test' });
    await call('actions.approve', { id: action.id, nonce: action.nonce, displayName: 'Test Operator' });
    expect((await app.lifecycle.service.settled(action.id)).state).toBe('verified');
    await until(() => app.proxy.snapshot().upstreams.find((u) => u.upstream === 'l20-poc/qwen')?.state === 'sleeping');

    await call('actions.grantStanding', { upstream: 'l20-poc/qwen', kind: 'wake', durationMinutes: 30 });
    const token = app.proxy.createToken('waker', 'interactive', 'test').token;
    const send = () =>
      request(`${app.proxy.url()}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ model: 'qwen', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }),
      });
    const answers = await Promise.all([send(), send(), send()]);
    for (const a of answers) {
      const text = await a.body.text();
      expect(a.statusCode, text).toBe(200);
      expect(a.headers['x-hold-reason']).toBe('waking');
      expect(Number(a.headers['x-hold-ms'])).toBeGreaterThan(0);
    }
    const wakes = app.lifecycle.list(100).actions.filter((a) => a.kind === 'wake' && a.upstream === 'l20-poc/qwen');
    expect(wakes).toHaveLength(1);
    // Requests are served once the fleet sees the model awake; the action's own verification may still be finishing.
    const woke = await app.lifecycle.service.settled(wakes[0]!.id);
    expect(woke.state, woke.error ?? '').toBe('verified');
    expect(woke.standingApprovalId).toBeTruthy();
    expect(c!.demo.host('l20-poc').simulator('qwen').state()).toMatchObject({ sleepState: 'awake', weightsValid: true });
  }, 60_000);
});
