import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { ConfigSchema, type Config } from '../../../../src-main/core/config/index.js';
import { isStuck, LifecyclePolicies, LifecycleService, lifecycleTargets } from '../../../../src-main/core/lifecycle/index.js';
import { openStore, type Store } from '../../../../src-main/core/store/index.js';
import type { FleetSnapshot, ServiceView } from '../../../../src-preload/contract/index.js';
import { urlClient } from '../../../helpers/upstream.js';
import { fleetStateOf, serviceStateFromView } from '../../../helpers/fleet-state.js';

// The policies on llama-server, fed the fields the fleet view fills for it
// (sleep from /props is_sleeping or the router's model status, requests and a
// live token rate from /slots, sleepControl): one that sleeps by itself is
// never asked to sleep; in router mode an idle loaded model is proposed for
// unloading; busy with no tokens proposes a restart, but only when the rate is
// live (its counters alone stand still while a long request generates).

type Svc = Partial<ServiceView>;

let clock: FakeClock;
let store: Store;
let service: LifecycleService;
let config: Config;
let policies: LifecyclePolicies;
let touched: string[];

const llamaView = (svc: Svc): ServiceView => ({
  id: 'llama', kind: 'llama-server', model: 'qwen3', aliases: [], slots: 2, remotePort: 8080, tunnel: { state: 'up', localUrl: null, lastError: null },
  health: 'ok', sleep: 'awake', requestsRunning: 0, requestsWaiting: 0, kvCachePct: 0, generationTokensPerS: 0, promptTokensPerS: 0, stale: false, staleReason: null,
  sleepControl: 'automatic', rateBasis: 'live', slotsReported: 2,
  ...svc,
});
const stateOf = (svc: Svc) => serviceStateFromView('strix', llamaView(svc), clock.now());
const snap = (svc: Svc): FleetSnapshot => ({
  at: clock.now(),
  hosts: [{
    label: 'strix', address: 'a', state: 'connected', lastError: null, nextRetryAt: null, hostKeyFingerprint: null, gpuModel: null, pricePerHourUsd: null,
    gpus: [], gpuStale: true, gpuStaleReason: 'x', updatedAt: null, services: [llamaView(svc)],
  }],
});

function build(lifecycle: Record<string, unknown>): void {
  config = ConfigSchema.parse({
    hosts: [{ label: 'strix', ssh: { host: 'x', user: 'u', agent: true }, services: [{ id: 'llama', kind: 'llama-server', remotePort: 8080, model: 'qwen3', lifecycle: { systemdUnit: 'llama-server.service', idleSleepMinutes: 15, stuckSeconds: 60, ...lifecycle } }] }],
  });
  service = new LifecycleService({
    store, clock, logger: silentLogger, targets: () => lifecycleTargets(config),
    fleet: {
      state: () => fleetStateOf(snap({})),
      upstream: () => { touched.push('http'); return urlClient('http://127.0.0.1:9'); },
      exec: (_l, c) => { touched.push(`exec ${c}`); return Promise.resolve({ exitCode: 0, signal: null, stdout: '', stderr: '', truncated: false }); },
    },
    proxy: null,
    onAction: () => undefined, onStanding: () => undefined, notify: () => undefined,
  });
  policies = new LifecyclePolicies({ service, clock, logger: silentLogger, config: () => config, load: () => ({ inFlight: 0, queued: 0 }) });
}

beforeEach(() => {
  clock = new FakeClock();
  store = openStore({ file: join(mkdtempSync(join(tmpdir(), 'gc-lc-lpol-')), 'db.sqlite'), clock, logger: silentLogger });
  touched = [];
});
afterEach(async () => {
  await service.dispose();
  store.close();
});

function run(totalMs: number, svc: Svc, stepMs = 10_000): void {
  for (let t = 0; t < totalMs; t += stepMs) {
    clock.advance(stepMs);
    policies.observe(fleetStateOf(snap(svc)));
  }
}
const proposed = () => service.list(100).actions.filter((a) => a.state === 'proposed').map((a) => ({ kind: a.kind, proposer: a.proposer }));

describe('policies on llama-server', () => {
  it('sleeps by itself (--sleep-idle-seconds): idle for hours proposes no sleep, no offload; a sleeping-model request proposes no wake', () => {
    build({ idleOffloadMinutes: 60 });
    run(3 * 60 * 60_000, {}, 60_000);
    run(60 * 60_000, { sleep: 'asleep-2' }, 60_000);
    policies.sleepingRequest('strix/llama');
    expect(proposed()).toEqual([]);
    expect(touched).toEqual([]);
  });

  it('router mode: an idle loaded model is proposed for unloading once; one the router put to sleep is not', () => {
    build({ driver: 'llama-router' });
    const loaded: Svc = { sleepControl: 'manual', routerModels: [{ id: 'qwen3', status: 'loaded' }], sleep: 'awake' };
    run(14 * 60_000, loaded, 60_000);
    expect(proposed()).toEqual([]);
    run(3 * 60_000, loaded, 60_000);
    expect(proposed()).toEqual([{ kind: 'sleep', proposer: 'policy:idle-sleep' }]);
    const p = service.list(10).actions[0]!;
    expect(p.steps.find((s) => s.kind === 'http')!.text).toMatch(/^POST http:\/\/127\.0\.0\.1:8080\/models\/unload /);
    expect(p.expectedEffect).toMatch(/unloads qwen3/);
    service.reject({ id: p.id, nonce: p.nonce!, reason: 'no', caller: 'test' });
    run(60 * 60_000, { ...loaded, sleep: 'asleep-2', routerModels: [{ id: 'qwen3', status: 'sleeping' }] }, 60_000);
    expect(proposed()).toEqual([]); // no offload either: router mode has none
  });

  it('busy with a live rate of 0 tokens for stuckSeconds → one restart proposal (by the unit); counters-only or prefill → none', () => {
    build({});
    const stuck: Svc = { requestsRunning: 1, generationTokensPerS: 0, promptTokensPerS: 0 };
    run(50_000, stuck);
    expect(proposed()).toEqual([]);
    run(30_000, stuck);
    expect(proposed()).toEqual([{ kind: 'restart', proposer: 'policy:stuck-restart' }]);
    expect(service.list(10).actions[0]!.steps.find((s) => s.kind === 'ssh')!.text).toBe('sudo -n systemctl restart llama-server.service');
    const a = service.list(10).actions[0]!;
    service.reject({ id: a.id, nonce: a.nonce!, reason: 'no', caller: 'test' });

    run(10 * 60_000, { ...stuck, rateBasis: 'counters' }); // counters move only when a request finishes
    run(10 * 60_000, { ...stuck, promptTokensPerS: 300 }); // a long prompt being read
    run(10 * 60_000, { ...stuck, sleep: 'asleep-2' });
    expect(proposed()).toEqual([]);
    expect(touched).toEqual([]);
  });

  it('isStuck reads sleep, health, running, both rates and the rate basis', () => {
    expect(isStuck(stateOf({ requestsRunning: 2 }))).toBe(true);
    expect(isStuck(stateOf({ requestsRunning: 2, sleep: 'unknown' }))).toBe(true); // an older build without is_sleeping
    expect(isStuck(stateOf({ requestsRunning: 2, rateBasis: null }))).toBe(false);
    expect(isStuck(stateOf({ requestsRunning: 2, generationTokensPerS: null }))).toBe(false);
    expect(isStuck(stateOf({ requestsRunning: 2, health: 'down' }))).toBe(false);
    expect(isStuck(stateOf({ requestsRunning: 0 }))).toBe(false);
    expect(isStuck(stateOf({ requestsRunning: 2, rateBasis: 'counters', kind: 'vllm' }))).toBe(true);
  });

  it('without a restart command, nothing is proposed for it (no proposal that could only fail)', () => {
    build({ systemdUnit: undefined });
    run(5 * 60_000, { requestsRunning: 1 });
    run(60_000, { health: 'down' }, 5_000);
    expect(proposed()).toEqual([]);
  });
});
