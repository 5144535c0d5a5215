import { describe, expect, it } from 'vitest';
import type { FleetSnapshot, HostView, ServiceView } from '../../../../src-preload/contract/index.js';
import { escapeLabelValue, parsePrometheusText, renderFleetExposition } from '../../../../src-main/core/telemetry/index.js';

// The fleet in Prometheus text: names and units, one HELP and TYPE per family,
// label values escaped, unknown and stale figures left out (never 0).

const service = (over: Partial<ServiceView> = {}): ServiceView => ({
  id: 'qwen',
  kind: 'vllm',
  model: 'Qwen3.6-27B-FP8',
  aliases: [],
  slots: 4,
  remotePort: 8000,
  tunnel: { state: 'up', localUrl: 'http://127.0.0.1:40001', lastError: null, lastProbe: { ok: true, at: 1, latencyMs: 12.5, error: null } },
  health: 'ok',
  sleep: 'awake',
  requestsRunning: 2,
  requestsWaiting: 0,
  kvCachePct: 31,
  generationTokensPerS: 412.5,
  promptTokensPerS: null,
  stale: false,
  staleReason: null,
  ...over,
});

const host = (over: Partial<HostView> = {}): HostView => ({
  label: 'gpu-a',
  address: 'ops@10.0.0.5:22',
  state: 'connected',
  lastError: null,
  nextRetryAt: null,
  hostKeyFingerprint: null,
  gpuModel: 'L40S',
  pricePerHourUsd: 1.2,
  gpus: [{ index: 0, uuid: 'GPU-1', name: 'NVIDIA L40S', memoryUsedMiB: 1024, memoryTotalMiB: 46068, utilizationPct: 50, powerW: 200, powerLimitW: 350, temperatureC: 60, vendor: 'nvidia' }],
  gpuStale: false,
  gpuStaleReason: null,
  gpuVendor: 'nvidia',
  services: [service()],
  updatedAt: 1,
  ...over,
});

const render = (hosts: HostView[]) => renderFleetExposition({ at: 0, hosts } satisfies FleetSnapshot);
const lines = (text: string) => text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));

describe('renderFleetExposition', () => {
  it('writes hosts, GPUs, services and tunnels in Prometheus naming and base units', () => {
    const text = render([host()]);
    const samples = lines(text);
    expect(samples).toEqual(
      expect.arrayContaining([
        'gpu_console_host_connected{host="gpu-a"} 1',
        'gpu_console_host_gpu_figures_stale{host="gpu-a"} 0',
        'gpu_console_gpu_memory_used_bytes{host="gpu-a",gpu="0",vendor="nvidia",name="NVIDIA L40S"} 1073741824',
        `gpu_console_gpu_memory_total_bytes{host="gpu-a",gpu="0",vendor="nvidia",name="NVIDIA L40S"} ${46068 * 1024 * 1024}`,
        'gpu_console_gpu_utilization_ratio{host="gpu-a",gpu="0",vendor="nvidia",name="NVIDIA L40S"} 0.5',
        'gpu_console_gpu_power_watts{host="gpu-a",gpu="0",vendor="nvidia",name="NVIDIA L40S"} 200',
        'gpu_console_gpu_power_limit_watts{host="gpu-a",gpu="0",vendor="nvidia",name="NVIDIA L40S"} 350',
        'gpu_console_gpu_temperature_celsius{host="gpu-a",gpu="0",vendor="nvidia",name="NVIDIA L40S"} 60',
        'gpu_console_service_up{host="gpu-a",service="qwen",kind="vllm",model="Qwen3.6-27B-FP8"} 1',
        'gpu_console_service_requests_running{host="gpu-a",service="qwen"} 2',
        'gpu_console_service_requests_waiting{host="gpu-a",service="qwen"} 0',
        'gpu_console_service_kv_cache_usage_ratio{host="gpu-a",service="qwen"} 0.31',
        'gpu_console_service_generation_tokens_per_second{host="gpu-a",service="qwen"} 412.5',
        'gpu_console_service_sleep_state{host="gpu-a",service="qwen",state="awake"} 1',
        'gpu_console_service_sleep_state{host="gpu-a",service="qwen",state="asleep-1"} 0',
        'gpu_console_tunnel_state{host="gpu-a",service="qwen",state="up"} 1',
        'gpu_console_tunnel_state{host="gpu-a",service="qwen",state="failed"} 0',
        'gpu_console_tunnel_probe_latency_seconds{host="gpu-a",service="qwen"} 0.0125',
        'gpu_console_tunnel_probe_success{host="gpu-a",service="qwen"} 1',
      ]),
    );
    // Reads back whole: every line a sample of a typed family, nothing unreadable.
    const parsed = parsePrometheusText(text);
    expect(parsed.errors).toBe(0);
    // Error counts are counters (named _total); every other family is a gauge.
    expect(parsed.families.every((f) => f.type === (f.name.endsWith('_total') ? 'counter' : 'gauge') && f.help !== '')).toBe(true);
    expect(parsed.families.reduce((n, f) => n + f.samples.length, 0)).toBe(samples.length);
  });

  it('one HELP and one TYPE per family, each family\'s lines together, across hosts', () => {
    const text = render([host(), host({ label: 'gpu-b', services: [service({ id: 'gemma' })] })]);
    const types = text.split('\n').filter((l) => l.startsWith('# TYPE '));
    expect(new Set(types).size).toBe(types.length);
    let current = '';
    const seen = new Set<string>();
    for (const l of text.split('\n')) {
      if (l.startsWith('# TYPE ')) {
        current = l.split(' ')[2]!;
        expect(seen.has(current)).toBe(false);
        seen.add(current);
      } else if (l !== '' && !l.startsWith('#')) expect(l.startsWith(`${current}{`) || l.startsWith(`${current} `)).toBe(true);
    }
  });

  it('leaves unknown figures out, never 0', () => {
    const text = render([
      host({
        gpus: [{ index: 0, uuid: null, name: 'GPU', memoryUsedMiB: null, memoryTotalMiB: null, utilizationPct: null, powerW: null, powerLimitW: null, temperatureC: null }],
        gpuVendor: null,
        services: [service({ health: 'unknown', requestsRunning: null, requestsWaiting: null, kvCachePct: null, generationTokensPerS: null, tunnel: { state: 'connecting', localUrl: null, lastError: null } })],
      }),
    ]);
    const samples = lines(text);
    expect(samples.filter((l) => l.startsWith('gpu_console_gpu_'))).toEqual([]);
    expect(samples.filter((l) => /^gpu_console_service_(up|requests|kv|generation|prompt)/.test(l))).toEqual([]);
    expect(samples.some((l) => l.startsWith('gpu_console_tunnel_probe'))).toBe(false);
    expect(samples).toContain('gpu_console_tunnel_state{host="gpu-a",service="qwen",state="connecting"} 1');
    // HELP and TYPE stay, so the scrape has a stable shape.
    expect(text).toContain('# TYPE gpu_console_gpu_power_watts gauge');
  });

  it('stale figures (the last good ones of a failing scrape) are left out and flagged', () => {
    const samples = lines(render([host({ gpuStale: true, state: 'reconnecting', services: [service({ stale: true, staleReason: 'X: y', health: 'down' })] })]));
    expect(samples).toContain('gpu_console_host_connected{host="gpu-a"} 0');
    expect(samples).toContain('gpu_console_host_gpu_figures_stale{host="gpu-a"} 1');
    expect(samples).toContain('gpu_console_service_figures_stale{host="gpu-a",service="qwen"} 1');
    expect(samples).toContain('gpu_console_service_up{host="gpu-a",service="qwen",kind="vllm",model="Qwen3.6-27B-FP8"} 0');
    expect(samples.filter((l) => l.startsWith('gpu_console_gpu_') || l.startsWith('gpu_console_service_requests'))).toEqual([]);
  });

  it('escapes label values (backslash, quote, newline) and they read back unchanged', () => {
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd');
    const model = 'we"ird\\model\nname';
    const text = render([host({ services: [service({ model })] })]);
    const up = parsePrometheusText(text).families.find((f) => f.name === 'gpu_console_service_up')!;
    expect(up.samples[0]!.labels['model']).toBe(model);
  });

  it('an empty fleet still declares every family', () => {
    const text = render([]);
    expect(lines(text)).toEqual([]);
    expect(text.match(/^# TYPE /gm)!.length).toBeGreaterThanOrEqual(20);
  });
});
