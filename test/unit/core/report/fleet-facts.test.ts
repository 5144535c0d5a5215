import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../../src-main/core/config/index.js';
import type { HostState } from '../../../../src-main/core/fleet/index.js';
import { inventoryFromState, sessionFacts } from '../../../../src-main/core/report/fleet-facts.js';
import { emptyServiceReading, ServiceDeriver } from '../../../../src-main/core/telemetry/index.js';
import { hostStateFromView, serviceStateFromReading } from '../../../helpers/fleet-state.js';

// A report without live checks takes its inventory from the fleet's last state: the session's facts
// and the last readings (GPUs, a service's version and served model), never a fact from a reading
// that failed since, and never asks the host again.

const config = ConfigSchema.parse({
  hosts: [{ label: 'l20', ssh: { host: '10.0.0.5', user: 'ops', agent: true }, pricePerHourUsd: 2.5, services: [{ id: 'qwen', kind: 'vllm', remotePort: 8000, model: 'Qwen3-32B' }] }],
}).hosts[0]!;
const T = 1_700_000_000_000;

function hostWith(patch: (s: ReturnType<typeof serviceStateFromReading>) => Partial<ReturnType<typeof serviceStateFromReading>>): HostState {
  const reading = { ...emptyServiceReading('vllm'), health: 'ok' as const, sleepState: 'awake' as const, version: '0.11.0', modelName: 'Qwen3-32B', maxModelLen: 32768 };
  const svc = serviceStateFromReading('l20', config.services[0]!, reading, new ServiceDeriver().push(reading, T), { kind: 'vllm' }, T);
  const base = hostStateFromView({ label: 'l20', state: 'connected', hostKeyFingerprint: 'SHA256:abc', gpus: [{ index: 0, uuid: null, name: 'NVIDIA L20', memoryUsedMiB: 1, memoryTotalMiB: 46068, utilizationPct: 0, powerW: 1, powerLimitW: 2, temperatureC: 30 }] }, T);
  return { ...base, config, services: [{ ...svc, ...patch(svc) }] };
}

describe('the offline inventory from the fleet state', () => {
  it('a current reading: version and served model from it, GPUs and session from the state', () => {
    const inv = inventoryFromState(config, hostWith(() => ({})));
    expect(inv).toMatchObject({ label: 'l20', address: 'ops@10.0.0.5:22', connection: 'connected', hostKeyFingerprint: 'SHA256:abc', liveError: null, pricePerHourUsd: 2.5 });
    expect(inv.gpus).toEqual([{ index: 0, name: 'NVIDIA L20', memoryTotalMiB: 46068, driverVersion: null }]);
    expect(inv.services[0]).toMatchObject({ id: 'qwen', health: 'ok', serverVersion: '0.11.0', servedModels: [{ id: 'Qwen3-32B', maxContext: 32768 }] });
  });

  it('a reading that failed since gives no version or models (not carried over); loading is down by the report\'s own check', () => {
    const stale = inventoryFromState(config, hostWith(() => ({ stale: { code: 'UPSTREAM_TIMEOUT', message: 'no answer in 3 s' }, health: 'down' })));
    expect(stale.services[0]).toMatchObject({ health: 'down', serverVersion: null, servedModels: [] });
    expect(inventoryFromState(config, hostWith(() => ({ health: 'loading' }))).services[0]!.health).toBe('down');
  });

  it('a host the fleet does not hold: disconnected, no GPUs, services unknown', () => {
    const inv = inventoryFromState(config, undefined);
    expect(inv).toMatchObject({ connection: 'disconnected', hostKeyFingerprint: null, gpus: [], sshTransport: null });
    expect(inv.services[0]).toMatchObject({ health: 'unknown', serverVersion: null, servedModels: [] });
    expect(sessionFacts(undefined)).toEqual({ hostKeyFingerprint: null, connection: 'disconnected', sshTransport: null });
  });
});
