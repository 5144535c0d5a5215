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

// Issue #27 finding 7, on the policy side: a llama-server that answers /health
// 503 "Loading model" read as `down` before, so the unhealthy-restart policy
// counted every poll of a normal load as a failed health check and proposed
// restarting a server that was starting. Loading is not a failure (nor a
// recovery): only `down` counts.

let clock: FakeClock;
let store: Store;
let service: LifecycleService;
let policies: LifecyclePolicies;

const view = (health: ServiceView['health']): ServiceView => ({
  id: 'llama', kind: 'llama-server', model: 'qwen3', aliases: [], slots: 2, remotePort: 8080, tunnel: { state: 'up', localUrl: null, lastError: null },
  health, sleep: health === 'ok' ? 'awake' : 'unknown', requestsRunning: null, requestsWaiting: null, kvCachePct: null, generationTokensPerS: null, promptTokensPerS: null,
  stale: false, staleReason: null, sleepControl: 'automatic',
});
const snap = (health: ServiceView['health']): FleetSnapshot => ({
  at: clock.now(),
  hosts: [{
    label: 'strix', address: 'a', state: 'connected', lastError: null, nextRetryAt: null, hostKeyFingerprint: null, gpuModel: null, pricePerHourUsd: null,
    gpus: [], gpuStale: true, gpuStaleReason: 'x', updatedAt: null, services: [view(health)],
  }],
});

beforeEach(() => {
  clock = new FakeClock();
  store = openStore({ file: join(mkdtempSync(join(tmpdir(), 'gc-lc-loading-')), 'db.sqlite'), clock, logger: silentLogger });
  const config: Config = ConfigSchema.parse({
    hosts: [{ label: 'strix', ssh: { host: 'x', user: 'u', agent: true }, services: [{ id: 'llama', kind: 'llama-server', remotePort: 8080, model: 'qwen3', lifecycle: { systemdUnit: 'llama-server.service', healthFailures: 3 } }] }],
  });
  service = new LifecycleService({
    store, clock, logger: silentLogger, targets: () => lifecycleTargets(config),
    fleet: { state: () => fleetStateOf(snap('ok')), upstream: () => urlClient('http://127.0.0.1:9'), exec: () => Promise.reject(new Error('no exec')) },
    proxy: null,
    onAction: () => undefined, onStanding: () => undefined, notify: () => undefined,
  });
  policies = new LifecyclePolicies({ service, clock, logger: silentLogger, config: () => config, load: () => ({ inFlight: 0, queued: 0 }) });
});
afterEach(async () => {
  await service.dispose();
  store.close();
});

function observe(health: ServiceView['health'], polls: number): void {
  for (let i = 0; i < polls; i++) {
    clock.advance(1_000);
    policies.observe(fleetStateOf(snap(health)));
  }
}
const proposals = () => service.list(100).actions.filter((a) => a.state === 'proposed').map((a) => `${a.kind} ${a.proposer}`);

describe('the unhealthy-restart policy and a loading server', () => {
  it('a long load proposes nothing; polls that are really down still count', () => {
    observe('loading', 120);
    expect(proposals()).toEqual([]);
    observe('down', 2);
    observe('loading', 5);
    expect(proposals()).toEqual([]);
    observe('down', 1);
    expect(proposals()).toEqual(['restart policy:unhealthy-restart']);
  });
});
