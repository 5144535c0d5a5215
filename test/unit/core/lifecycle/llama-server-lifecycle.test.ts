import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger, systemClock } from '../../../../src-main/core/base/index.js';
import { ConfigSchema, type ConfigInput } from '../../../../src-main/core/config/index.js';
import { LifecycleService, lifecycleTargets, type LifecycleTargetConfig } from '../../../../src-main/core/lifecycle/index.js';
import { openStore, type Store } from '../../../../src-main/core/store/index.js';
import { LifecycleTargetSchema, type ActionView, type FleetSnapshot } from '../../../../src-preload/contract/index.js';
import { startFakeLlama, type FakeLlama } from './fake-llama.js';
import { urlClient } from '../../../helpers/upstream.js';
import { fleetStateOf } from '../../../helpers/fleet-state.js';

// llama-server through the whole action queue, against a loopback stand-in
// and a fake host (exec): restart by the systemd unit named in config, with
// drain and verify (port owner, /health through "Loading model", /props, one
// token of chat); a ghost still on the port is named and fails the action
// with nothing killed; router mode loads and unloads through /models.

const UNIT_CMD = 'sudo -n systemctl restart llama-server.service';

let llama: FakeLlama;
let store: Store;
let service: LifecycleService;
let targets: readonly LifecycleTargetConfig[];
let drains: number;
let resumes: number;

function configFor(lifecycle: Record<string, unknown>, port: number): ConfigInput {
  return {
    hosts: [{ label: 'strix', ssh: { host: 'x', user: 'ops', agent: true }, services: [{ id: 'llama', kind: 'llama-server', remotePort: port, model: 'tiny-random-llama', lifecycle }] }],
  };
}

const snapshot = (): FleetSnapshot => ({
  at: Date.now(),
  hosts: [{
    label: 'strix', address: 'ops@x', state: 'connected', lastError: null, nextRetryAt: null, hostKeyFingerprint: null, gpuModel: null, pricePerHourUsd: null,
    gpus: [], gpuStale: true, gpuStaleReason: 'x', updatedAt: null,
    services: [{
      id: 'llama', kind: 'llama-server', model: 'tiny-random-llama', aliases: [], slots: 4, remotePort: llama.port, tunnel: { state: 'up', localUrl: llama.url, lastError: null },
      health: 'ok', sleep: 'awake', requestsRunning: 0, requestsWaiting: 0, kvCachePct: 0, generationTokensPerS: 0, promptTokensPerS: 0, stale: false, staleReason: null,
      sleepControl: 'automatic',
    }],
  }],
});

async function setup(lifecycle: Record<string, unknown>, router?: Record<string, 'unloaded' | 'loaded'>): Promise<void> {
  llama = await startFakeLlama({ restartCommand: UNIT_CMD, router });
  targets = lifecycleTargets(ConfigSchema.parse(configFor(lifecycle, llama.port)));
  store = openStore({ file: join(mkdtempSync(join(tmpdir(), 'gc-lc-llama-')), 'db.sqlite'), clock: systemClock, logger: silentLogger });
  drains = 0;
  resumes = 0;
  service = new LifecycleService({
    store, clock: systemClock, logger: silentLogger, targets: () => targets,
    fleet: { state: () => fleetStateOf(snapshot()), upstream: () => urlClient(llama.url), exec: (label, command) => llama.exec(label, command) },
    proxy: { drain: () => (drains++, Promise.resolve({ drained: 1, aborted: 0 })), resume: () => void resumes++, load: () => ({ inFlight: 1, queued: 0 }) },
    onAction: () => undefined, onStanding: () => undefined, notify: () => undefined,
    options: { verifyDeadlineMs: () => 3_000, pollMs: 40, portReleaseGraceMs: 200 },
  });
}

afterEach(async () => {
  await service?.dispose();
  store?.close();
  await llama?.close();
});

async function approve(kind: ActionView['kind']): Promise<ActionView> {
  const { action } = service.propose({ upstream: 'strix/llama', kind, proposer: 'test' });
  service.approve({ id: action.id, nonce: action.nonce!, typedLabel: 'strix', caller: 'test' });
  return service.settled(action.id);
}

describe('llama-server: what is offered, and why not', () => {
  beforeEach(() => setup({ systemdUnit: 'llama-server.service' }));

  it('naming the systemd unit offers restart; sleep, wake and offload say why they are not buttons', () => {
    const [t] = service.targetDetails();
    expect(t).toMatchObject({ driver: 'llama-server', supported: ['restart'] });
    const why = Object.fromEntries(t!.unavailable.map((u) => [u.kind, u.reason]));
    expect(why.sleep).toMatch(/sleeps by itself after --sleep-idle-seconds.*wakes on the next one/);
    expect(why.wake).toBe(why.sleep);
    expect(why.offload).toMatch(/router mode \(lifecycle\.driver: llama-router\)/);
    // the contract carries the reasons, for the Actions view to show on its disabled buttons
    expect(LifecycleTargetSchema.parse(service.targets()[0])).toMatchObject({ unavailable: t!.unavailable });
    expect(() => service.propose({ upstream: 'strix/llama', kind: 'sleep', proposer: 'test' })).toThrow(/sleeps by itself/);
  });

  it('without a unit, compose service or command: nothing offered, and the reason says what to configure', () => {
    targets = lifecycleTargets(ConfigSchema.parse(configFor({}, llama.port)));
    const [t] = service.targetDetails();
    expect(t!.supported).toEqual([]);
    expect(t!.unavailable.find((u) => u.kind === 'restart')!.reason).toMatch(/lifecycle\.systemdUnit.*lifecycle\.compose\.service.*lifecycle\.restartCommand/);
  });
});

describe('llama-server restart: drain, the unit, verify', () => {
  beforeEach(() => setup({ systemdUnit: 'llama-server.service' }));

  it('restarts by sudo -n systemctl, waits through 503 Loading model, and verifies port owner, /props and one token', async () => {
    const { action } = service.propose({ upstream: 'strix/llama', kind: 'restart', proposer: 'test' });
    expect(action.steps.map((s) => s.kind)).toEqual(['drain', 'ssh', 'verify']);
    expect(action.steps[1]!.text).toBe(UNIT_CMD);
    expect(action.steps[2]!.text).toMatch(/ss -ltnp.*GET \/health answers 200 \(503 "Loading model" is waited for.*total_slots.*1-token chat/);
    expect(action.expectedEffect).toMatch(/stopped and started by its systemd unit/);
    expect(llama.commands).toEqual([]); // proposing runs nothing
    service.approve({ id: action.id, nonce: action.nonce!, typedLabel: 'strix', caller: 'test' });
    const done = await service.settled(action.id);
    const seen = done.observed.join('\n');
    expect(done.state, `${done.error} ${seen}`).toBe('verified');
    expect(seen).toMatch(new RegExp(`port: :${llama.port} was pid 4242 \\(llama-server\\), now pid 5242 \\(llama-server\\)`));
    expect(seen).toMatch(/health: HTTP 200/);
    expect(seen).toMatch(/props: 4 slots, n_ctx 1024 per slot, model tiny-random-llama, build b10573-d775b89/);
    expect(seen).toMatch(/probe: 1-token chat answered "ki" \(1 token\)/);
    expect(llama.commands).toEqual(['ss -ltnp', UNIT_CMD, 'ss -ltnp']);
    expect(llama.calls.filter((c) => c === 'GET /health').length).toBeGreaterThan(1); // it was loading at first
    expect(JSON.parse(llama.bodies.at(-1)!)).toMatchObject({ model: 'tiny-random-llama', max_tokens: 1 });
    expect({ drains, resumes }).toEqual({ drains: 1, resumes: 1 });
    expect(done).toMatchObject({ drained: 1, aborted: 0 });
  });

  it('a ghost still holding the port fails with LIFECYCLE_GHOST_PROCESS naming pid, process and port; nothing is killed', async () => {
    llama.ghostOnNextRestart = true; // the old process keeps answering 200 — only the port owner gives it away
    const done = await approve('restart');
    expect(done.state).toBe('failed');
    expect(done.error).toMatch(new RegExp(`^LIFECYCLE_GHOST_PROCESS: pid 4242 \\(llama-server\\) still holds port ${llama.port} on strix after the restart`));
    expect(done.error).toMatch(new RegExp(`sudo kill 4242.*sudo fuser -k ${llama.port}/tcp`));
    expect(done.observed.join('\n')).toMatch(/✗ port: ghost — pid 4242 \(llama-server\)/);
    expect(llama.commands.filter((c) => c !== 'ss -ltnp')).toEqual([UNIT_CMD]); // no kill, no fuser
    const row = store.audit.list({ limit: 50 }).find((e) => e.type === 'lifecycle.failed' && e.payload.actionId === done.id)!;
    expect(row.payload).toMatchObject({ code: 'LIFECYCLE_GHOST_PROCESS', details: { pid: 4242, process: 'llama-server', port: llama.port, host: 'strix' } });
    expect(resumes).toBe(1);
  });

  it('no ss on the host, or ss without pids (not root): said in the lines, the restart still verified', async () => {
    llama.ss = 'missing';
    let done = await approve('restart');
    expect(done.state, done.error ?? '').toBe('verified');
    expect(done.observed.join('\n')).toMatch(/port: ss is not installed on strix; old and new process not compared/);

    llama.ss = 'no-pid';
    done = await approve('restart');
    expect(done.state, done.error ?? '').toBe('verified');
    expect(done.observed.join('\n')).toMatch(/port: ss showed a listener on :\d+ but not its process \(ss shows other users' processes only to root\)/);
  });

  it('sudo asking for a password fails the step with the exit, stderr and what to change', async () => {
    llama.restartExit = 1;
    llama.restartStderr = 'sudo: a password is required\n';
    const done = await approve('restart');
    expect(done.state).toBe('failed');
    expect(done.error).toMatch(/^LIFECYCLE_STEP_FAILED: step 1 \(sudo -n systemctl restart llama-server\.service\) failed: exited 1: sudo: a password is required — sudo wants a password.*NOPASSWD.*lifecycle\.useSudo: false/);
    const step = store.audit.list({ limit: 50 }).find((e) => e.type === 'lifecycle.step' && e.payload.actionId === done.id)!;
    expect(step.payload).toMatchObject({ exitCode: 1, hint: expect.stringContaining('NOPASSWD') as string });
  });

  it('a server that never finishes loading fails at the deadline, saying it was still loading', async () => {
    llama.loadMs = 60_000;
    const done = await approve('restart');
    expect(done.state).toBe('failed');
    expect(done.error).toMatch(/not verified within .*✗ health: HTTP 503 Loading model \(still loading/);
    expect(done.observed.join('\n')).toMatch(/✗ probe: not attempted \(health and props did not hold in time\)/);
  });
});

describe('llama-server router mode (driver llama-router)', () => {
  beforeEach(() => setup({ driver: 'llama-router', systemdUnit: 'llama-server.service' }, { 'tiny-random-llama': 'unloaded', other: 'loaded' }));

  it('wake = POST /models/load, verified by GET /models loaded and one token; sleep = POST /models/unload', async () => {
    const [t] = service.targetDetails();
    expect(t).toMatchObject({ driver: 'llama-router', supported: ['wake', 'sleep', 'restart'] });
    expect(t!.unavailable).toEqual([{ kind: 'offload', reason: expect.stringMatching(/sleep unloads tiny-random-llama/) as string }]);

    const wake = service.propose({ upstream: 'strix/llama', kind: 'wake', proposer: 'test' }).action;
    expect(wake.steps.filter((s) => s.kind === 'http')).toEqual([
      { kind: 'http', text: `POST http://127.0.0.1:${llama.port}/models/load  (on strix, through the SSH tunnel)`, body: '{"model":"tiny-random-llama"}' },
    ]);
    service.approve({ id: wake.id, nonce: wake.nonce!, caller: 'test' });
    const woke = await service.settled(wake.id);
    expect(woke.state, `${woke.error} ${woke.observed.join('; ')}`).toBe('verified');
    expect(woke.observed.join('\n')).toMatch(/router: tiny-random-llama loaded[\s\S]*probe: 1-token chat answered/);

    const chats = llama.calls.filter((c) => c === 'POST /v1/chat/completions').length;
    const slept = await approve('sleep');
    expect(slept.state, `${slept.error} ${slept.observed.join('; ')}`).toBe('verified');
    expect(slept.observed.join('\n')).toMatch(/router: tiny-random-llama unloaded/);
    expect(llama.calls.filter((c) => c.startsWith('POST /models'))).toEqual(['POST /models/load', 'POST /models/unload']);
    expect(llama.calls.filter((c) => c === 'POST /v1/chat/completions').length).toBe(chats); // no probe after an unload (it would load it again)
    expect(llama.router!.get('other')!.value).toBe('loaded');
  });

  it("the router's errors are the action's: a failed load (exit code) and an unknown model", async () => {
    llama.loadFails.add('tiny-random-llama');
    const failed = await approve('wake');
    expect(failed.state).toBe('failed');
    expect(failed.error).toMatch(/^LIFECYCLE_ROUTER_LOAD_FAILED: the router reports tiny-random-llama failed to load \(its llama-server exited 1\)/);

    llama.router!.delete('tiny-random-llama');
    const unknown = await approve('wake');
    expect(unknown.state).toBe('failed');
    expect(unknown.error).toMatch(/^LIFECYCLE_STEP_FAILED: step 1 \(POST .*\/models\/load .*HTTP 400 invalid_request_error: model not found: tiny-random-llama/);
  });
});
