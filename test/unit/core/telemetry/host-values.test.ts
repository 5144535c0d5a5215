import { describe, expect, it } from 'vitest';
import { costValues, hostValuesOf } from '../../../../src-main/core/telemetry/index.js';
import type { HostView } from '../../../../src-preload/contract/fleet.js';
import { hostStateFromView } from '../../../helpers/fleet-state.js';

const host: HostView = {
  label: 'gpu-a',
  address: 'u@h:22',
  state: 'connected',
  lastError: null,
  nextRetryAt: null,
  hostKeyFingerprint: null,
  gpuModel: 'NVIDIA L20',
  pricePerHourUsd: 2.641736,
  gpus: [{ index: 0, uuid: 'GPU-a', name: 'NVIDIA L20', memoryUsedMiB: 38751, memoryTotalMiB: 46068, utilizationPct: 100, powerW: 254, powerLimitW: 350, temperatureC: 71 }],
  gpuStale: false,
  gpuStaleReason: null,
  services: [
    {
      id: 'qwen',
      kind: 'vllm',
      model: 'Qwen3.6-27B-FP8',
      aliases: [],
      slots: 4,
      remotePort: 8000,
      tunnel: { state: 'up', localUrl: null, lastError: null },
      health: 'ok',
      sleep: 'awake',
      requestsRunning: 4,
      requestsWaiting: 0,
      kvCachePct: 31.5,
      generationTokensPerS: 72.47,
      promptTokensPerS: 100,
      stale: false,
      staleReason: null,
    },
  ],
  updatedAt: 1,
};

describe('host values', () => {
  it('a fleet snapshot host → series values, with the cost per 1M tokens from the field notes', () => {
    const v = hostValuesOf(hostStateFromView(host, 0));
    expect(v['gpu.0.vram_used_mib']).toBe(38751);
    expect(v['svc.qwen.gen_tok_s']).toBe(72.47);
    expect(v['host.cost_usd_h']).toBe(2.641736);
    expect(v['host.cost_usd_per_mtok']).toBeCloseTo(10.1257, 3);
  });

  it('stale GPUs and services are gaps (null), not the last value repeated', () => {
    const v = hostValuesOf(hostStateFromView({ ...host, gpuStale: true, services: [{ ...host.services[0]!, stale: true }] }, 0));
    expect(v['gpu.0.vram_used_mib']).toBeNull();
    expect(v['svc.qwen.gen_tok_s']).toBeNull();
    expect(v['host.cost_usd_per_mtok']).toBeNull();
  });

  it('cost per 1M tokens is unavailable at zero throughput or without a price', () => {
    expect(costValues(2.64, 0)['host.cost_usd_per_mtok']).toBeNull();
    expect(costValues(null, 70)['host.cost_usd_h']).toBeNull();
  });
});
