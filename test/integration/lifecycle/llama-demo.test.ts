import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../../../src-main/core/api.js';
import type { App } from '../../../src-main/core/app.js';
import { startDemoConsole, type DemoConsole } from '../../helpers/demo-console.js';
import type { ActionView, LifecycleTarget } from '../../../src-preload/contract/index.js';
import { until } from '../../helpers/until.js';

// llama-server on the demo's AMD APU host `strix` (systemd, port 8080),
// through the whole path: the restart is offered because a restart command is
// named; proposal → approval (nonce, typed label) → drain → the systemd
// command over SSH → verification (the pid on :8080 from `ss -ltnp` changed,
// /health through 503 Loading model, /props, one token of chat). A ghost —
// the old process still on the port after the restart — fails the action
// with LIFECYCLE_GHOST_PROCESS naming it, and nothing is killed. Sleep is not
// a button: llama-server sleeps by itself.

let app: App;
let c: DemoConsole | undefined;
let api: Api;
const UP = 'strix/coder';

async function call<T>(channel: string, input: unknown): Promise<T> {
  const r = await api.invoke(channel, input, { caller: 'test' });
  if (!r.ok) throw Object.assign(new Error(r.error.message), { code: r.error.code, details: r.error.details });
  return r.data as T;
}

const view = () => app.fleet.snapshot().hosts.find((h) => h.label === 'strix')?.services.find((s) => s.id === 'coder');
const sim = () => c!.demo.host('strix').llamaServer('coder');

async function restart(): Promise<ActionView> {
  const { action } = await call<{ action: ActionView }>('actions.propose', { upstream: UP, kind: 'restart', reason: 'test' });
  await call('actions.approve', { id: action.id, nonce: action.nonce, typedLabel: 'strix', displayName: 'Test Operator' });
  return app.lifecycle.service.settled(action.id);
}

beforeAll(async () => {
  c = await startDemoConsole({
    dataDir: mkdtempSync(join(tmpdir(), 'gc-lc-llama-demo-')),
    fleet: { timeScale: 100 }, proxyPort: 0, pollIntervalMs: 150,
  });
  app = c.app;
  api = c.api;
  await until(() => view()?.health === 'ok' && view()?.stale === false && sim().state().process === 'up', { timeoutMs: 20_000 });
}, 30_000);

afterAll(async () => {
  await c?.dispose();
});

describe('llama-server lifecycle on the demo host strix', () => {
  it('offers restart (a restart command is named) and says why there is no sleep, wake or offload', async () => {
    const { targets } = await call<{ targets: LifecycleTarget[] }>('actions.list', { limit: 10 });
    expect(targets.find((t) => t.upstream === UP)).toMatchObject({ driver: 'llama-server', supported: ['restart'] });
    const why = app.lifecycle.service.targetDetails().find((t) => t.upstream === UP)!.unavailable;
    expect(why.map((u) => u.kind)).toEqual(['wake', 'sleep', 'offload']);
    expect(why[1]!.reason).toMatch(/sleeps by itself after --sleep-idle-seconds/);
    await expect(call('actions.propose', { upstream: UP, kind: 'sleep' })).rejects.toMatchObject({ code: 'LIFECYCLE_UNSUPPORTED_ACTION' });
  });

  it('restarts through systemd over SSH, drained, and verifies the new pid on :8080, /props and one token of chat', async () => {
    const pidBefore = sim().state().pid!;
    const done = await restart();
    const seen = done.observed.join('\n');
    expect(done.state, `${done.error} ${seen}`).toBe('verified');
    const pidAfter = sim().state().pid!;
    expect(pidAfter).not.toBe(pidBefore);
    expect(seen).toContain(`port: :8080 was pid ${pidBefore} (llama-server), now pid ${pidAfter} (llama-server)`);
    expect(seen).toMatch(/health: HTTP 200/);
    expect(seen).toMatch(/props: 2 slots, n_ctx 131072 per slot, model Qwen3-Coder-30B-A3B/);
    expect(seen).toMatch(/probe: 1-token chat answered ".*" \(1 token\)/);
    expect(done.steps.find((s) => s.kind === 'ssh')!.text).toBe('sudo systemctl restart llama-server.service');
    const types = app.store.audit.list({ limit: 500 }).filter((e) => e.payload.actionId === done.id).map((e) => e.type).reverse();
    expect(types).toEqual(['lifecycle.proposed', 'lifecycle.approved', 'lifecycle.running', 'lifecycle.drained', 'lifecycle.step', 'lifecycle.verified', 'lifecycle.resumed']);
    expect(app.store.audit.verify().ok).toBe(true);
  }, 30_000);

  it('a ghost keeping the port fails LIFECYCLE_GHOST_PROCESS, naming pid, process and port; it is left running', async () => {
    await until(() => view()?.health === 'ok' && view()?.stale === false, { timeoutMs: 10_000 });
    const ghostPid = sim().state().pid!;
    sim().ghostOnNextRestart();
    const done = await restart();
    expect(done.state).toBe('failed');
    expect(done.error).toMatch(new RegExp(`^LIFECYCLE_GHOST_PROCESS: pid ${ghostPid} \\(llama-server\\) still holds port 8080 on strix after the restart`));
    expect(done.error).toContain(`sudo kill ${ghostPid}`);
    expect(sim().state()).toMatchObject({ pid: ghostPid, ghost: true, process: 'up' }); // the console killed nothing
    const failed = app.store.audit.list({ limit: 500 }).find((e) => e.type === 'lifecycle.failed' && e.payload.actionId === done.id)!;
    expect(failed.payload).toMatchObject({ code: 'LIFECYCLE_GHOST_PROCESS', details: { pid: ghostPid, process: 'llama-server', port: 8080, host: 'strix' } });

    // It squats the port until killed: a second restart is refused the same way.
    const second = await restart();
    expect(second.error).toMatch(/^LIFECYCLE_GHOST_PROCESS: pid \d+ \(llama-server\)/);
    expect(sim().state().pid).toBe(ghostPid);

    // The operator follows the hint (kill <pid> on the host); the next restart starts a new process and verifies.
    expect(sim().kill(ghostPid)).toBe(true);
    const again = await restart();
    expect(again.state, `${again.error} ${again.observed.join('; ')}`).toBe('verified');
    expect(again.observed.join('\n')).toMatch(/port: nothing listened on :8080 before the restart/);
    expect(sim().state()).toMatchObject({ process: 'up', ghost: false });
    expect(sim().state().pid).not.toBe(ghostPid);
  }, 30_000);
});
