import { init, use } from 'echarts/core';
import { BarChart, LineChart } from 'echarts/charts';
import { GridComponent, LegendComponent, TitleComponent } from 'echarts/components';
import { SVGRenderer } from 'echarts/renderers';
import type { EvidenceChart } from '../../../src-preload/contract/index.js';
import { cleanText } from './report-document.js';

// Evidence charts as static SVG, drawn by echarts' server-side renderer (no
// DOM, no canvas, no animation), for the HTML and PDF reports. The tree-shaken
// `echarts/core` entry points load as ES modules in plain Node (echarts ships
// `"type": "module"`), under vitest, and in the electron-vite main bundle
// (echarts is a devDependency, so the bundle carries it instead of requiring it).

use([LineChart, BarChart, GridComponent, LegendComponent, TitleComponent, SVGRenderer]);

export interface ChartSvgOptions {
  width?: number;
  height?: number;
}

const PALETTE = ['#2f5fb3', '#c2571a', '#2e8540', '#8a3fa0', '#b8860b', '#5a6b7b'];
// Series differ by dash as well as colour, so a grey-scale printout still tells them apart.
const DASHES = ['solid', 'dashed', 'dotted'] as const;
const FONT = 'Helvetica, Arial, sans-serif';

/** SVG text must be valid XML: no control characters, one line. */
const label = (s: string) => cleanText(s).replace(/\n/g, ' ');
const finite = (v: number | null | undefined): number | null => (v === null || v === undefined || !Number.isFinite(v) ? null : v);
const grouped = (v: number) => v.toLocaleString('en-US', { maximumFractionDigits: 2 });

function chartOption(chart: EvidenceChart): Record<string, unknown> {
  const points = chart.x.length;
  const hasData = points > 0 && chart.series.some((s) => s.values.slice(0, points).some((v) => finite(v) !== null));
  const timeAxis = chart.kind === 'line' && chart.x.every((x) => typeof x === 'number');
  const common = {
    animation: false,
    useUTC: true,
    backgroundColor: '#ffffff',
    color: PALETTE,
    textStyle: { fontFamily: FONT, fontSize: 11, color: '#333333' },
    legend: { show: chart.series.length > 0, top: 4, left: 'center', itemWidth: 22, itemHeight: 10, textStyle: { fontSize: 11 } },
    grid: { left: 12, right: 28, top: 44, bottom: 8, outerBoundsMode: 'same', outerBoundsContain: 'all' },
    yAxis: {
      type: 'value',
      name: label(chart.unit),
      nameTextStyle: { align: 'left', fontSize: 11 },
      axisLabel: { formatter: grouped, fontSize: 10 },
      splitLine: { lineStyle: { color: '#e3e6ea' } },
    },
    title: hasData ? { show: false } : { show: true, text: 'No data in the window', left: 'center', top: 'middle', textStyle: { fontSize: 13, fontWeight: 'normal', color: '#666666' } },
  };
  if (timeAxis) {
    const xs = chart.x as number[];
    return {
      ...common,
      xAxis: {
        type: 'time',
        name: 'UTC',
        nameTextStyle: { fontSize: 10 },
        min: points ? Math.min(...xs) : undefined,
        max: points ? Math.max(...xs) : undefined,
        axisLabel: { fontSize: 10, hideOverlap: true },
        splitLine: { show: false },
      },
      series: chart.series.map((s, i) => ({
        type: 'line',
        name: label(s.name),
        showSymbol: false,
        connectNulls: false,
        lineStyle: { width: 1.5, type: DASHES[i % DASHES.length] },
        data: xs.map((x, j) => [x, finite(s.values[j])]),
      })),
    };
  }
  return {
    ...common,
    xAxis: { type: 'category', data: chart.x.map((x) => label(String(x))), axisLabel: { fontSize: 10, interval: 0, hideOverlap: true } },
    series: chart.series.map((s, i) =>
      chart.kind === 'bar'
        ? {
            type: 'bar',
            name: label(s.name),
            barMaxWidth: 48,
            label: { show: true, position: 'top', fontSize: 10, formatter: (p: { value: number | null }) => (p.value === null ? '' : grouped(p.value)) },
            data: chart.x.map((_, j) => finite(s.values[j])),
          }
        : {
            type: 'line',
            name: label(s.name),
            showSymbol: false,
            connectNulls: false,
            lineStyle: { width: 1.5, type: DASHES[i % DASHES.length] },
            data: chart.x.map((_, j) => finite(s.values[j])),
          },
    ),
  };
}

/**
 * zrender numbers its class names and clip-path ids with process-wide counters
 * (`zr4-cls-15`, `zr4-c0`); renumbered in order of appearance, the same chart
 * always renders to the same bytes (each SVG is its own document, so nothing collides).
 */
function stableIds(svg: string): string {
  const seen = new Map<string, string>();
  const counts = new Map<string, number>();
  return svg.replace(/\bzr\d+-(cls-|c)(\d+)\b/g, (token: string, kind: string) => {
    let id = seen.get(token);
    if (id === undefined) {
      const n = counts.get(kind) ?? 0;
      counts.set(kind, n + 1);
      id = `zr0-${kind}${n}`;
      seen.set(token, id);
    }
    return id;
  });
}

/** One chart as a standalone SVG document (default 720 × 280). */
export function chartSvg(chart: EvidenceChart, opts: ChartSvgOptions = {}): string {
  const width = Math.max(120, Math.round(opts.width ?? 720));
  const height = Math.max(80, Math.round(opts.height ?? 280));
  const instance = init(null, null, { renderer: 'svg', ssr: true, width, height });
  try {
    instance.setOption(chartOption(chart));
    return stableIds(instance.renderToSVGString());
  } finally {
    instance.dispose();
  }
}
