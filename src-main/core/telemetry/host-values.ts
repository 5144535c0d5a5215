import type { HostView } from '../../../src-preload/contract/fleet.js';
import type { ServiceFigures } from './derive.js';
import type { GpuReading } from './readings.js';

// One host's values for one tick, keyed by series name (see MetricNameSchema
// in the contract): what the series store records and `telemetry.tick` carries.

export type HostValues = Record<string, number | null>;

export function gpuValues(gpus: readonly Pick<GpuReading, 'index' | 'memoryUsedMiB' | 'memoryTotalMiB' | 'utilizationPct' | 'powerW' | 'temperatureC'>[], out: HostValues = {}): HostValues {
  for (const g of gpus) {
    const p = `gpu.${g.index}.`;
    out[p + 'vram_used_mib'] = g.memoryUsedMiB;
    out[p + 'vram_total_mib'] = g.memoryTotalMiB;
    out[p + 'util_pct'] = g.utilizationPct;
    out[p + 'power_w'] = g.powerW;
    out[p + 'temp_c'] = g.temperatureC;
  }
  return out;
}

export function serviceValues(serviceId: string, f: ServiceFigures, out: HostValues = {}): HostValues {
  const p = `svc.${serviceId}.`;
  out[p + 'running'] = f.running;
  out[p + 'waiting'] = f.waiting;
  out[p + 'kv_pct'] = f.kvCachePct;
  out[p + 'kv_tokens'] = f.kvTokensInUse;
  out[p + 'kv_capacity_tokens'] = f.kvCapacityTokens;
  out[p + 'prompt_tok_s'] = f.promptTokPerS;
  out[p + 'gen_tok_s'] = f.genTokPerS;
  out[p + 'finished_req_s'] = f.requestsPerS;
  out[p + 'prefix_hit_pct'] = f.prefixHitPct;
  out[p + 'ttft_p50_s'] = f.ttftP50S;
  out[p + 'ttft_p95_s'] = f.ttftP95S;
  out[p + 'itl_p50_s'] = f.itlP50S;
  out[p + 'itl_p95_s'] = f.itlP95S;
  out[p + 'e2e_p50_s'] = f.e2eP50S;
  out[p + 'e2e_p95_s'] = f.e2eP95S;
  return out;
}

/** Null every value of a service (a stale tick is a gap in the charts, not the last value repeated). */
export function staleServiceValues(serviceId: string, out: HostValues = {}): HostValues {
  const p = `svc.${serviceId}.`;
  for (const k of ['running', 'waiting', 'kv_pct', 'kv_tokens', 'prompt_tok_s', 'gen_tok_s', 'ttft_p95_s', 'e2e_p95_s']) out[p + k] = null;
  return out;
}

/**
 * Run rate and the instantaneous cost per 1M output tokens (all services of the
 * host together). Null when the price or the throughput is unknown or zero.
 */
export function costValues(pricePerHourUsd: number | null, genTokPerS: number | null, out: HostValues = {}): HostValues {
  out['host.cost_usd_h'] = pricePerHourUsd;
  out['host.cost_usd_per_mtok'] =
    pricePerHourUsd !== null && genTokPerS !== null && genTokPerS > 0 ? (pricePerHourUsd / (3600 * genTokPerS)) * 1e6 : null;
  return out;
}

/**
 * The figures a fleet snapshot already carries (no latency percentiles): for
 * wiring the store to FleetService.onDidTick before the fleet uses the
 * telemetry sources. Stale figures are recorded as gaps.
 */
export function hostValuesFromView(host: HostView): HostValues {
  const out: HostValues = {};
  gpuValues(
    host.gpuStale
      ? host.gpus.map((g) => ({ index: g.index, memoryUsedMiB: null, memoryTotalMiB: null, utilizationPct: null, powerW: null, temperatureC: null }))
      : host.gpus,
    out,
  );
  let gen = 0;
  let genKnown = false;
  for (const s of host.services) {
    const p = `svc.${s.id}.`;
    if (s.stale) {
      staleServiceValues(s.id, out);
      continue;
    }
    out[p + 'running'] = s.requestsRunning;
    out[p + 'waiting'] = s.requestsWaiting;
    out[p + 'kv_pct'] = s.kvCachePct;
    out[p + 'prompt_tok_s'] = s.promptTokensPerS;
    out[p + 'gen_tok_s'] = s.generationTokensPerS;
    if (s.generationTokensPerS !== null) {
      gen += s.generationTokensPerS;
      genKnown = true;
    }
  }
  costValues(host.pricePerHourUsd, genKnown ? gen : null, out);
  return out;
}
