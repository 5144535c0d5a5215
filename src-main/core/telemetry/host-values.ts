import { gpuSeries, hostSeries, serviceSeries, SERVER_FIGURES, type GpuFigure, type HostConnectionState, type ServerFigure, type ServiceHealth } from '../../../src-preload/contract/index.js';
import type { ServiceFigures } from './derive.js';
import type { GpuReading, ServiceReading } from './readings.js';

// One host's values for one tick, keyed by series name (the contract's series
// vocabulary, series-names.ts): what the series store records and
// `telemetry.tick` carries. Read from the fleet's own state (its readings and
// derived figures are numbers there already), declared here as what telemetry
// needs of it: the fleet's FleetState satisfies it (telemetry may not import
// the fleet, which builds its sources from telemetry).

export type HostValues = Record<string, number | null>;

/** A coded cause of a stale figure (the fleet's StaleCause). */
export interface Cause {
  readonly code: string;
  readonly message: string;
}

/** `CODE: message`, as the fleet writes a cause for a person. */
export const causeOf = (cause: Cause): string => `${cause.code}: ${cause.message}`;

/** What telemetry reads of one host of the fleet's state. */
export interface HostReadings {
  readonly label: string;
  readonly config: { readonly pricePerHourUsd?: number | null };
  readonly session: { readonly state: HostConnectionState; readonly lastError: { readonly code: string } | null };
  readonly gpus: { readonly readings: readonly GpuReading[]; readonly stale: Cause | null };
  /** Host health over SSH (the fleet's HostHealthState); null when off. */
  readonly health?: HostHealthReadings | null;
  readonly services: readonly {
    readonly id: string;
    readonly stale: Cause | null;
    readonly figures: ServiceFigures | null;
    readonly reading: ServiceReading | null;
    /** As the server answers it (the alert rules' service_down); absent when not known. */
    readonly health?: ServiceHealth;
    /** 1 or 2 while asleep on purpose, 0 awake, null unknown. */
    readonly sleepLevel?: 0 | 1 | 2 | null;
  }[];
}

/** What telemetry reads of a host's health: the last good figures, stale while a round fails. */
export interface HostHealthReadings {
  readonly stale: Cause | null;
  readonly figures: {
    readonly memTotalBytes: number | null;
    readonly memAvailableBytes: number | null;
    readonly swapTotalBytes: number | null;
    readonly swapFreeBytes: number | null;
    readonly load1: number | null;
    readonly disks: readonly { readonly kind: string; readonly freeBytes: number | null }[];
  } | null;
}

const GIB = 1024 ** 3;
const minus = (a: number | null, b: number | null) => (a === null || b === null ? null : a - b);
const gib = (bytes: number | null) => (bytes === null ? null : Math.round((bytes / GIB) * 1000) / 1000);

/** Disk free on / and on the first model cache, RAM and swap used, RAM available, load; gaps while stale or unknown. */
export function healthValues(health: HostHealthReadings | null | undefined, out: HostValues = {}): HostValues {
  if (health === undefined || health === null) return out;
  const f = health.stale === null ? health.figures : null;
  out[hostSeries('disk_root_free_gib')] = gib(f?.disks.find((d) => d.kind === 'root')?.freeBytes ?? null);
  out[hostSeries('disk_cache_free_gib')] = gib(f?.disks.find((d) => d.kind === 'cache')?.freeBytes ?? null);
  out[hostSeries('mem_used_gib')] = gib(minus(f?.memTotalBytes ?? null, f?.memAvailableBytes ?? null));
  out[hostSeries('mem_available_gib')] = gib(f?.memAvailableBytes ?? null);
  out[hostSeries('swap_used_gib')] = gib(minus(f?.swapTotalBytes ?? null, f?.swapFreeBytes ?? null));
  out[hostSeries('load1')] = f?.load1 ?? null;
  return out;
}

/** What telemetry reads of one state of the fleet (at the end of a poll round). */
export interface FleetReadings {
  readonly at: number;
  readonly hosts: readonly HostReadings[];
}

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
 * One host's values for a round: its GPU readings, each fresh service's derived
 * figures (from the fleet's ServiceDeriver) or, where a service has none yet,
 * the request gauges of its last reading. Stale figures are gaps. Also the
 * host's total generation rate, whether any request was in flight
 * (`host.busy_pct`: 100 or 0, so a bucket's mean is the busy share), and the
 * run rate with the instantaneous cost per 1M output tokens.
 */
export function hostValuesOf(host: HostReadings): HostValues {
  const out: HostValues = {};
  gpuValues(
    host.gpus.stale !== null
      ? host.gpus.readings.map((g) => ({
          index: g.index,
          memoryUsedMiB: null,
          memoryTotalMiB: null,
          utilizationPct: null,
          powerW: null,
          temperatureC: null,
          ...(g.gttUsedMiB !== undefined ? { gttUsedMiB: null, gttTotalMiB: null } : {}),
        }))
      : host.gpus.readings,
    out,
  );
  let gen = 0;
  let genKnown = false;
  let busy: boolean | null = null;
  for (const s of host.services) {
    const name = (f: ServerFigure) => serviceSeries(s.id, f);
    if (s.stale !== null) {
      staleServiceValues(s.id, out);
      continue;
    }
    if (s.figures !== null) serviceValues(s.id, s.figures, out);
    else {
      // No window yet (a first reading, a loading server): the gauges it answered, no rates.
      out[name('running')] = s.reading?.running ?? null;
      out[name('waiting')] = s.reading?.waiting ?? null;
      out[name('kv_pct')] = null;
      out[name('prompt_tok_s')] = null;
      out[name('gen_tok_s')] = null;
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
  costValues(host.config.pricePerHourUsd ?? null, genKnown ? gen : null, out);
  healthValues(host.health, out);
  return out;
}
