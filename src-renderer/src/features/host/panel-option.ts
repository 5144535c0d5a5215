// echarts options of one host panel: the base option (axes, tooltip with units,
// crosshair) and the small data-only updates the live feed applies.
import type { EChartsCoreOption } from '../../components/echarts.js';
import { formatValue, seriesLabel, type PanelDef, type PanelUnit, type Point } from './host-panels.js';

export interface NiceTicks {
  min: number;
  max: number;
  step: number;
  ticks: number[];
}

/**
 * "Nice" axis ticks: steps of 1, 2 or 5 × 10ⁿ, the smallest that gives at most
 * `targetCount` intervals, with min/max widened to whole steps.
 * 0–29.3 → 0, 5, …, 30; 0–0.73 → 0, 0.2, …, 0.8.
 */
export function niceTicks(min: number, max: number, targetCount = 6): NiceTicks {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return { min: 0, max: 1, step: 0.2, ticks: [0, 0.2, 0.4, 0.6, 0.8, 1] };
  if (max < min) [min, max] = [max, min];
  if (max === min) max = min === 0 ? 1 : min + Math.abs(min);
  const raw = (max - min) / Math.max(1, targetCount);
  const mag = 10 ** Math.floor(Math.log10(raw));
  let step = 10 * mag;
  for (const f of [1, 2, 5]) {
    // a hair of tolerance so 0–100 in 5 intervals takes 20, not 50
    if (f * mag >= raw * (1 - 1e-9)) {
      step = f * mag;
      break;
    }
  }
  const round = (v: number) => Number(v.toPrecision(12));
  const lo = round(Math.floor(min / step + 1e-9) * step);
  const hi = round(Math.ceil(max / step - 1e-9) * step);
  const ticks: number[] = [];
  for (let v = lo, i = 0; v <= hi + step / 2 && i < 1000; i++, v = round(lo + i * step)) ticks.push(v);
  return { min: lo, max: hi, step: round(step), ticks };
}

/** The factor from a series' stored unit to the one its axis shows (MiB is shown in GiB). */
function displayFactor(unit: PanelUnit): number {
  return unit === 'MiB' ? 1024 : 1;
}

/** Y axis bounds and interval in stored units, chosen as 1-2-5 ticks in the displayed unit. */
export function yAxisScale(panel: PanelDef, lines: ReadonlyMap<string, Point[]>): NiceTicks {
  const f = displayFactor(panel.unit);
  let max = panel.yMax ?? 0;
  if (panel.yMax === undefined)
    for (const pts of lines.values()) for (const p of pts) if (p[1] !== null && p[1] > max) max = p[1];
  if (max <= 0) max = panel.unit === '%' ? 100 : panel.unit === 'req' ? 5 : f;
  const n = niceTicks(0, max / f, panel.unit === 'req' ? 5 : 6);
  // counts have whole-number steps only
  const step = panel.unit === 'req' ? Math.max(1, n.step) : n.step;
  const hi = Math.ceil(n.max / step - 1e-9) * step;
  const scale = (v: number) => Number((v * f).toPrecision(12));
  return { min: 0, max: scale(hi), step: scale(step), ticks: n.ticks.filter((t) => t <= hi).map(scale) };
}

/** One tick label in the displayed unit, with as many decimals as the step needs. */
export function formatTick(value: number, unit: PanelUnit, stepStored: number): string {
  const f = displayFactor(unit);
  const decimalsFor = (step: number) => Math.max(0, Math.min(6, -Math.floor(Math.log10(step) + 1e-9)));
  switch (unit) {
    case 'MiB':
      return `${(value / f).toFixed(decimalsFor(stepStored / f))} GiB`;
    case '%':
      return `${value.toFixed(decimalsFor(stepStored))}%`;
    case 's':
      return value !== 0 && stepStored < 1 ? `${(value * 1000).toFixed(decimalsFor(stepStored * 1000))} ms` : `${value.toFixed(decimalsFor(stepStored))} s`;
    case 'USD/1M tok':
      return `$${value.toFixed(Math.max(2, decimalsFor(stepStored)))}`;
    case 'req':
      return `${Math.round(value)}`;
    default:
      return `${value.toFixed(decimalsFor(stepStored))}${unit ? ` ${unit}` : ''}`;
  }
}

function yAxisBounds(panel: PanelDef, lines: ReadonlyMap<string, Point[]>): { min: number; max: number; interval: number } {
  const s = yAxisScale(panel, lines);
  return { min: s.min, max: s.max, interval: s.step };
}

/** Concrete colours for the canvas (read from CSS variables by chart-theme.ts). */
export interface ChartTheme {
  text: string;
  muted: string;
  border: string;
  bg: string;
  series: string[];
}

export function panelBaseOption(panel: PanelDef, theme: ChartTheme, lines: ReadonlyMap<string, Point[]>, window: { fromMs: number; toMs: number }): EChartsCoreOption {
  return {
    animation: false,
    color: theme.series,
    grid: { left: 64, right: 16, top: 12, bottom: 24 },
    // the legend is an HTML list under the chart (HostChartPanel): it wraps, never pages
    tooltip: {
      trigger: 'axis',
      axisPointer: { type: 'line', lineStyle: { color: theme.muted } },
      backgroundColor: theme.bg,
      borderColor: theme.border,
      textStyle: { color: theme.text, fontSize: 12 },
      valueFormatter: (v: unknown) => formatValue(typeof v === 'number' ? v : null, panel.unit),
    },
    xAxis: {
      type: 'time',
      min: window.fromMs,
      max: window.toMs,
      axisLine: { lineStyle: { color: theme.border } },
      axisLabel: { color: theme.muted, hideOverlap: true },
      splitLine: { show: false },
    },
    yAxis: {
      type: 'value',
      // 1-2-5 ticks in the displayed unit (GiB, %, ms): min, max and interval set, so echarts does not split 29.3 GiB into 9.8 / 19.5
      ...yAxisBounds(panel, lines),
      axisLabel: { color: theme.muted, formatter: (v: number) => formatTick(v, panel.unit, yAxisScale(panel, lines).step) },
      splitLine: { lineStyle: { color: theme.border } },
    },
    series: seriesEntries(lines),
  };
}

/** Data-only update: same series ids, new points, window and y scale (replaceMerge keeps it cheap). */
export function panelDataUpdate(lines: ReadonlyMap<string, Point[]>, window: { fromMs: number; toMs: number }, panel?: PanelDef): EChartsCoreOption {
  const yAxis = panel
    ? { yAxis: { ...yAxisBounds(panel, lines), axisLabel: { formatter: (v: number) => formatTick(v, panel.unit, yAxisScale(panel, lines).step) } } }
    : {};
  return { xAxis: { min: window.fromMs, max: window.toMs }, ...yAxis, series: seriesEntries(lines) };
}

export interface LegendEntry {
  id: string;
  name: string;
  color: string;
  dashed: boolean;
}

/** The HTML legend: one entry per drawn line, in series order, coloured as echarts colours them (by index). */
export function legendEntries(panel: PanelDef, lines: ReadonlyMap<string, Point[]>, palette: readonly string[]): LegendEntry[] {
  const only = legendData(panel, lines).data;
  return seriesEntries(lines)
    .map((s, i) => ({ s: s as { id: string; name: string; lineStyle: { type: string } }, color: palette[i % Math.max(1, palette.length)] ?? '#888' }))
    .filter(({ s }) => only === undefined || only.includes(s.name))
    .map(({ s, color }) => ({ id: s.id, name: s.name, color, dashed: s.lineStyle.type === 'dashed' }));
}

/**
 * For panels of figures many servers never report (speculative decoding): the
 * legend lists only lines with a known point, so an empty line is not read as
 * a figure. The line itself stays (all gaps), its tooltip says "—".
 */
export function legendData(panel: PanelDef, lines: ReadonlyMap<string, Point[]>): { data?: string[] } {
  if (!panel.legendKnownOnly) return {};
  return {
    data: [...lines.entries()]
      .filter(([, points]) => points.some((p) => p[1] !== null))
      .map(([metric]) => metric)
      .sort((a, b) => a.localeCompare(b, undefined, { numeric: true }))
      .map(seriesLabel),
  };
}

function seriesEntries(lines: ReadonlyMap<string, Point[]>): object[] {
  return [...lines.entries()]
    .sort(([a], [b]) => a.localeCompare(b, undefined, { numeric: true }))
    .map(([metric, points]) => ({
      id: metric,
      name: seriesLabel(metric),
      type: 'line',
      showSymbol: false,
      connectNulls: false,
      sampling: 'lttb',
      lineStyle: { width: 1.5, type: /_p50_s$/.test(metric) || /\.prompt_tok_s$/.test(metric) || /\.waiting$/.test(metric) ? 'dashed' : 'solid' },
      data: points,
    }));
}
