import type { HostView } from '../../../src-preload/contract/fleet.js';
import type { ServiceFigures } from './derive.js';
import type { GpuReading } from './readings.js';

// One host's values for one tick, keyed by series name (see MetricNameSchema
// in the contract): what the series store records and `telemetry.tick` carries.

export type HostValues = Record<string, number | null>;

type GpuFigures = Pick<GpuReading, 'index' | 'memoryUsedMiB' | 'memoryTotalMiB' | 'utilizationPct' | 'powerW' | 'temperatureC' | 'gttUsedMiB' | 'gttTotalMiB'>;

/** GTT series exist only for GPUs that report GTT (AMD); NVIDIA hosts get no empty columns. */
export function gpuValues(gpus: readonly GpuFigures[], out: HostValues = {}): HostValues {
  for (const g of gpus) {
    const p = `gpu.${g.index}.`;
    out[p + 'vram_used_mib'] = g.memoryUsedMiB;
    out[p + 'vram_total_mib'] = g.memoryTotalMiB;
    out[p + 'util_pct'] = g.utilizationPct;
    out[p + 'power_w'] = g.powerW;
    out[p + 'temp_c'] = g.temperatureC;
    if (g.gttUsedMiB !== undefined || g.gttTotalMiB !== undefined) {
      out[p + 'gtt_used_mib'] = g.gttUsedMiB ?? null;
      out[p + 'gtt_total_mib'] = g.gttTotalMiB ?? null;
    }
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
  out[p + 'prompt_cache_pct'] = f.promptCacheReusePct;
  out[p + 'spec_accept_pct'] = f.specAcceptancePct;
  out[p + 'ttft_p50_s'] = f.ttftP50S;
  out[p + 'ttft_p95_s'] = f.ttftP95S;
  out[p + 'ttft_p95_le_s'] = f.ttftP95LeS;
  out[p + 'itl_p50_s'] = f.itlP50S;
  out[p + 'itl_p95_s'] = f.itlP95S;
  out[p + 'e2e_p50_s'] = f.e2eP50S;
  out[p + 'e2e_p95_s'] = f.e2eP95S;
  return out;
}

const SERVICE_FIGURES = [
  'running',
  'waiting',
  'kv_pct',
  'kv_tokens',
  'kv_capacity_tokens',
  'prompt_tok_s',
  'gen_tok_s',
  'finished_req_s',
  'prefix_hit_pct',
  'prompt_cache_pct',
  'spec_accept_pct',
  'ttft_p50_s',
  'ttft_p95_s',
  'ttft_p95_le_s',
  'itl_p50_s',
  'itl_p95_s',
  'e2e_p50_s',
  'e2e_p95_s',
] as const;

/** Null every value of a service (a stale tick is a gap in the charts, not the last value repeated). */
export function staleServiceValues(serviceId: string, out: HostValues = {}): HostValues {
  const p = `svc.${serviceId}.`;
  for (const k of SERVICE_FIGURES) out[p + k] = null;
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
 * One host's values for a tick: GPUs from the snapshot, each fresh service's
 * derived figures (`figures`, from the fleet's ServiceDeriver) or, where a
 * service has none yet, what the snapshot carries. Stale figures are gaps.
 * Also the host's total generation rate, whether any request was in flight
 * (`host.busy_pct`: 100 or 0, so a bucket's mean is the busy share), and the
 * run rate with the instantaneous cost per 1M output tokens.
 */
export function hostValuesFromView(host: HostView, figures: ReadonlyMap<string, ServiceFigures> = new Map()): HostValues {
  const out: HostValues = {};
  gpuValues(
    host.gpuStale
      ? host.gpus.map((g) => ({
          index: g.index,
          memoryUsedMiB: null,
          memoryTotalMiB: null,
          utilizationPct: null,
          powerW: null,
          temperatureC: null,
          ...(g.gttUsedMiB !== undefined ? { gttUsedMiB: null, gttTotalMiB: null } : {}),
        }))
      : host.gpus,
    out,
  );
  let gen = 0;
  let genKnown = false;
  let busy: boolean | null = null;
  for (const s of host.services) {
    const p = `svc.${s.id}.`;
    if (s.stale) {
      staleServiceValues(s.id, out);
      continue;
    }
    const f = figures.get(s.id);
    if (f !== undefined) serviceValues(s.id, f, out);
    else {
      out[p + 'running'] = s.requestsRunning;
      out[p + 'waiting'] = s.requestsWaiting;
      out[p + 'kv_pct'] = s.kvCachePct;
      out[p + 'prompt_tok_s'] = s.promptTokensPerS;
      out[p + 'gen_tok_s'] = s.generationTokensPerS;
    }
    const g = out[p + 'gen_tok_s'] ?? null;
    if (g !== null) {
      gen += g;
      genKnown = true;
    }
    const running = out[p + 'running'] ?? null;
    if (running !== null || g !== null) busy = busy === true || (running ?? 0) > 0 || (g ?? 0) > 0;
  }
  out['host.gen_tok_s'] = genKnown ? gen : null;
  out['host.busy_pct'] = busy === null ? null : busy ? 100 : 0;
  costValues(host.pricePerHourUsd, genKnown ? gen : null, out);
  return out;
}
