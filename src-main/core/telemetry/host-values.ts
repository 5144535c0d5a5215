import { gpuSeries, hostSeries, serviceSeries, SERVER_FIGURES, type GpuFigure, type HostView, type ServerFigure } from '../../../src-preload/contract/index.js';
import type { ServiceFigures } from './derive.js';
import type { GpuReading } from './readings.js';

// One host's values for one tick, keyed by series name (the contract's series
// vocabulary, series-names.ts): what the series store records and
// `telemetry.tick` carries.

export type HostValues = Record<string, number | null>;

type GpuFigures = Pick<GpuReading, 'index' | 'memoryUsedMiB' | 'memoryTotalMiB' | 'utilizationPct' | 'powerW' | 'temperatureC' | 'gttUsedMiB' | 'gttTotalMiB'>;

/** GTT series exist only for GPUs that report GTT (AMD); NVIDIA hosts get no empty columns. */
export function gpuValues(gpus: readonly GpuFigures[], out: HostValues = {}): HostValues {
  for (const g of gpus) {
    const name = (f: GpuFigure) => gpuSeries(g.index, f);
    out[name('vram_used_mib')] = g.memoryUsedMiB;
    out[name('vram_total_mib')] = g.memoryTotalMiB;
    out[name('util_pct')] = g.utilizationPct;
    out[name('power_w')] = g.powerW;
    out[name('temp_c')] = g.temperatureC;
    if (g.gttUsedMiB !== undefined || g.gttTotalMiB !== undefined) {
      out[name('gtt_used_mib')] = g.gttUsedMiB ?? null;
      out[name('gtt_total_mib')] = g.gttTotalMiB ?? null;
    }
  }
  return out;
}

/** A server's derived figures under their series names (every figure of SERVER_FIGURES). */
export function serviceValues(serviceId: string, f: ServiceFigures, out: HostValues = {}): HostValues {
  const figures: Record<ServerFigure, number | null> = {
    running: f.running,
    waiting: f.waiting,
    kv_pct: f.kvCachePct,
    kv_tokens: f.kvTokensInUse,
    kv_capacity_tokens: f.kvCapacityTokens,
    prompt_tok_s: f.promptTokPerS,
    gen_tok_s: f.genTokPerS,
    finished_req_s: f.requestsPerS,
    prefix_hit_pct: f.prefixHitPct,
    prompt_cache_pct: f.promptCacheReusePct,
    spec_accept_pct: f.specAcceptancePct,
    ttft_p50_s: f.ttftP50S,
    ttft_p95_s: f.ttftP95S,
    ttft_p95_le_s: f.ttftP95LeS,
    itl_p50_s: f.itlP50S,
    itl_p95_s: f.itlP95S,
    e2e_p50_s: f.e2eP50S,
    e2e_p95_s: f.e2eP95S,
  };
  for (const k of SERVER_FIGURES) out[serviceSeries(serviceId, k)] = figures[k];
  return out;
}

/** Null every value of a service (a stale tick is a gap in the charts, not the last value repeated). */
export function staleServiceValues(serviceId: string, out: HostValues = {}): HostValues {
  for (const k of SERVER_FIGURES) out[serviceSeries(serviceId, k)] = null;
  return out;
}

/**
 * Run rate and the instantaneous cost per 1M output tokens (all services of the
 * host together). Null when the price or the throughput is unknown or zero.
 */
export function costValues(pricePerHourUsd: number | null, genTokPerS: number | null, out: HostValues = {}): HostValues {
  out[hostSeries('cost_usd_h')] = pricePerHourUsd;
  out[hostSeries('cost_usd_per_mtok')] =
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
    const name = (f: ServerFigure) => serviceSeries(s.id, f);
    if (s.stale) {
      staleServiceValues(s.id, out);
      continue;
    }
    const f = figures.get(s.id);
    if (f !== undefined) serviceValues(s.id, f, out);
    else {
      out[name('running')] = s.requestsRunning;
      out[name('waiting')] = s.requestsWaiting;
      out[name('kv_pct')] = s.kvCachePct;
      out[name('prompt_tok_s')] = s.promptTokensPerS;
      out[name('gen_tok_s')] = s.generationTokensPerS;
    }
    const g = out[name('gen_tok_s')] ?? null;
    if (g !== null) {
      gen += g;
      genKnown = true;
    }
    const running = out[name('running')] ?? null;
    if (running !== null || g !== null) busy = busy === true || (running ?? 0) > 0 || (g ?? 0) > 0;
  }
  out[hostSeries('gen_tok_s')] = genKnown ? gen : null;
  out[hostSeries('busy_pct')] = busy === null ? null : busy ? 100 : 0;
  costValues(host.pricePerHourUsd, genKnown ? gen : null, out);
  return out;
}
