import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { ConfigSchema, type Config } from '../../../../src-main/core/config/index.js';
import { LifecyclePolicies, LifecycleService, lifecycleTargets } from '../../../../src-main/core/lifecycle/index.js';
import { openStore, type Store } from '../../../../src-main/core/store/index.js';
import type { FleetSnapshot, ServiceView } from '../../../../src-preload/contract/index.js';
import { urlClient } from '../../../helpers/upstream.js';
import { fleetStateOf } from '../../../helpers/fleet-state.js';

// Policies only PROPOSE: each condition, driven by fleet snapshots built here
// and a FakeClock, raises exactly one proposal per episode at its threshold
// (not before), and nothing is ever approved, drained or executed.

type Svc = Partial<ServiceView>;

let clock: FakeClock;
let store: Store;
let service: LifecycleService;
let touched: string[];
let load: { inFlight: number; queued: number };
let config: Config;
let policies: LifecyclePolicies;

const snap = (svc: Svc = {}): FleetSnapshot => ({
  at: clock.now(),
  hosts: [{
    label: 'h1', address: 'a', state: 'connected', lastError: null, nextRetryAt: null, hostKeyFingerprint: null, gpuModel: null, pricePerHourUsd: null,
    gpus: [], gpuStale: true, gpuStaleReason: 'x', updatedAt: null,
    services: [{
      id: 'qwen', kind: 'vllm', model: 'Q', aliases: [], slots: 4, remotePort: 8000, tunnel: { state: 'up', localUrl: null, lastError: null },
      health: 'ok', sleep: 'awake', requestsRunning: 0, requestsWaiting: 0, kvCachePct: 0, generationTokensPerS: 0, promptTokensPerS: 0, stale: false, staleReason: null,
      ...svc,
    } as ServiceView],
  }],
});
let current: FleetSnapshot;

beforeEach(() => {
  clock = new FakeClock();
  store = openStore({ file: join(mkdtempSync(join(tmpdir(), 'gc-lc-pol-')), 'db.sqlite'), clock, logger: silentLogger });
  touched = [];
  load = { inFlight: 0, queued: 0 };
  config = ConfigSchema.parse({
    hosts: [{
      label: 'h1', ssh: { host: 'x', user: 'u', agent: true },
      services: [{ id: 'qwen', kind: 'vllm', remotePort: 8000, model: 'Q', restartCommand: 'docker restart {service}', lifecycle: { idleSleepMinutes: 15, idleOffloadMinutes: 180, stuckSeconds: 90, healthFailures: 3 } }],
    }],
  });
  current = snap();
  service = new LifecycleService({
    store, clock, logger: silentLogger, targets: () => lifecycleTargets(config),
    fleet: {
      state: () => fleetStateOf(current),
      upstream: () => { touched.push('http'); return urlClient('http://127.0.0.1:9'); },
      exec: (_l, c) => { touched.push(`exec ${c}`); return Promise.resolve({ exitCode: 0, signal: null, stdout: '', stderr: '', truncated: false }); },
    },
    proxy: { drain: () => { touched.push('drain'); return Promise.resolve({ drained: 0, aborted: 0 }); }, resume: () => void touched.push('resume'), load: () => load },
    onAction: () => undefined, onStanding: () => undefined, notify: () => undefined,
  });
  policies = new LifecyclePolicies({ service, clock, logger: silentLogger, config: () => config, load: () => load });
});
afterEach(async () => {
  await service.dispose();
  store.close();
});

/** Advance the clock tick by tick (every `stepMs`) for `totalMs`, observing `svc` each time. */
function run(totalMs: number, svc: Svc = {}, stepMs = 60_000): void {
  for (let t = 0; t < totalMs; t += stepMs) {
    clock.advance(Math.min(stepMs, totalMs - t));
    current = snap(svc);
    policies.observe(fleetStateOf(current));
  }
}
const proposals = () => service.list(100).actions.map((a) => ({ kind: a.kind, state: a.state, proposer: a.proposer, reason: a.reason }));
const rejectPending = () => {
  for (const a of service.list(100).actions.filter((x) => x.state === 'proposed')) service.reject({ id: a.id, nonce: a.nonce!, reason: 'not now', caller: 'test' });
};

describe('policies only propose', () => {
  it('idle: sleep after 15 min, offload only after the longer 180 min; activity restarts the clock', () => {
    policies.observe(fleetStateOf(current));
    run(14 * 60_000);
    expect(proposals()).toEqual([]);
    run(60_000);
    expect(proposals()).toEqual([expect.objectContaining({ kind: 'sleep', state: 'proposed', proposer: 'policy:idle-sleep' })]);
    rejectPending();

    // Still idle (now asleep at level 1): no repeat sleep proposal, and no offload before 180 min.
    run(164 * 60_000, { sleep: 'asleep-1' });
    expect(proposals().filter((p) => p.state === 'proposed')).toEqual([]);
    run(60_000, { sleep: 'asleep-1' });
    expect(proposals().filter((p) => p.state === 'proposed')).toEqual([
      expect.objectContaining({ kind: 'offload', proposer: 'policy:idle-offload', reason: expect.stringContaining('offload after 180 min') as string }),
    ]);
    rejectPending();

    // Traffic at the proxy (queued there, not yet at the server) is not idle: the next episode starts over.
    load = { inFlight: 0, queued: 2 };
    run(60 * 60_000, { sleep: 'awake' });
    expect(proposals().filter((p) => p.state === 'proposed')).toEqual([]);
    load = { inFlight: 0, queued: 0 };
    run(14 * 60_000 + 59_000, { sleep: 'awake' }, 1_000 * 59);
    expect(proposals().filter((p) => p.state === 'proposed')).toEqual([]);
    run(2 * 60_000, { sleep: 'awake' });
    expect(proposals().filter((p) => p.state === 'proposed').map((p) => p.kind)).toEqual(['sleep']);
    expect(touched).toEqual([]);
  });

  it('busy with no tokens for 90 s → one restart proposal; tokens flowing ends the episode', () => {
    const stuck: Svc = { requestsRunning: 3, generationTokensPerS: 0 };
    policies.observe(fleetStateOf(snap(stuck)));
    run(85_000, stuck, 5_000);
    expect(proposals()).toEqual([]);
    run(5_000, stuck, 5_000);
    run(60_000, stuck, 5_000); // still stuck: not proposed again
    expect(proposals()).toEqual([
      expect.objectContaining({ kind: 'restart', state: 'proposed', proposer: 'policy:stuck-restart', reason: expect.stringContaining('3 requests running but no tokens') as string }),
    ]);
    rejectPending();
    // Busy but producing tokens: healthy work, never a restart.
    run(10 * 60_000, { requestsRunning: 3, generationTokensPerS: 42 }, 5_000);
    expect(proposals().filter((p) => p.state === 'proposed')).toEqual([]);
    // Idle with zero tokens is not "stuck" either (nothing is running).
    run(60_000, { requestsRunning: 0, generationTokensPerS: 0 }, 5_000);
    expect(proposals().filter((p) => p.kind === 'restart' && p.state === 'proposed')).toEqual([]);
    expect(touched).toEqual([]);
  });

  it('health failing 3 times in a row → one restart proposal; a good check resets the count', () => {
    run(2 * 10_000, { health: 'down' }, 10_000);
    run(10_000, { health: 'ok' }, 10_000);
    run(2 * 10_000, { health: 'down' }, 10_000);
    expect(proposals()).toEqual([]); // 2 + reset + 2: never 3 in a row
    run(10_000, { health: 'down' }, 10_000);
    run(5 * 10_000, { health: 'down' }, 10_000);
    expect(proposals()).toEqual([
      expect.objectContaining({ kind: 'restart', state: 'proposed', proposer: 'policy:unhealthy-restart', reason: expect.stringContaining('health failed 3 times in a row') as string }),
    ]);
    expect(touched).toEqual([]);
    expect(store.audit.list({ limit: 100 }).map((e) => e.type).filter((t) => t !== 'lifecycle.proposed' && t !== 'lifecycle.rejected')).toEqual([]);
  });
});
