import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { ConfigSchema, type Config } from '../../../../src-main/core/config/index.js';
import { LifecycleService, StoredWakePolicy, lifecycleTargets } from '../../../../src-main/core/lifecycle/index.js';
import { openStore, type Store } from '../../../../src-main/core/store/index.js';
import { fleetStateOf } from '../../../helpers/fleet-state.js';
import { urlClient } from '../../../helpers/upstream.js';

// Wake on request as lifecycle rules it, built before the proxy from the config and the standing
// approvals' table alone: the service's policy wakes on demand, its driver can wake it, and an
// unexpired, unrevoked standing approval of a wake covers it — all three, or the request is not held.

const configWith = (lifecycle: Record<string, unknown>, kind: 'vllm' | 'llama-server' = 'vllm'): Config =>
  ConfigSchema.parse({
    hosts: [{ label: 'h1', ssh: { host: 'x', user: 'u', agent: true }, services: [{ id: 'qwen', kind, remotePort: 8000, model: 'Q', lifecycle: { systemdUnit: 'vllm.service', ...lifecycle } }] }],
  });

let clock: FakeClock;
let store: Store;
let config: Config;
let service: LifecycleService;
let policy: StoredWakePolicy;

beforeEach(() => {
  clock = new FakeClock();
  store = openStore({ file: join(mkdtempSync(join(tmpdir(), 'gc-wake-policy-')), 'db.sqlite'), clock, logger: silentLogger });
  config = configWith({});
  policy = new StoredWakePolicy({ db: store.db, config: () => config, clock });
  // Only to grant and revoke standing approvals as an operator does; the policy reads the table itself.
  service = new LifecycleService({
    store, clock, logger: silentLogger, targets: () => lifecycleTargets(config),
    fleet: { state: () => fleetStateOf({ at: clock.now(), hosts: [] }), upstream: () => urlClient('http://127.0.0.1:9'), exec: () => Promise.reject(new Error('no exec')) },
    proxy: null, onAction: () => undefined, onStanding: () => undefined, notify: () => undefined,
  });
});
afterEach(async () => {
  await service.dispose();
  store.close();
});

describe('the wake policy handed to the proxy', () => {
  it('allows a wake only under an unexpired standing approval of a wake, for that service', () => {
    expect(policy.allowed('h1/qwen')).toBe(false);
    service.grantStanding({ upstream: 'h1/qwen', kind: 'sleep', durationMinutes: 60, caller: 'test' });
    expect(policy.allowed('h1/qwen'), 'a standing approval of another kind').toBe(false);
    const wake = service.grantStanding({ upstream: 'h1/qwen', kind: 'wake', durationMinutes: 60, caller: 'test' });
    expect(policy.allowed('h1/qwen')).toBe(true);
    expect(policy.allowed('h1/other'), 'another service').toBe(false);
    clock.advance(61 * 60_000);
    expect(policy.allowed('h1/qwen'), 'expired').toBe(false);
    service.grantStanding({ upstream: 'h1/qwen', kind: 'wake', durationMinutes: 60, caller: 'test' });
    expect(policy.allowed('h1/qwen')).toBe(true);
    service.revokeStanding(service.list(10).standing.find((s) => s.id !== wake.id && s.kind === 'wake')!.id, 'test');
    expect(policy.allowed('h1/qwen'), 'revoked').toBe(false);
  });

  it('not when the policy does not wake on demand, nor when the driver cannot wake', () => {
    service.grantStanding({ upstream: 'h1/qwen', kind: 'wake', durationMinutes: 60, caller: 'test' });
    expect(policy.allowed('h1/qwen')).toBe(true);
    config = configWith({ wakeOnDemand: false });
    expect(policy.allowed('h1/qwen')).toBe(false);
    config = configWith({}, 'llama-server');
    expect(service.supports('h1/qwen', 'wake')).toBe(false);
    expect(policy.allowed('h1/qwen')).toBe(false);
  });
});
