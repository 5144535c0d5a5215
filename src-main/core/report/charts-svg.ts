import type { EvidenceChart } from '../../../src-preload/contract/index.js';
import { cleanText } from './report-document.js';

// Evidence charts as static SVG for the HTML and PDF reports, written directly:
// axes with round ticks, one path per line series (a null is a gap, never a
// zero), grouped bars with their values, a legend, "No data in the window".
// Until issue #31 this was echarts' server-side renderer, which took 15–100 ms
// a chart (axis layout and label measuring): a 64-host report has 128 charts
// and spent about half its time there. This writer takes well under 1 ms a
// chart and is deterministic by construction (no process-wide id counters).

export interface ChartSvgOptions {
  width?: number;
  height?: number;
}

const PALETTE = ['#2f5fb3', '#c2571a', '#2e8540', '#8a3fa0', '#b8860b', '#5a6b7b'];
// Series differ by dash as well as colour, so a grey-scale printout still tells them apart.
const DASHES = [null, '6 4', '1.5 3'] as const;
const FONT = 'Helvetica, Arial, sans-serif';
const TEXT = '#333333';
const GRID = '#e3e6ea';
const AXIS = '#6e7079';
/** Average advance of a Helvetica glyph, in ems: enough to lay labels out without a font engine. */
const EM_ADVANCE = 0.56;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const TIME_STEPS = [MINUTE, 2 * MINUTE, 5 * MINUTE, 10 * MINUTE, 15 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY, 30 * DAY];

const finite = (v: number | null | undefined): number | null => (v === null || v === undefined || !Number.isFinite(v) ? null : v);
const grouped = (v: number): string => v.toLocaleString('en-US', { maximumFractionDigits: 2 });
const textWidth = (s: string, size: number): number => s.length * size * EM_ADVANCE;
const px = (v: number): string => (Math.round(v * 10) / 10).toString();

/** SVG text: one line, no control characters, XML-escaped. */
function esc(s: string): string {
  return cleanText(s)
    .replace(/\n/g, ' ')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

function text(x: number, y: number, s: string, size: number, anchor: 'start' | 'middle' | 'end', extra = ''): string {
  return `<text x="${px(x)}" y="${px(y)}" font-size="${size}" text-anchor="${anchor}" dominant-baseline="central" fill="${TEXT}"${extra}>${esc(s)}</text>`;
}

/** Round ticks (1, 2, 2.5, 5 × 10ⁿ) covering [lo, hi], about `count` of them. */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (hi === lo) hi = lo === 0 ? 1 : lo + Math.abs(lo) * 0.1;
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag);
  const ticks: number[] = [];
  // From the step at or below lo to the first at or above hi, so every value is inside the axis.
  for (let k = Math.floor(lo / step); ; k++) {
    ticks.push(Number((k * step).toPrecision(12)) + 0);
    if (k * step >= hi - step * 1e-9) break;
  }
  return ticks;
}

/** UTC ticks at a round step that leaves each label room: `HH:MM`, or `MM-DD` on days. */
export function timeTicks(from: number, to: number, widthPx: number): { at: number; label: string }[] {
  const most = Math.max(2, Math.floor(widthPx / 64));
  const step = TIME_STEPS.find((s) => (to - from) / s <= most) ?? TIME_STEPS[TIME_STEPS.length - 1]!;
  const out: { at: number; label: string }[] = [];
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) {
    const iso = new Date(t).toISOString();
    const onDay = t % DAY === 0;
    out.push({ at: t, label: step >= DAY || onDay ? iso.slice(5, 10) : iso.slice(11, 16) });
  }
  return out;
}

interface Frame {
  left: number;
  top: number;
  width: number;
  height: number;
  y: (v: number) => number;
}

/** The legend rows across the top; returns the markup and the height it took. */
function legend(chart: EvidenceChart, width: number): { svg: string; height: number } {
  if (chart.series.length === 0) return { svg: '', height: 0 };
  const items = chart.series.map((s, i) => ({ name: cleanText(s.name).replace(/\n/g, ' '), i, w: 22 + 5 + textWidth(cleanText(s.name), 11) + 14 }));
  const rows: (typeof items)[] = [[]];
  let used = 0;
  for (const item of items) {
    if (used + item.w > width - 24 && rows[rows.length - 1]!.length > 0) {
      rows.push([]);
      used = 0;
    }
    rows[rows.length - 1]!.push(item);
    used += item.w;
  }
  const parts: string[] = [];
  rows.forEach((row, r) => {
    const total = row.reduce((n, it) => n + it.w, 0) - 14;
    let x = (width - total) / 2;
    const y = 10 + r * 18;
    for (const it of row) {
      const colour = PALETTE[it.i % PALETTE.length];
      parts.push(
        chart.kind === 'bar'
          ? `<rect x="${px(x + 4)}" y="${px(y - 5)}" width="14" height="10" fill="${colour}"/>`
          : `<path d="M${px(x)} ${px(y)}L${px(x + 22)} ${px(y)}" fill="none" stroke-width="2" stroke="${colour}"${dashAttr(it.i)}/>`,
      );
      parts.push(text(x + 27, y, it.name, 11, 'start'));
      x += it.w;
    }
  });
  return { svg: parts.join(''), height: rows.length * 18 + 4 };
}

function dashAttr(i: number): string {
  const dash = DASHES[i % DASHES.length];
  return dash ? ` stroke-dasharray="${dash}"` : '';
}

/** The value axis: ticks, grid lines, labels and the unit; the frame the series are drawn in. */
function valueAxis(chart: EvidenceChart, values: number[], width: number, height: number, top: number, parts: string[]): Frame {
  const lo = Math.min(0, ...values);
  const hi = Math.max(0, ...values);
  const ticks = niceTicks(lo, hi);
  const labels = ticks.map(grouped);
  const left = 12 + Math.max(...labels.map((l) => textWidth(l, 10))) + 8;
  const frameTop = top + 22;
  const bottom = 8 + 18;
  const frame = { left, top: frameTop, width: Math.max(10, width - left - 28), height: Math.max(10, height - frameTop - bottom) };
  const min = ticks[0]!;
  const max = ticks[ticks.length - 1]!;
  const y = (v: number): number => frame.top + frame.height - ((v - min) / (max - min || 1)) * frame.height;
  ticks.forEach((t, i) => {
    parts.push(`<path d="M${px(frame.left)} ${px(y(t))}L${px(frame.left + frame.width)} ${px(y(t))}" fill="none" stroke="${t === 0 ? AXIS : GRID}"/>`);
    parts.push(text(frame.left - 8, y(t), labels[i]!, 10, 'end'));
  });
  parts.push(text(frame.left, top + 8, chart.unit, 11, 'start'));
  return { ...frame, y };
}

function lineChart(chart: EvidenceChart, frame: Frame, parts: string[]): void {
  const points = chart.x.length;
  const timeAxis = chart.x.every((x) => typeof x === 'number');
  const xs = timeAxis ? (chart.x as number[]) : chart.x.map((_, i) => i);
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs);
  const x = (v: number): number => frame.left + (x1 === x0 ? frame.width / 2 : ((v - x0) / (x1 - x0)) * frame.width);
  const axisY = frame.top + frame.height;
  if (timeAxis) {
    for (const t of timeTicks(x0, x1, frame.width)) parts.push(text(x(t.at), axisY + 12, t.label, 10, 'middle'));
    parts.push(text(frame.left + frame.width + 4, axisY + 12, 'UTC', 10, 'start'));
  } else {
    categoryLabels(chart, frame, parts, (i) => x(i));
  }
  chart.series.forEach((s, i) => {
    let d = '';
    let pen = false;
    for (let j = 0; j < points; j++) {
      const v = finite(s.values[j]);
      if (v === null) {
        pen = false;
        continue;
      }
      d += `${pen ? 'L' : 'M'}${px(x(xs[j]!))} ${px(frame.y(v))}`;
      pen = true;
    }
    if (d) parts.push(`<path d="${d}" fill="none" stroke-width="1.5" stroke-linejoin="round" stroke="${PALETTE[i % PALETTE.length]}"${dashAttr(i)}/>`);
  });
}

function categoryLabels(chart: EvidenceChart, frame: Frame, parts: string[], at: (i: number) => number): void {
  const room = frame.width / Math.max(1, chart.x.length);
  chart.x.forEach((c, i) => {
    const label = String(c);
    // A label wider than its band is left out rather than drawn over its neighbours.
    if (textWidth(label, 10) <= room || chart.x.length === 1) parts.push(text(at(i), frame.top + frame.height + 12, label, 10, 'middle'));
  });
}

function barChart(chart: EvidenceChart, frame: Frame, parts: string[]): void {
  const n = Math.max(1, chart.x.length);
  const band = frame.width / n;
  const count = Math.max(1, chart.series.length);
  const barWidth = Math.min(48, (band * 0.7) / count);
  const center = (i: number): number => frame.left + band * (i + 0.5);
  categoryLabels(chart, frame, parts, center);
  chart.series.forEach((s, k) => {
    chart.x.forEach((_, i) => {
      const v = finite(s.values[i]);
      if (v === null) return;
      const x = center(i) - (barWidth * count) / 2 + k * barWidth;
      const y0 = frame.y(0);
      const y1 = frame.y(v);
      parts.push(`<rect x="${px(x)}" y="${px(Math.min(y0, y1))}" width="${px(barWidth)}" height="${px(Math.abs(y0 - y1))}" fill="${PALETTE[k % PALETTE.length]}"/>`);
      parts.push(text(x + barWidth / 2, Math.min(y0, y1) - 7, grouped(v), 10, 'middle'));
    });
  });
}

/** One chart as a standalone SVG document (default 720 × 280). */
export function chartSvg(chart: EvidenceChart, opts: ChartSvgOptions = {}): string {
  const width = Math.max(120, Math.round(opts.width ?? 720));
  const height = Math.max(80, Math.round(opts.height ?? 280));
  const points = chart.x.length;
  const values: number[] = [];
  for (const s of chart.series) for (let j = 0; j < points; j++) {
    const v = finite(s.values[j]);
    if (v !== null) values.push(v);
  }
  const parts: string[] = [`<rect width="${width}" height="${height}" fill="#ffffff"/>`];
  const top = legend(chart, width);
  parts.push(top.svg);
  const frame = valueAxis(chart, values, width, height, top.height, parts);
  if (values.length === 0) parts.push(text(width / 2, height / 2, 'No data in the window', 13, 'middle', ' fill-opacity="0.8"'));
  else if (chart.kind === 'bar') barChart(chart, frame, parts);
  else lineChart(chart, frame, parts);
  return (
    `<svg width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" font-family="${FONT}">` +
    parts.join('') +
    '</svg>\n'
  );
}
