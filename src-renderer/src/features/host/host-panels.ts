// Pure pieces of the host view: which series each chart shows, value
// formatting with units, and SeriesResult / live ticks → echarts data. No
// React, no DOM: tested in test/unit/renderer/host-panels.test.ts.
import type { HostTick, MetricUnit, SeriesRange, SeriesResult } from '../../../../src-preload/contract/telemetry.js';
import { SERIES_RANGES, metricUnit } from '../../../../src-preload/contract/telemetry.js';
import { hostSeries, seriesMatcher } from '../../../../src-preload/contract/series-names.js';
import { TrafficClassSchema } from '../../../../src-preload/contract/proxy.js';
import type { GpuVendor } from '../../../../src-preload/contract/fleet.js';
import { PROXY_LATENCY_LABEL } from '../../../../src-preload/contract/latency.js';

/** A chart's unit: the series' own, or GiB for host health (the vocabulary names it `_gib`, which MetricUnit does not list). */
export type PanelUnit = MetricUnit | 'GiB';

export interface PanelDef {
  readonly id: string;
  readonly title: string;
  readonly unit: PanelUnit;
  /** Series patterns for the query (`prefix*` or exact). */
  readonly patterns: readonly string[];
  readonly match: (metric: string) => boolean;
  readonly yMax?: number;
  /** Lines without a known point in the range stay out of the legend (figures most servers never report). */
  readonly legendKnownOnly?: boolean;
}

export const HOST_PANELS: readonly PanelDef[] = [
  // AMD hosts add GTT (system memory the GPU maps; on an APU it holds the model); NVIDIA hosts have no GTT series
  { id: 'vram', title: 'VRAM used per GPU', unit: 'MiB', patterns: ['gpu.*'], match: seriesMatcher({ gpu: ['vram_used_mib', 'gtt_used_mib'] }) },
  { id: 'util', title: 'GPU utilisation', unit: '%', patterns: ['gpu.*'], match: seriesMatcher({ gpu: ['util_pct'] }), yMax: 100 },
  { id: 'power', title: 'Power', unit: 'W', patterns: ['gpu.*'], match: seriesMatcher({ gpu: ['power_w'] }) },
  { id: 'temp', title: 'Temperature', unit: '°C', patterns: ['gpu.*'], match: seriesMatcher({ gpu: ['temp_c'] }) },
  { id: 'kv', title: 'KV cache', unit: '%', patterns: ['svc.*'], match: seriesMatcher({ svc: ['kv_pct'] }), yMax: 100 },
  { id: 'queue', title: 'Requests running / waiting', unit: 'req', patterns: ['svc.*'], match: seriesMatcher({ svc: ['running', 'waiting'] }) },
  {
    id: 'cache',
    title: 'Prefix hit · prompt-cache reuse · spec. acceptance',
    unit: '%',
    patterns: ['svc.*'],
    match: seriesMatcher({ svc: ['prefix_hit_pct', 'prompt_cache_pct', 'spec_accept_pct'] }),
    yMax: 100,
    legendKnownOnly: true,
  },
  { id: 'tok', title: 'Tokens per second', unit: 'tok/s', patterns: ['svc.*'], match: seriesMatcher({ svc: ['gen_tok_s', 'prompt_tok_s'] }) },
  // The server's histograms, or what the proxy measured where the server keeps none (host-latency.ts chooses per service)
  {
    id: 'latency',
    title: 'TTFT / end-to-end p50 · p95',
    unit: 's',
    patterns: ['svc.*'],
    match: seriesMatcher({ svc: ['ttft_p50_s', 'ttft_p95_s', 'e2e_p50_s', 'e2e_p95_s', 'proxy_ttft_p50_s', 'proxy_ttft_p95_s', 'proxy_e2e_p50_s', 'proxy_e2e_p95_s'] }),
    legendKnownOnly: true,
  },
  {
    id: 'proxy-wait',
    title: 'Proxy queue wait p95 per class',
    unit: 's',
    patterns: ['svc.*'],
    match: seriesMatcher({ svc: TrafficClassSchema.options.map((c) => `proxy_${c}_wait_p95_s` as const) }),
  },
  { id: 'cost', title: 'Cost per 1M output tokens (estimate, last 5 min)', unit: 'USD/1M tok', patterns: ['host.*'], match: seriesMatcher({ host: ['cost_usage_usd_per_mtok', 'cost_reserved_usd_per_mtok'] }) },
];

/** The host's health over time (issue #29 item 2): read every host-health round (15 s by default), repeated in each tick. */
export const HOST_HEALTH_PANELS: readonly PanelDef[] = [
  { id: 'disk', title: 'Disk free: / and model cache', unit: 'GiB', patterns: ['host.*'], match: seriesMatcher({ host: ['disk_root_free_gib', 'disk_cache_free_gib'] }) },
  { id: 'mem', title: 'RAM used · available · swap used', unit: 'GiB', patterns: ['host.*'], match: seriesMatcher({ host: ['mem_used_gib', 'mem_available_gib', 'swap_used_gib'] }) },
  { id: 'load', title: 'Load average (1 min)', unit: '', patterns: ['host.*'], match: seriesMatcher({ host: ['load1'] }) },
];

export const RANGES: readonly SeriesRange[] = ['15m', '1h', '24h', '7d'];

/** A panel's title for a host: the memory panel names GTT on AMD hosts. */
export function panelTitle(panel: PanelDef, vendor: GpuVendor | null | undefined): string {
  if (panel.id === 'vram' && vendor === 'amd') return 'VRAM and GTT used per GPU';
  return panel.title;
}

/** All patterns the view needs in one query. */
export function panelPatterns(panels: readonly PanelDef[] = HOST_PANELS): string[] {
  return [...new Set(panels.flatMap((p) => p.patterns))];
}

/** A legend name an operator reads: `gpu.3.util_pct` → `GPU 3`, `svc.qwen.ttft_p95_s` → `qwen TTFT p95`. */
export function seriesLabel(metric: string): string {
  const gpu = /^gpu\.(\d+)\.(.+)$/.exec(metric);
  if (gpu) {
    const memory = /^(vram|gtt)_used_mib$/.exec(gpu[2]!);
    return memory ? `GPU ${gpu[1]} ${memory[1]!.toUpperCase()}` : `GPU ${gpu[1]}`;
  }
  const svc = /^svc\.([^.]+)\.(.+)$/.exec(metric);
  if (svc) {
    const figure = svc[2]!
      .replace(/_(tok_s|s|pct)$/, '')
      .replace(/^gen$/, 'generation')
      .replace(/^kv$/, 'KV')
      .replace(/^prefix_hit$/, 'prefix hit')
      .replace(/^prompt_cache$/, 'prompt-cache reuse')
      .replace(/^spec_accept$/, 'spec. acceptance')
      .replace(/^proxy_(interactive|system|batch)_wait_p95$/, '$1 wait p95')
      .replace(/^proxy_(ttft|e2e)_p(\d+)$/, (_, k: string, p: string) => `${k.toUpperCase()} p${p} (${PROXY_LATENCY_LABEL})`)
      .replace(/^(ttft|e2e|itl)_p(\d+)$/, (_, k: string, p: string) => `${k.toUpperCase()} p${p}`);
    // TTFT percentiles are read from histogram buckets: the true value lies at or
    // below the bucket bound, the line between bounds is interpolated (the fleet
    // card shows the bound itself, "≤ 0.5 s")
    const derived = /^ttft_p\d+_s$/.test(svc[2]!) ? ' (≤ bucket bound, interpolated)' : '';
    return `${svc[1]} ${figure}${derived}`;
  }
  if (metric === hostSeries('cost_usd_per_mtok')) return 'USD per 1M output tokens';
  if (metric === hostSeries('cost_usage_usd_per_mtok')) return 'USD per 1M output tokens (busy time)';
  if (metric === hostSeries('cost_reserved_usd_per_mtok')) return 'USD per 1M output tokens (all time)';
  if (metric === hostSeries('cost_usd_h')) return 'USD per hour';
  const health = HEALTH_LABELS[metric];
  if (health !== undefined) return health;
  return metric;
}

const HEALTH_LABELS: Readonly<Record<string, string>> = {
  [hostSeries('disk_root_free_gib')]: 'free on /',
  [hostSeries('disk_cache_free_gib')]: 'free on the model cache',
  [hostSeries('mem_used_gib')]: 'RAM used',
  [hostSeries('mem_available_gib')]: 'RAM available',
  [hostSeries('swap_used_gib')]: 'swap used',
  [hostSeries('load1')]: 'load 1 min',
};

/** A value with its unit for tooltips and axes; unknown is "—". */
export function formatValue(value: number | null | undefined, unit: PanelUnit): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  switch (unit) {
    case 'MiB':
      return `${(value / 1024).toFixed(1)} GiB`;
    case 'GiB':
      return `${value.toFixed(1)} GiB`;
    case '%':
      return `${value < 10 ? value.toFixed(1) : value.toFixed(0)}%`;
    case 'W':
      return `${value.toFixed(0)} W`;
    case '°C':
      return `${value.toFixed(0)} °C`;
    case 's':
      return value < 1 ? `${(value * 1000).toFixed(0)} ms` : `${value.toFixed(2)} s`;
    case 'tok/s':
      return `${value >= 100 ? value.toFixed(0) : value.toFixed(1)} tok/s`;
    case 'req':
      return `${Math.round(value)}`;
    case 'USD/h':
      return `$${value.toFixed(2)}/h`;
    case 'USD/1M tok':
      return `$${value.toFixed(2)} / 1M tok (est.)`;
    default:
      return `${Number(value.toPrecision(4))}${unit ? ` ${unit}` : ''}`;
  }
}

export type Point = [number, number | null];

/**
 * How far apart two samples may be and still be joined by a line: a little over
 * two sample intervals. Live ticks arrive about every 2 s, so never under 6 s.
 */
export function gapThresholdMs(stepMs: number): number {
  return Math.max(2.5 * stepMs, 6_000);
}

/**
 * Missing samples drawn as gaps: the series store answers only buckets that
 * hold data (a host that was down, a console that was not running leave no
 * bucket at all), so a null point is put after every jump longer than the
 * threshold — echarts (connectNulls false) then breaks the line instead of
 * drawing a diagonal across the hole.
 */
export function insertGaps(points: readonly Point[], stepMs: number): Point[] {
  const limit = gapThresholdMs(stepMs);
  const out: Point[] = [];
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    const prev = points[i - 1];
    if (prev !== undefined && prev[1] !== null && p[0] - prev[0] > limit) out.push([prev[0] + stepMs, null]);
    out.push(p);
  }
  return out;
}

/** One panel's lines, keyed by metric: points [t, value] from a SeriesResult, with gaps as null points. */
export function panelSeries(panel: PanelDef, result: SeriesResult | null): Map<string, Point[]> {
  const out = new Map<string, Point[]>();
  if (result === null) return out;
  for (const s of result.series) {
    if (!panel.match(s.metric)) continue;
    out.set(
      s.metric,
      insertGaps(
        result.t.map((t, i) => [t, s.avg[i] ?? null]),
        result.stepMs,
      ),
    );
  }
  return out;
}

/** The earliest time any line holds a known value; null when none. */
export function firstKnownMs(lines: Iterable<ReadonlyMap<string, Point[]>>): number | null {
  let first: number | null = null;
  for (const panelLines of lines)
    for (const pts of panelLines.values())
      for (const p of pts)
        if (p[1] !== null) {
          if (first === null || p[0] < first) first = p[0];
          break;
        }
  return first;
}

/**
 * Why a panel with no known point is empty, from what is known: a host that is
 * not connected, a proxy that has queued nothing, a server without the metric.
 * Null when the panel has data.
 */
export function emptyReason(panel: PanelDef, lines: ReadonlyMap<string, Point[]>, hostConnected: boolean | null = null): string | null {
  for (const pts of lines.values()) if (pts.some((p) => p[1] !== null)) return null;
  if (hostConnected === false) return 'No data — host not connected.';
  const known = lines.size > 0;
  switch (panel.id) {
    case 'vram':
    case 'util':
    case 'power':
    case 'temp':
      return 'No data yet — no GPU sample from this host since the console started.';
    case 'kv':
      return known ? 'No data yet — the server has not reported its KV cache since start.' : 'No data — the inference server exposes no KV-cache metric (llama-server has none).';
    case 'cache':
      return 'No data — the servers report no prefix-hit, prompt-cache or speculative-decoding figure.';
    case 'queue':
    case 'tok':
    case 'latency':
      return known && panel.id === 'latency'
        ? 'No data yet — no request has finished on this host since the console started.'
        : 'No data yet — no inference server on this host has reported since the console started.';
    case 'proxy-wait':
      return 'No data yet — the proxy has not queued a request for this host since start.';
    case 'cost':
      return 'No data yet — needs a price for this host and output tokens in the last 5 min.';
    case 'disk':
    case 'mem':
    case 'load':
      return 'No data yet — no host-health reading since the console started (every 15 s by default; none when health.intervalMs is 0).';
    default:
      return 'No data yet since the console started.';
  }
}

/**
 * Live values appended to a panel's lines in place, dropping points older than
 * the range (and a bound on the count). Returns whether anything changed, so a
 * caller pushes to the chart only when needed.
 */
export function appendTick(
  lines: Map<string, Point[]>,
  panel: PanelDef,
  tick: HostTick,
  atMs: number,
  range: SeriesRange,
  maxPoints = 4000,
): boolean {
  const cutoff = atMs - SERIES_RANGES[range].spanMs;
  let changed = false;
  for (const [metric, value] of Object.entries(tick.values)) {
    if (!panel.match(metric)) continue;
    const pts = lines.get(metric) ?? [];
    const last = pts[pts.length - 1];
    if (last !== undefined && last[0] >= atMs) continue;
    // a silence longer than the threshold (host down) breaks the line
    if (last !== undefined && last[1] !== null && atMs - last[0] > gapThresholdMs(SERIES_RANGES[range].stepMs)) pts.push([last[0] + 1, null]);
    pts.push([atMs, tick.staleReason !== null ? null : value]);
    let drop = 0;
    while (drop < pts.length && pts[drop]![0] < cutoff) drop++;
    if (pts.length - drop > maxPoints) drop = pts.length - maxPoints;
    if (drop > 0) pts.splice(0, drop);
    lines.set(metric, pts);
    changed = true;
  }
  return changed;
}

/** Only the 15 min and 1 h ranges move with live ticks; longer ones are reloaded now and then. */
export function isLiveRange(range: SeriesRange): boolean {
  return range === '15m' || range === '1h';
}

export { metricUnit };
