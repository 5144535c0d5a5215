// echarts options of one host panel: the base option (axes, tooltip with units,
// crosshair) and the small data-only updates the live feed applies.
import type { EChartsCoreOption } from '../../components/echarts.js';
import { formatValue, seriesLabel, type PanelDef, type Point } from './host-panels.js';

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
    grid: { left: 56, right: 12, top: 28, bottom: 24 },
    legend: { top: 0, left: 0, textStyle: { color: theme.muted, fontSize: 11 }, itemWidth: 12, itemHeight: 6, type: 'scroll', ...legendData(panel, lines) },
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
      min: 0,
      // Counts (requests) have whole-number ticks only.
      ...(panel.unit === 'req' ? { minInterval: 1 } : {}),
      ...(panel.yMax === undefined ? {} : { max: panel.yMax }),
      axisLabel: { color: theme.muted, formatter: (v: number) => formatValue(v, panel.unit).replace(' (est.)', '') },
      splitLine: { lineStyle: { color: theme.border } },
    },
    series: seriesEntries(lines),
  };
}

/** Data-only update: same series ids, new points and window (replaceMerge keeps it cheap). */
export function panelDataUpdate(lines: ReadonlyMap<string, Point[]>, window: { fromMs: number; toMs: number }, panel?: PanelDef): EChartsCoreOption {
  const legend = panel ? legendData(panel, lines) : {};
  return { xAxis: { min: window.fromMs, max: window.toMs }, series: seriesEntries(lines), ...('data' in legend ? { legend } : {}) };
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
