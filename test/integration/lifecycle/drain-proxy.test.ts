import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src-main/core/app.js';
import { startDemoConsole, type DemoConsole } from '../../helpers/demo-console.js';
import { until } from '../../helpers/until.js';

// A sleep action drains l20-poc/qwen through the real proxy on the demo
// fleet: the requests running finish (drained, none cut), a request that was
// already queued waits through the drain and is answered only after the
// action has verified and re-opened admission, and a request arriving during
// the drain is refused at once with 503 upstream_draining + Retry-After.
// Nothing is lost or left hanging.

let app: App;
let c: DemoConsole | undefined;
const UP = 'l20-poc/qwen';

const up = () => app.proxy.snapshot().upstreams.find((u) => u.upstream === UP);
const sleepOf = () => app.fleet.snapshot().hosts.find((h) => h.label === 'l20-poc')?.services.find((s) => s.id === 'qwen')?.sleep;

interface Answer { status: number; body: string; retryAfter: string | null; at: number }
function ask(token: string, maxTokens: number): Promise<Answer> {
  return request(`${app.proxy.url()}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ model: 'qwen', messages: [{ role: 'user', content: 'count slowly' }], max_tokens: maxTokens }),
  }).then(async (r) => ({ status: r.statusCode, body: await r.body.text(), retryAfter: (r.headers['retry-after'] as string | undefined) ?? null, at: Date.now() }));
}

beforeAll(async () => {
  c = await startDemoConsole({
    dataDir: mkdtempSync(join(tmpdir(), 'gc-lc-drain-')),
    fleet: { timeScale: 100 }, proxyPort: 0, pollIntervalMs: 150,
  });
  app = c.app;
  await until(() => sleepOf() === 'awake' && up()?.state === 'ready', { timeoutMs: 20_000 });
}, 30_000);

afterAll(async () => {
  await c?.dispose();
});

/** Fill every slot with a long request (~1.5 s of decode each), queue one more behind them, then approve `kind`. */
async function underLoad(kind: 'sleep' | 'restart') {
  const token = app.proxy.createToken(`drain-${kind}`, 'interactive', 'test').token;
  const slots = up()!.slots;
  const long = Array.from({ length: slots }, () => ask(token, 26));
  await until(() => up()!.inFlight === slots);
  const queued = ask(token, 2);
  await until(() => up()!.queued === 1);

  const { action } = app.lifecycle.service.propose({ upstream: UP, kind, proposer: 'test', reason: 'drain test' });
  expect(action).toMatchObject({ inFlight: slots, queued: 1 });
  app.lifecycle.service.approve({ id: action.id, nonce: action.nonce!, caller: 'test', ...(kind === 'restart' ? { typedLabel: 'l20-poc' } : {}) });
  await until(() => up()!.state === 'draining', { timeoutMs: 5_000 });

  // A newcomer during the drain: refused at once, honestly, with a Retry-After fitted to what follows —
  // a restart (expected back after the drain deadline + its expected time, longer than the 45 s
  // interactive hold budget: model_restarting), or a sleep (the drain deadline: upstream_draining).
  const t0 = Date.now();
  const newcomer = await ask(token, 2);
  expect(Date.now() - t0).toBeLessThan(2_000);
  expect(newcomer.status).toBe(503);
  expect(JSON.parse(newcomer.body)).toMatchObject({ error: { code: kind === 'restart' ? 'model_restarting' : 'upstream_draining' } });
  expect(Number(newcomer.retryAfter)).toBeGreaterThan(0);

  const settled = await app.lifecycle.service.settled(action.id);
  const done = await Promise.all(long);
  const q = await queued;
  expect(settled.state, `${settled.error} ${settled.observed.join('; ')}`).toBe('verified');
  expect(settled).toMatchObject({ drained: slots, aborted: 0 });
  for (const r of done) expect(r.status, r.body).toBe(200); // in flight when the drain began: finished, not cut

  // Order: drain finished → calls → verified → admission resumed → only then the queued request answered.
  const rows = app.store.audit.list({ limit: 1000 }).reverse();
  const mine = (t: string) => rows.find((e) => e.type === t && (e.payload.actionId === action.id || e.actor === `lifecycle:${action.id}`))!;
  const drained = mine('proxy.drain.finished');
  const verified = mine('lifecycle.verified');
  const resumed = mine('proxy.drain.resumed');
  expect(drained.seq).toBeLessThan(verified.seq);
  expect(verified.seq).toBeLessThan(resumed.seq);
  expect(q.at).toBeGreaterThanOrEqual(resumed.ts);
  expect(up()!.queued).toBe(0);
  expect(up()!.inFlight).toBe(0);
  return q;
}

describe('drain during an action, through the real proxy', () => {
  it('restart: running requests finish, the queued one waits through drain + restart + verification and is then served (200)', async () => {
    const q = await underLoad('restart');
    expect(q.status, q.body).toBe(200);
    expect(JSON.parse(q.body)).toMatchObject({ choices: [expect.objectContaining({ message: expect.objectContaining({ role: 'assistant' }) as object })] });
  }, 40_000);

  it('sleep: the queued one waits until resume, then gets the honest 503 model_sleeping with Retry-After from the expected wake time', async () => {
    await until(() => sleepOf() === 'awake' && up()?.state === 'ready', { timeoutMs: 10_000 });
    const q = await underLoad('sleep');
    expect(q.status, q.body).toBe(503);
    const err = (JSON.parse(q.body) as { error: { code: string; expected_wake_ms: number } }).error;
    expect(err.code).toBe('model_sleeping');
    expect(Number(q.retryAfter)).toBe(Math.max(1, Math.ceil(err.expected_wake_ms / 1000)));
  }, 40_000);
});
