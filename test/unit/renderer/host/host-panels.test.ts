import { describe, expect, it } from 'vitest';
import type { SeriesResult } from '../../../../src-preload/contract/telemetry.js';
import { metricUnit } from '../../../../src-preload/contract/telemetry.js';
import { HOST_PANELS, appendTick, formatValue, panelPatterns, panelSeries, panelTitle, seriesLabel, type Point } from '../../../../src-renderer/src/features/host/host-panels.js';
import { HostSeriesFeed } from '../../../../src-renderer/src/features/host/host-series-feed.js';
import { formatEstimate } from '../../../../src-renderer/src/features/host/cost-format.js';
import { legendData, panelBaseOption, panelDataUpdate } from '../../../../src-renderer/src/features/host/panel-option.js';

const panel = (id: string) => HOST_PANELS.find((p) => p.id === id)!;
const T = 1_700_000_100_000;

const RESULT: SeriesResult = {
  host: 'h',
  range: '15m',
  fromMs: T - 900_000,
  toMs: T,
  stepMs: 1000,
  t: [T - 2000, T - 1000],
  series: [
    { metric: 'gpu.0.util_pct', unit: '%', avg: [50, null], max: [50, null] },
    { metric: 'gpu.1.util_pct', unit: '%', avg: [60, 70], max: [60, 70] },
    { metric: 'gpu.0.vram_used_mib', unit: 'MiB', avg: [38751, 38751], max: [38751, 38751] },
    { metric: 'svc.qwen.ttft_p95_s', unit: 's', avg: [0.337, 0.2], max: null },
  ],
  tiers: ['1s'],
};

describe('host panels', () => {
  it('units follow the series name', () => {
    expect(metricUnit('gpu.0.vram_used_mib')).toBe('MiB');
    expect(metricUnit('svc.q.gen_tok_s')).toBe('tok/s');
    expect(metricUnit('svc.q.ttft_p95_s')).toBe('s');
    expect(metricUnit('svc.q.running')).toBe('req');
    expect(metricUnit('svc.q.kv_tokens')).toBe('tokens');
    expect(metricUnit('host.cost_usd_per_mtok')).toBe('USD/1M tok');
    expect(metricUnit('gpu.0.temp_c')).toBe('°C');
  });

  it('formats values with units; unknown is a dash, never 0', () => {
    expect(formatValue(38751, 'MiB')).toBe('37.8 GiB');
    expect(formatValue(0.337, 's')).toBe('337 ms');
    expect(formatValue(4.3, 's')).toBe('4.30 s');
    expect(formatValue(72.47, 'tok/s')).toBe('72.5 tok/s');
    expect(formatValue(5.25, '%')).toBe('5.3%');
    expect(formatValue(10.1257, 'USD/1M tok')).toBe('$10.13 / 1M tok (est.)');
    expect(formatValue(null, 'W')).toBe('—');
    expect(formatValue(Number.NaN, 'W')).toBe('—');
  });

  it('names series for legends', () => {
    expect(seriesLabel('gpu.3.util_pct')).toBe('GPU 3');
    expect(seriesLabel('svc.qwen.ttft_p95_s')).toBe('qwen TTFT p95 (≤ bucket bound, interpolated)');
    expect(seriesLabel('svc.qwen.gen_tok_s')).toBe('qwen generation');
  });

  it('splits a series result into the panels, keeping gaps', () => {
    const util = panelSeries(panel('util'), RESULT);
    expect([...util.keys()]).toEqual(['gpu.0.util_pct', 'gpu.1.util_pct']);
    expect(util.get('gpu.0.util_pct')).toEqual([
      [T - 2000, 50],
      [T - 1000, null],
    ]);
    expect([...panelSeries(panel('latency'), RESULT).keys()]).toEqual(['svc.qwen.ttft_p95_s']);
    expect(panelPatterns()).toEqual(['gpu.*', 'svc.*', 'host.*']);
  });

  it('appends live ticks in place, drops points past the range, stale ticks are gaps', () => {
    const lines = new Map<string, Point[]>([['gpu.0.util_pct', [[T - 901_000, 1]]]]);
    expect(appendTick(lines, panel('util'), { host: 'h', staleReason: null, values: { 'gpu.0.util_pct': 80, 'svc.q.running': 1 } }, T, '15m')).toBe(true);
    expect(lines.get('gpu.0.util_pct')).toEqual([[T, 80]]);
    appendTick(lines, panel('util'), { host: 'h', staleReason: 'X: y', values: { 'gpu.0.util_pct': 80 } }, T + 1000, '15m');
    expect(lines.get('gpu.0.util_pct')!.at(-1)).toEqual([T + 1000, null]);
    expect(appendTick(lines, panel('util'), { host: 'h', staleReason: null, values: { 'gpu.0.util_pct': 1 } }, T + 1000, '15m')).toBe(false);
  });

  it('the feed pushes updates to subscribers without any React', () => {
    const feed = new HostSeriesFeed('h', HOST_PANELS, '15m');
    const seen: number[] = [];
    const off = feed.subscribe('util', (lines) => seen.push(lines.get('gpu.1.util_pct')?.length ?? 0));
    feed.load(RESULT);
    feed.pushTick({ host: 'h', staleReason: null, values: { 'gpu.1.util_pct': 71 } }, T + 1000);
    feed.pushTick({ host: 'other', staleReason: null, values: { 'gpu.1.util_pct': 1 } }, T + 2000);
    off();
    feed.pushTick({ host: 'h', staleReason: null, values: { 'gpu.1.util_pct': 72 } }, T + 3000);
    expect(seen).toEqual([2, 3]);
    // less data than the range: the window starts at the first sample
    expect(feed.window()).toEqual({ fromMs: T - 2000, toMs: T + 3000, fitted: true });
    // 7 d does not move live
    const week = new HostSeriesFeed('h', HOST_PANELS, '7d');
    week.load({ ...RESULT, range: '7d' });
    week.pushTick({ host: 'h', staleReason: null, values: { 'gpu.1.util_pct': 1 } }, T + 1000);
    expect(week.linesOf('util').get('gpu.1.util_pct')).toHaveLength(2);
  });

  it('builds chart options: tooltip with units, axis window, one series per metric', () => {
    const theme = { text: '#000', muted: '#111', border: '#222', bg: '#fff', series: ['#333'] };
    const lines = panelSeries(panel('vram'), RESULT);
    const o = panelBaseOption(panel('vram'), theme, lines, { fromMs: 1, toMs: 2 }) as {
      tooltip: { valueFormatter: (v: unknown) => string };
      series: { id: string; name: string }[];
      xAxis: { min: number };
    };
    expect(o.tooltip.valueFormatter(2048)).toBe('2.0 GiB');
    expect(o.series.map((s) => [s.id, s.name])).toEqual([['gpu.0.vram_used_mib', 'GPU 0 VRAM']]);
    expect(o.xAxis.min).toBe(1);
    expect((panelDataUpdate(lines, { fromMs: 5, toMs: 6 }) as { xAxis: { max: number } }).xAxis.max).toBe(6);
  });

  it('formats cost estimates, labelled, and says unavailable instead of 0', () => {
    const e = { value: 10.1257, unit: 'USD/1M tok' as const, estimate: true as const, unavailableReason: null, basis: '' };
    expect(formatEstimate(e)).toBe('$10.13 / 1M tok est.');
    expect(formatEstimate({ ...e, unit: 'USD/day', value: 63.40166 })).toBe('$63.40/day est.');
    expect(formatEstimate({ ...e, value: null, unavailableReason: 'no price' })).toBe('unavailable');
  });

  it('AMD: GTT used joins VRAM in the memory panel, which names it; NVIDIA keeps its title', () => {
    const amd: SeriesResult = {
      ...RESULT,
      series: [
        { metric: 'gpu.0.vram_used_mib', unit: 'MiB', avg: [410, 412], max: null },
        { metric: 'gpu.0.gtt_used_mib', unit: 'MiB', avg: [19_000, 19_456], max: null },
        { metric: 'gpu.0.gtt_total_mib', unit: 'MiB', avg: [113_664, 113_664], max: null },
      ],
    };
    const lines = panelSeries(panel('vram'), amd);
    expect([...lines.keys()]).toEqual(['gpu.0.vram_used_mib', 'gpu.0.gtt_used_mib']);
    expect(seriesLabel('gpu.0.gtt_used_mib')).toBe('GPU 0 GTT');
    expect(metricUnit('gpu.0.gtt_used_mib')).toBe('MiB');
    expect(panelTitle(panel('vram'), 'amd')).toBe('VRAM and GTT used per GPU');
    expect(panelTitle(panel('vram'), 'nvidia')).toBe('VRAM used per GPU');
    expect(panelTitle(panel('vram'), null)).toBe('VRAM used per GPU');
    expect(panelTitle(panel('util'), 'amd')).toBe('GPU utilisation');
  });

  it('cache panel: prefix hit, prompt-cache reuse and spec acceptance, in %, named for the legend', () => {
    const cache = panel('cache');
    expect(cache.unit).toBe('%');
    expect(cache.yMax).toBe(100);
    for (const m of ['svc.coder.prefix_hit_pct', 'svc.coder.prompt_cache_pct', 'svc.coder.spec_accept_pct']) expect(cache.match(m)).toBe(true);
    expect(cache.match('svc.coder.kv_pct')).toBe(false);
    expect(seriesLabel('svc.coder.prompt_cache_pct')).toBe('coder prompt-cache reuse');
    expect(seriesLabel('svc.coder.spec_accept_pct')).toBe('coder spec. acceptance');
    expect(seriesLabel('svc.coder.prefix_hit_pct')).toBe('coder prefix hit');
    expect(seriesLabel('svc.coder.kv_pct')).toBe('coder KV');
    expect(seriesLabel('svc.coder.proxy_interactive_wait_p95_s')).toBe('coder interactive wait p95');
  });

  it('a line with no known point stays out of the cache legend (no drafts: no spec-acceptance entry)', () => {
    const lines = new Map<string, Point[]>([
      ['svc.q.spec_accept_pct', [[T, null], [T + 1000, null]]],
      ['svc.q.prompt_cache_pct', [[T, null], [T + 1000, 31]]],
    ]);
    expect(legendData(panel('cache'), lines)).toEqual({ data: ['q prompt-cache reuse'] });
    expect(legendData(panel('kv'), lines)).toEqual({});
    const update = panelDataUpdate(lines, { fromMs: T, toMs: T + 1000 }, panel('cache')) as { legend?: { data: string[] }; series: unknown[] };
    // the legend is HTML (legendEntries), so the update carries none
    expect(update.legend).toBeUndefined();
    // the empty line is still drawn (all gaps), so its tooltip says "—" rather than nothing or 0
    expect(update.series).toHaveLength(2);
    expect('legend' in (panelDataUpdate(lines, { fromMs: T, toMs: T + 1000 }, panel('kv')) as object)).toBe(false);
  });
});
