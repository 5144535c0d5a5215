import { describe, expect, it } from 'vitest';
import type { SeriesResult } from '../../../../src-preload/contract/telemetry.js';
import { HOST_PANELS, appendTick, emptyReason, insertGaps, panelSeries, seriesLabel, type Point } from '../../../../src-renderer/src/features/host/host-panels.js';
import { HostSeriesFeed, fitWindow } from '../../../../src-renderer/src/features/host/host-series-feed.js';
import { formatTick, legendEntries, niceTicks, panelBaseOption, panelDataUpdate, yAxisScale } from '../../../../src-renderer/src/features/host/panel-option.js';

const panel = (id: string) => HOST_PANELS.find((p) => p.id === id)!;
const T = 1_700_000_100_000;
const theme = { text: '#000', muted: '#111', border: '#222', bg: '#fff', series: ['#a00', '#0a0', '#00a'] };

describe('niceTicks: 1-2-5 steps', () => {
  it('0–29.3 → 0, 5, …, 30', () => {
    expect(niceTicks(0, 29.3).ticks).toEqual([0, 5, 10, 15, 20, 25, 30]);
  });
  it('0–0.73 → 0, 0.2, …, 0.8', () => {
    expect(niceTicks(0, 0.73).ticks).toEqual([0, 0.2, 0.4, 0.6, 0.8]);
  });
  it('0–100 → steps of 20; 0–7 → steps of 2; degenerate ranges still give ticks', () => {
    expect(niceTicks(0, 100).ticks).toEqual([0, 20, 40, 60, 80, 100]);
    expect(niceTicks(0, 7).step).toBe(2);
    expect(niceTicks(0, 0).ticks.length).toBeGreaterThan(1);
    for (const [lo, hi] of [[0, 3.3], [0, 47], [0, 0.012], [0, 96_000]] as const) {
      const { step, ticks } = niceTicks(lo, hi);
      const mant = step / 10 ** Math.floor(Math.log10(step));
      expect([1, 2, 5]).toContain(Math.round(mant * 1e6) / 1e6);
      expect(ticks[ticks.length - 1]!).toBeGreaterThanOrEqual(hi);
      expect(ticks.length).toBeLessThanOrEqual(8);
    }
  });
  it('the VRAM axis gets 1-2-5 GiB ticks, set as min/max/interval so echarts does not pick 9.8 / 19.5', () => {
    const lines = new Map<string, Point[]>([['gpu.0.vram_used_mib', [[T, 29.3 * 1024]]]]);
    const s = yAxisScale(panel('vram'), lines);
    expect(s.ticks.map((t) => t / 1024)).toEqual([0, 5, 10, 15, 20, 25, 30]);
    const o = panelBaseOption(panel('vram'), theme, lines, { fromMs: T - 1000, toMs: T }) as { yAxis: { min: number; max: number; interval: number; axisLabel: { formatter: (v: number) => string } } };
    expect([o.yAxis.min, o.yAxis.max, o.yAxis.interval]).toEqual([0, 30 * 1024, 5 * 1024]);
    expect(o.yAxis.axisLabel.formatter(10 * 1024)).toBe('10 GiB');
    const u = panelDataUpdate(lines, { fromMs: T - 1000, toMs: T }, panel('vram')) as { yAxis: { interval: number } };
    expect(u.yAxis.interval).toBe(5 * 1024);
  });
  it('tick labels in the displayed unit: ms below a second, % without noise', () => {
    expect(formatTick(0.2, 's', 0.2)).toBe('200 ms');
    expect(formatTick(0.05, 's', 0.05)).toBe('50 ms');
    expect(formatTick(2, 's', 0.5)).toBe('2000 ms');
    expect(formatTick(40, '%', 20)).toBe('40%');
    expect(formatTick(2.5 * 1024, 'MiB', 0.5 * 1024)).toBe('2.5 GiB');
  });
});

describe('gaps and the start of the data', () => {
  it('a jump longer than ~2 sample intervals gets a null point, so the line breaks', () => {
    const pts: Point[] = [[0, 1], [10_000, 2], [20_000, 3], [600_000, 4], [610_000, 5]];
    const out = insertGaps(pts, 10_000);
    expect(out).toEqual([[0, 1], [10_000, 2], [20_000, 3], [30_000, null], [600_000, 4], [610_000, 5]]);
    expect(insertGaps([[0, 1], [2000, 2]], 1000)).toEqual([[0, 1], [2000, 2]]);
  });
  it('a point from before the console started is not joined to the live data', () => {
    const r: SeriesResult = {
      host: 'h', range: '1h', fromMs: T - 3_600_000, toMs: T, stepMs: 10_000,
      t: [T - 3_000_000, T - 30_000, T - 20_000, T - 10_000],
      series: [{ metric: 'gpu.0.util_pct', unit: '%', avg: [80, 10, 11, 12], max: null }],
      tiers: ['10s'],
    };
    const line = panelSeries(panel('util'), r).get('gpu.0.util_pct')!;
    expect(line[1]).toEqual([T - 3_000_000 + 10_000, null]);
    const o = panelBaseOption(panel('util'), theme, panelSeries(panel('util'), r), { fromMs: 0, toMs: 1 }) as { series: { connectNulls: boolean }[] };
    expect(o.series[0]!.connectNulls).toBe(false);
  });
  it('a live tick after a silence breaks the line too', () => {
    const lines = new Map<string, Point[]>([['gpu.0.util_pct', [[T, 5]]]]);
    appendTick(lines, panel('util'), { host: 'h', staleReason: null, values: { 'gpu.0.util_pct': 6 } }, T + 120_000, '15m');
    expect(lines.get('gpu.0.util_pct')!.map((p) => p[1])).toEqual([5, null, 6]);
  });
  it('fresh start: the window starts at the first sample (not an hour back) and says it was fitted', () => {
    expect(fitWindow(T - 3_600_000, T, T - 300_000)).toEqual({ fromMs: T - 300_000, toMs: T, fitted: true });
    expect(fitWindow(T - 3_600_000, T, T - 1_000)).toEqual({ fromMs: T - 5_000, toMs: T, fitted: true });
    expect(fitWindow(T - 3_600_000, T, T - 4_000_000)).toEqual({ fromMs: T - 3_600_000, toMs: T });
    expect(fitWindow(T - 3_600_000, T, null)).toEqual({ fromMs: T - 3_600_000, toMs: T });
    const feed = new HostSeriesFeed('h', HOST_PANELS, '1h');
    feed.load({ host: 'h', range: '1h', fromMs: T - 3_600_000, toMs: T, stepMs: 10_000, t: [T - 200_000, T - 190_000], series: [{ metric: 'gpu.0.util_pct', unit: '%', avg: [1, 2], max: null }], tiers: ['10s'] });
    expect(feed.window().fromMs).toBe(T - 200_000);
  });
});

describe('legends and empty states', () => {
  it('the legend is an HTML list of every line with its colour; names are short, TTFT p95 says it is a bucket bound', () => {
    const lines = new Map<string, Point[]>(Array.from({ length: 8 }, (_, i) => [`gpu.${i}.util_pct`, [[T, i]] as Point[]]));
    const entries = legendEntries(panel('util'), lines, theme.series);
    expect(entries.map((e) => e.name)).toEqual(['GPU 0', 'GPU 1', 'GPU 2', 'GPU 3', 'GPU 4', 'GPU 5', 'GPU 6', 'GPU 7']);
    expect(entries[3]!.color).toBe('#a00');
    const o = panelBaseOption(panel('util'), theme, lines, { fromMs: 0, toMs: 1 }) as { legend?: unknown };
    expect(o.legend).toBeUndefined();
    expect(seriesLabel('svc.qwen.ttft_p95_s')).toBe('qwen TTFT p95 (≤ bucket bound, interpolated)');
    expect(seriesLabel('svc.qwen.e2e_p95_s')).toBe('qwen E2E p95');
    const cache = new Map<string, Point[]>([['svc.q.spec_accept_pct', [[T, null]]], ['svc.q.prompt_cache_pct', [[T, 3]]]]);
    expect(legendEntries(panel('cache'), cache, theme.series).map((e) => e.name)).toEqual(['q prompt-cache reuse']);
  });
  it('a panel without a known point says why', () => {
    expect(emptyReason(panel('proxy-wait'), new Map())).toMatch(/proxy has not queued a request/);
    expect(emptyReason(panel('vram'), new Map(), false)).toMatch(/host not connected/);
    expect(emptyReason(panel('kv'), new Map())).toMatch(/no KV-cache metric/);
    expect(emptyReason(panel('kv'), new Map([['svc.a.kv_pct', [[T, null]]]]))).toMatch(/not reported/);
    expect(emptyReason(panel('util'), new Map([['gpu.0.util_pct', [[T, 3]]]]))).toBeNull();
    expect(emptyReason(panel('latency'), new Map([['svc.a.ttft_p95_s', [[T, null]]]]))).toMatch(/no request has finished/);
    for (const p of HOST_PANELS) expect(emptyReason(p, new Map())).toMatch(/^No data/);
  });
});

describe('chart theme', () => {
  it('while <html data-theme> still names the old theme, the new theme palette is used (no light grid on a dark chart)', async () => {
    const { readChartTheme } = await import('../../../../src-renderer/src/features/host/chart-theme.js');
    const g = globalThis as { getComputedStyle?: unknown };
    const had = g.getComputedStyle;
    g.getComputedStyle = () => ({ getPropertyValue: (n: string) => (n === '--border' ? '#dde2ea' : '') });
    try {
      const el = { dataset: { theme: 'light' } };
      expect(readChartTheme('dark', el).border).toBe('#252c37');
      expect(readChartTheme('light', el).border).toBe('#dde2ea');
    } finally {
      g.getComputedStyle = had;
    }
  });
});
