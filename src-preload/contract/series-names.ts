import { z } from 'zod';
import { TrafficClassSchema, type TrafficClass } from './proxy.js';

// The series vocabulary: every figure the console records per GPU, per service
// and per host, and the one way to build and read a series name
// (`gpu.<index>.<figure>`, `svc.<serviceId>.<figure>`, `host.<figure>`). The
// recorder (core telemetry), MetricNameSchema and the renderer's chart panels
// all use these lists; a figure that is not here cannot be recorded or charted.
// Names carry their unit (STYLE "Units in names"): metricUnit reads it.

/** Per GPU, from nvidia-smi / amd-smi / sysfs / Prometheus. GTT only where the GPU reports it (AMD). */
export const GPU_FIGURES = ['vram_used_mib', 'vram_total_mib', 'gtt_used_mib', 'gtt_total_mib', 'util_pct', 'power_w', 'temp_c'] as const;
export type GpuFigure = (typeof GPU_FIGURES)[number];

/** Per service, from its server (vLLM, llama-server); every one is nulled together when the service is stale. */
export const SERVER_FIGURES = [
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
export type ServerFigure = (typeof SERVER_FIGURES)[number];

const PROXY_CLASS_KINDS = ['wait', 'ttft'] as const;
const PERCENTILES = ['50', '95'] as const;
/** What the console's proxy measured for one class of one upstream. */
export type ProxyClassFigure = `proxy_${TrafficClass}_${(typeof PROXY_CLASS_KINDS)[number]}_p${(typeof PERCENTILES)[number]}_s`;

/** Per service, measured at the console's proxy (queue, and latency over all classes for servers without histograms). */
export const PROXY_FIGURES = [
  'proxy_queued',
  'proxy_ttft_p50_s',
  'proxy_ttft_p95_s',
  'proxy_e2e_p50_s',
  'proxy_e2e_p95_s',
  ...TrafficClassSchema.options.flatMap((c) => PROXY_CLASS_KINDS.flatMap((k) => PERCENTILES.map((p) => `proxy_${c}_${k}_p${p}_s` as ProxyClassFigure))),
] as const;
export type ProxyFigure = (typeof PROXY_FIGURES)[number];

/** Per service, the cost estimate's share. */
export const SERVICE_COST_FIGURES = ['cost_usd_per_mtok'] as const;

export type ServiceFigure = ServerFigure | ProxyFigure | (typeof SERVICE_COST_FIGURES)[number];
export const SERVICE_FIGURES: readonly ServiceFigure[] = [...SERVER_FIGURES, ...PROXY_FIGURES, ...SERVICE_COST_FIGURES];

/** Per host: the services' total generation, the busy share, the cost estimates, and its health (disk free on / and the first model cache, RAM and swap used, RAM available, 1-minute load). */
export const HOST_FIGURES = [
  'gen_tok_s', 'busy_pct', 'cost_usd_h', 'cost_usd_per_mtok', 'cost_usage_usd_per_mtok', 'cost_reserved_usd_per_mtok',
  'disk_root_free_gib', 'disk_cache_free_gib', 'mem_used_gib', 'mem_available_gib', 'swap_used_gib', 'load1',
] as const;
export type HostFigure = (typeof HOST_FIGURES)[number];

export type GpuSeriesName = `gpu.${number}.${GpuFigure}`;
export type ServiceSeriesName = `svc.${string}.${ServiceFigure}`;
export type HostSeriesName = `host.${HostFigure}`;
export type SeriesName = GpuSeriesName | ServiceSeriesName | HostSeriesName;

export function gpuSeries(index: number, figure: GpuFigure): GpuSeriesName {
  return `gpu.${index}.${figure}`;
}

export function serviceSeries(serviceId: string, figure: ServiceFigure): ServiceSeriesName {
  return `svc.${serviceId}.${figure}`;
}

export function hostSeries(figure: HostFigure): HostSeriesName {
  return `host.${figure}`;
}

export type ParsedSeriesName =
  | { scope: 'gpu'; index: number; figure: GpuFigure }
  | { scope: 'svc'; serviceId: string; figure: ServiceFigure }
  | { scope: 'host'; figure: HostFigure };

const GPU_SET: ReadonlySet<string> = new Set(GPU_FIGURES);
const SERVICE_SET: ReadonlySet<string> = new Set(SERVICE_FIGURES);
const HOST_SET: ReadonlySet<string> = new Set(HOST_FIGURES);

/** A series name read back into its parts; null for a name outside the vocabulary. */
export function parseSeriesName(name: string): ParsedSeriesName | null {
  const gpu = /^gpu\.(\d{1,3})\.([a-z0-9_]+)$/.exec(name);
  if (gpu) return GPU_SET.has(gpu[2]!) ? { scope: 'gpu', index: Number(gpu[1]), figure: gpu[2] as GpuFigure } : null;
  // A service id holds no '.' (config), so the figure is what follows the second dot.
  const svc = /^svc\.([^.]+)\.([a-z0-9_]+)$/.exec(name);
  if (svc) return SERVICE_SET.has(svc[2]!) ? { scope: 'svc', serviceId: svc[1]!, figure: svc[2] as ServiceFigure } : null;
  const host = /^host\.([a-z0-9_]+)$/.exec(name);
  if (host) return HOST_SET.has(host[1]!) ? { scope: 'host', figure: host[1] as HostFigure } : null;
  return null;
}

/** Which figures a chart or a reader wants, per scope. */
export interface SeriesSelection {
  readonly gpu?: readonly GpuFigure[];
  readonly svc?: readonly ServiceFigure[];
  readonly host?: readonly HostFigure[];
}

/** A test for series names: in the vocabulary, of a scope `selection` names, with one of its figures. */
export function seriesMatcher(selection: SeriesSelection): (name: string) => boolean {
  const wanted = { gpu: new Set<string>(selection.gpu ?? []), svc: new Set<string>(selection.svc ?? []), host: new Set<string>(selection.host ?? []) };
  return (name) => {
    const parsed = parseSeriesName(name);
    return parsed !== null && wanted[parsed.scope].has(parsed.figure);
  };
}

/** A series name of the vocabulary (`gpu.<0-999>.<figure>`, `svc.<serviceId>.<figure>`, `host.<figure>`). */
export const MetricNameSchema = z.string().refine((name) => parseSeriesName(name) !== null, { message: 'not a series name of the console (see GPU_FIGURES, SERVICE_FIGURES, HOST_FIGURES)' });
