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

// The whole path against the demo fleet (time-scaled): proposal → approval
// with nonce (and typed label) → drain → the planned calls through the SSH
// tunnel or SSH exec → verification → audit rows, each step in the chain.

let app: App;
let c: DemoConsole | undefined;
let api: Api;
const TIME_SCALE = 100;

async function call<T>(channel: string, input: unknown): Promise<T> {
  const r = await api.invoke(channel, input, { caller: 'test' });
  if (!r.ok) throw Object.assign(new Error(r.error.message), { code: r.error.code });
  return r.data as T;
}

const sleepOf = (upstream: string) => {
  const [label, id] = upstream.split('/');
  return app.fleet.snapshot().hosts.find((h) => h.label === label)?.services.find((s) => s.id === id)?.sleep;
};

async function proposeAndApprove(upstream: string, kind: string, typedLabel?: string): Promise<ActionView> {
  const { action } = await call<{ action: ActionView }>('actions.propose', { upstream, kind, reason: 'test' });
  expect(action.state).toBe('proposed');
  expect(action.nonce).toBeTruthy();
  await call('actions.approve', { id: action.id, nonce: action.nonce, ...(typedLabel ? { typedLabel } : {}), displayName: 'Test Operator' });
  return app.lifecycle.service.settled(action.id);
}

beforeAll(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-lc-demo-'));
  c = await startDemoConsole({
    dataDir,
    fleet: { timeScale: TIME_SCALE },
    proxyPort: 0,
    pollIntervalMs: 150,
  });
  app = c.app;
  api = c.api;
  await until(() => sleepOf('l20-poc/qwen') === 'awake' && sleepOf('tri-gpu/ocr') === 'awake', { timeoutMs: 15_000 });
  // The VRAM check compares against the last nvidia-smi reading: wait for one per host (under load the first poll can lag).
  await until(() => ['l20-poc', 'tri-gpu'].every((l) => app.fleet.snapshot().hosts.some((h) => h.label === l && !h.gpuStale && h.updatedAt !== null)), { timeoutMs: 15_000 });
}, 30_000);

afterAll(async () => {
  await c?.dispose();
});

describe('lifecycle against the demo fleet', () => {
  it('sleeps at level 1 (drained, VRAM fell, is_sleeping) and wakes with a plain /wake_up; both measured and audited', async () => {
    const slept = await proposeAndApprove('l20-poc/qwen', 'sleep');
    expect(slept.state, slept.error ?? '').toBe('verified');
    expect(slept.drained).toBe(0);
    expect(slept.aborted).toBe(0);
    expect(slept.observed.join('\n')).toMatch(/sleep state: asleep/);
    expect(slept.observed.join('\n')).toMatch(/VRAM: \d+ → \d+ MiB \(-\d+ MiB/);
    expect(slept.approver).toMatchObject({ displayName: 'Test Operator', via: 'test' });
    expect(c!.demo.host('l20-poc').simulator('qwen').state().sleepState).toBe('weights_offloaded');

    await until(() => sleepOf('l20-poc/qwen') === 'asleep-1', { timeoutMs: 8_000 });
    // The proxy learns sleep states from the fleet's ticks: wait until it sees this one too.
    await until(() => app.proxy.snapshot().upstreams.find((u) => u.upstream === 'l20-poc/qwen')?.state === 'sleeping', { timeoutMs: 8_000 });
    // A request for the sleeping model: 503 model_sleeping, and exactly one wake proposal however many ask.
    for (let i = 0; i < 3; i++) {
      const r = await request(`${app.proxy.url()}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${app.proxy.createToken(`t${i}`, 'interactive', 'test').token}` },
        body: JSON.stringify({ model: 'qwen', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }),
      });
      const body = await r.body.text();
      expect(r.statusCode).toBe(503);
      expect(body).toContain('model_sleeping');
    }
    const wakes = app.lifecycle.list(100).actions.filter((a) => a.kind === 'wake' && a.upstream === 'l20-poc/qwen' && a.state === 'proposed');
    expect(wakes).toHaveLength(1);
    expect(wakes[0]!.proposer).toBe('policy:wake-on-demand');
    expect(wakes[0]!.repeats).toBe(2);
    expect(wakes[0]!.steps.map((s) => s.text).join('\n')).toContain('POST http://127.0.0.1:8000/wake_up  ');

    await call('actions.approve', { id: wakes[0]!.id, nonce: wakes[0]!.nonce });
    const woke = await app.lifecycle.service.settled(wakes[0]!.id);
    expect(woke.state, woke.error ?? '').toBe('verified');
    expect(woke.observed.join('\n')).toMatch(/probe: answered/);
    expect(c!.demo.host('l20-poc').simulator('qwen').state()).toMatchObject({ sleepState: 'awake', weightsValid: true });

    // History now feeds the next estimate.
    await until(() => sleepOf('l20-poc/qwen') === 'awake', { timeoutMs: 8_000 });
    const next = await call<{ action: ActionView }>('actions.propose', { upstream: 'l20-poc/qwen', kind: 'sleep' });
    expect(next.action.downtimeBasis).toMatch(/^level-1 sleep took \d+\.\d s$/);
    await call('actions.reject', { id: next.action.id, nonce: next.action.nonce, reason: 'not now' });

    // Every step is in the chain, and the chain verifies.
    const types = app.store.audit.list({ limit: 1000 }).filter((e) => e.payload.actionId === slept.id).map((e) => e.type).reverse();
    expect(types).toEqual(['lifecycle.proposed', 'lifecycle.approved', 'lifecycle.running', 'lifecycle.drained', 'lifecycle.step', 'lifecycle.verified', 'lifecycle.resumed']);
    const verifiedRow = app.store.audit.list({ limit: 1000 }).find((e) => e.payload.actionId === slept.id && e.type === 'lifecycle.verified')!;
    expect(verifiedRow.payload.before).toMatchObject({ sleep: 'awake' });
    expect(verifiedRow.payload.after).toHaveProperty('vramUsedMiB');
    expect(app.store.audit.verify().ok).toBe(true);
  }, 30_000);

  it('offloads (level 2, typed label) and wakes with weights → reload_weights → kv_cache: no gibberish', async () => {
    await expect(proposeAndApprove('tri-gpu/ocr', 'offload')).rejects.toMatchObject({ code: 'LIFECYCLE_LABEL_MISMATCH' });
    const pending = app.lifecycle.list(100).actions.find((a) => a.upstream === 'tri-gpu/ocr' && a.kind === 'offload' && a.state === 'proposed')!;
    await call('actions.approve', { id: pending.id, nonce: pending.nonce, typedLabel: 'tri-gpu' });
    const off = await app.lifecycle.service.settled(pending.id);
    expect(off.state, off.error ?? '').toBe('verified');
    expect(c!.demo.host('tri-gpu').simulator('ocr').state().sleepState).toBe('discard_all');
    await until(() => sleepOf('tri-gpu/ocr') === 'asleep-2', { timeoutMs: 8_000 });

    const { action } = await call<{ action: ActionView }>('actions.propose', { upstream: 'tri-gpu/ocr', kind: 'wake' });
    const calls = action.steps.filter((s) => s.kind === 'http').map((s) => s.text.split('  ')[0]);
    expect(calls).toEqual(['POST http://127.0.0.1:8001/wake_up?tags=weights', 'POST http://127.0.0.1:8001/collective_rpc', 'POST http://127.0.0.1:8001/wake_up?tags=kv_cache']);
    expect(action.steps[1]!.body).toBe('{"method":"reload_weights","args":[],"kwargs":{},"timeout":null}');
    await call('actions.approve', { id: action.id, nonce: action.nonce });
    const woke = await app.lifecycle.service.settled(action.id);
    expect(woke.state, woke.error ?? '').toBe('verified');
    expect(c!.demo.host('tri-gpu').simulator('ocr').state()).toMatchObject({ sleepState: 'awake', weightsValid: true });
  }, 30_000);

  it('restarts through the SSH command verbatim and verifies health and a sensible probe', async () => {
    const { action } = await call<{ action: ActionView }>('actions.propose', { upstream: 'tri-gpu/embed', kind: 'restart' });
    expect(action.steps.find((s) => s.kind === 'ssh')!.text).toBe("sudo systemctl restart vllm-embed");
    expect(action.requiresTypedLabel).toBe(true);
    const pidsBefore = c!.demo.host('tri-gpu').simulator('embed').state().pids;
    await call('actions.approve', { id: action.id, nonce: action.nonce, typedLabel: 'tri-gpu' });
    const done = await app.lifecycle.service.settled(action.id);
    expect(done.state, `${done.error} ${done.observed.join('; ')}`).toBe('verified');
    expect(done.observed.join('\n')).toMatch(/probe: embedding of 1024 dimensions/);
    expect(c!.demo.host('tri-gpu').simulator('embed').state().pids).not.toEqual(pidsBefore);
    const step = app.store.audit.list({ limit: 200 }).find((e) => e.payload.actionId === action.id && e.type === 'lifecycle.step')!;
    expect(step.payload).toMatchObject({ step: 'sudo systemctl restart vllm-embed', exitCode: 0 });
  }, 30_000);
});
