import { describe, expect, it } from 'vitest';
import type { EvidenceChart } from '../../../../src-preload/contract/index.js';
import { chartSvg, niceTicks, timeTicks } from '../../../../src-main/core/report/charts-svg.js';
import { sampleEvidence } from '../../../fixtures/report/evidence-sample.js';

const chart = (id: string): EvidenceChart => sampleEvidence().charts.find((c) => c.id === id)!;

/** The stroked, unfilled paths drawn in one colour (a line series). */
function linePaths(svg: string, colour: string): string[] {
  return [...svg.matchAll(/<path d="([^"]+)" fill="none"[^>]*stroke="([^"]+)"/g)].filter((m) => m[2] === colour).map((m) => m[1]!);
}

describe('chartSvg', () => {
  it('draws a line chart as a standalone SVG of the requested size, no animation', () => {
    const svg = chartSvg(chart('tokps'), { width: 640, height: 240 });
    expect(svg.startsWith('<svg width="640" height="240" xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg).not.toMatch(/<animate|@keyframes|<script/);
    expect(svg).toContain('l20-poc/qwen');
    expect(svg).toContain('homelab-3090/gemma');
    expect(svg).toContain('>tok/s<');
    expect(svg).toContain('>UTC<');
    // Time axis labels in UTC (the window is 08:00–10:00Z).
    expect(svg).toContain('>08:15<');
    expect(svg).toContain('>09:45<');
  });

  it('defaults to 720 × 280', () => {
    expect(chartSvg(chart('vram')).startsWith('<svg width="720" height="280"')).toBe(true);
  });

  it('draws one line per series, a null as a gap and never as zero', () => {
    const svg = chartSvg(chart('tokps'));
    const [first] = linePaths(svg, '#2f5fb3').sort((a, b) => b.length - a.length);
    const [second] = linePaths(svg, '#c2571a').sort((a, b) => b.length - a.length);
    // The first series has no nulls: one unbroken path. The second has a gap: two sub-paths.
    expect(first!.match(/M/g)).toHaveLength(1);
    expect(second!.match(/M/g)).toHaveLength(2);
    // Series differ by dash too, not only by colour.
    expect(svg).toMatch(/stroke-dasharray/);
  });

  it('draws a bar chart over its categories, with the values written on the bars', () => {
    const svg = chartSvg(chart('bench-tokps'));
    for (const label of ['c=1', 'c=2', 'c=4', 'stability c=4', '17.34', '35.65', '71.51', '72.47', 'poc-baseline']) expect(svg).toContain(`>${label}<`);
  });

  it('is deterministic', () => {
    expect(chartSvg(chart('vram'))).toBe(chartSvg(chart('vram')));
  });

  it('escapes names and drops characters XML cannot hold', () => {
    const c = chart('bench-tokps');
    c.series[0]!.name = '<script>alert(1)</script> & "x"\u0007\u202E';
    c.x = ['<b>c=1</b>', 'c=2', 'c=4', 'stability c=4'];
    c.unit = 'tok/s <i>';
    const svg = chartSvg(c);
    expect(svg).not.toContain('<script');
    expect(svg).not.toContain('<b>');
    expect(svg).not.toContain('<i>');
    expect(svg).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;');
    // eslint-disable-next-line no-control-regex
    expect(svg).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/);
    expect(svg).not.toContain('\u202E');
  });

  it('says so when there is nothing to draw', () => {
    const c = chart('tokps');
    c.series = c.series.map((s) => ({ ...s, values: s.values.map(() => null) }));
    expect(chartSvg(c)).toContain('No data in the window');
    const empty: EvidenceChart = { id: 'e', title: 'Empty', host: null, unit: 'W', kind: 'line', x: [], series: [] };
    const svg = chartSvg(empty);
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('No data in the window');
  });

  it('puts round ticks on the value axis and UTC ticks that fit on the time axis', () => {
    expect(niceTicks(0, 1_447)).toEqual([0, 500, 1_000, 1_500]);
    expect(niceTicks(0, 72.47)).toEqual([0, 20, 40, 60, 80]);
    expect(niceTicks(-3, 7)).toEqual([-4, -2, 0, 2, 4, 6, 8]);
    expect(niceTicks(0, 0)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    const week = timeTicks(Date.UTC(2026, 10, 28, 14), Date.UTC(2026, 11, 5, 14), 640);
    expect(week.map((t) => t.label)).toEqual(['11-29', '11-30', '12-01', '12-02', '12-03', '12-04', '12-05']);
    const hours = timeTicks(Date.UTC(2026, 11, 5, 8), Date.UTC(2026, 11, 5, 10), 640);
    expect(hours[0]).toEqual({ at: Date.UTC(2026, 11, 5, 8), label: '08:00' });
    expect(hours.length).toBeLessThanOrEqual(10);
  });

  it('places a point by its value: the highest value is drawn highest, and a series keeps its x order', () => {
    const c = chart('tokps');
    const svg = chartSvg({ ...c, series: [{ name: 's', values: c.x.map((_, i) => (i === 5 ? 100 : 10)) }] });
    const [d] = linePaths(svg, '#2f5fb3').sort((a, b) => b.length - a.length);
    const pts = [...d!.matchAll(/[ML]([\d.]+) ([\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])] as const);
    expect(pts).toHaveLength(c.x.length);
    const ys = pts.map((p) => p[1]);
    expect(Math.min(...ys)).toBe(ys[5]);
    for (let i = 1; i < pts.length; i++) expect(pts[i]![0]).toBeGreaterThan(pts[i - 1]![0]);
  });
});
