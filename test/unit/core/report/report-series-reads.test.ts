// The report's series reads (reportSeriesReads: the chart series with a
// per-bucket presence of every GPU figure, and each host's cost answered from
// the rows its charts were read from) give the same health, charts and cost
// figures as the plain path: the whole `gpu.*` set read for coverage, and the
// cost reading the store itself. On a small fleet in a real series store with
// gaps, unknown readings and a host whose only figure is a GPU temperature.
import { describe, expect, it } from 'vitest';
import { ReportRequestSchema, type HostCost, type SeriesQuery, type SeriesResult } from '../../../../src-preload/contract/index.js';
import { FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { hostCost, windowUsage, type WindowCostSources } from '../../../../src-main/core/cost/index.js';
import { buildEvidence, type ReportSources } from '../../../../src-main/core/report/builder.js';
import { reportSeriesReads } from '../../../../src-main/core/report/series-window.js';
import { openStore } from '../../../../src-main/core/store/index.js';
import { SeriesStore } from '../../../../src-main/core/telemetry/index.js';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 2, 0, 0, 0);
const END = T0 + 26 * HOUR;
const HOSTS = ['a', 'b', 'c', 'd'];

/** 26 hours of readings every 30 s: a steady host, one with gaps and GPU-temperature-only stretches, one with nothing but a temperature. */
function fleet(): { series: SeriesStore; clock: FakeClock } {
  const clock = new FakeClock(T0);
  const db = openStore({ file: ':memory:', clock }).db;
  const series = new SeriesStore({ db, clock, memoryWindowMs: 10 * 60_000 });
  for (let t = T0; t < END; t += 30_000) {
    if (t > clock.now()) clock.advance(t - clock.now());
    const i = (t - T0) / 30_000;
    series.record('a', t, { 'host.gen_tok_s': 100 + (i % 17), 'host.busy_pct': (i * 7) % 100, 'gpu.0.vram_used_mib': 30_000 + i, 'gpu.1.vram_used_mib': 20_000, 'gpu.0.temp_c': 60, 'svc.q.kv_pct': 5 });
    const hourOfDay = Math.floor((t - T0) / HOUR) % 24;
    if (hourOfDay === 5 || hourOfDay === 6) {
      // the GPU tool answers only temperatures: still telemetry, no chart value
      series.record('b', t, { 'gpu.0.temp_c': 55, 'gpu.0.vram_used_mib': null, 'host.gen_tok_s': null, 'host.busy_pct': null });
    } else if (hourOfDay !== 9 && !(i % 11 === 0)) {
      series.record('b', t, { 'host.gen_tok_s': i % 3 === 0 ? null : 40, 'host.busy_pct': i % 5 === 0 ? null : 50, 'gpu.0.vram_used_mib': 12_000, 'gpu.0.temp_c': 50 });
    }
    series.record('c', t, { 'gpu.0.temp_c': 42 });
    if (i % 20 === 0) series.flush();
  }
  clock.advance(END - clock.now());
  series.flush();
  return { series, clock };
}

function sources(series: SeriesStore, clock: FakeClock, optimized: boolean, queries: SeriesQuery[]): ReportSources {
  const store = {
    query: (q: SeriesQuery) => {
      queries.push(q);
      return series.query(q);
    },
    queryWithPresence: (q: SeriesQuery, anyOf: readonly string[]) => series.queryWithPresence(q, anyOf),
  };
  const reads = reportSeriesReads(store, clock, silentLogger);
  const cost = (host: string, fromMs: number, toMs: number, read?: (q: SeriesQuery) => SeriesResult): HostCost => {
    const src: WindowCostSources = { series: read ?? ((q) => store.query(q)), requestSpans: () => [], now: () => clock.now() };
    return hostCost({ host, pricePerHourUsd: 2.5, usage: windowUsage(src, host, fromMs, toMs) });
  };
  return {
    now: () => clock.now(),
    actor: 'test',
    console: { version: 't', mode: 'web', demo: true },
    hosts: () => HOSTS.map((label) => ({ label, pricePerHourUsd: 2.5 })),
    liveChecks: () => Promise.reject(new Error('no live checks')),
    offlineInventory: (label) => ({ label, address: label, jumpHost: null, connection: 'unknown', liveError: null, hostKeyFingerprint: null, pricePerHourUsd: 2.5, gpus: [], services: [] }) as never,
    auditEvents: () => [],
    auditCoverage: () => ({ fromSeq: null, toSeq: null, headSeq: null, headHash: null, chainVerified: true, chainProblem: null }),
    benchRuns: () => [],
    trafficEvaluation: () => {
      throw new Error('not asked');
    },
    actions: () => [],
    // The plain path: every `gpu.*` series read and looked at, as before the presence read.
    series: optimized ? reads.series : (host, from, to) => reads.series(host, from, to, ['host.gen_tok_s', 'host.busy_pct', 'gpu.*']),
    hostCost: (label, from, to) => cost(label, from, to, optimized ? reads.reader(label) : undefined),
    gateMarks: () => new Map(),
  };
}

describe('report series reads', () => {
  for (const [name, fromMs, toMs] of [
    ['a day inside the readings (24h range, 10 s rows)', END - 24 * HOUR, END],
    ['26 hours (7d range, 5 min rows)', T0, END],
    ['a window cut mid-bucket', END - 20 * HOUR - 90_000, END - 3 * HOUR + 45_000],
  ] as const) {
    it(`health, charts and cost equal the plain path: ${name}`, async () => {
      const { series, clock } = fleet();
      const request = ReportRequestSchema.parse({ fromMs, toMs, live: false, sections: ['health', 'cost'] });
      const plainQueries: SeriesQuery[] = [];
      const fastQueries: SeriesQuery[] = [];
      const plain = await buildEvidence(request, sources(series, clock, false, plainQueries));
      const fast = await buildEvidence(request, sources(series, clock, true, fastQueries));
      expect(fast.health).toEqual(plain.health);
      expect(fast.charts).toEqual(plain.charts);
      expect(fast.cost).toEqual(plain.cost);
      // The optimized build read each host once (cost from the held rows); the plain one read again for cost.
      expect(fastQueries).toEqual([]);
      expect(plainQueries.filter((q) => q.metrics?.join() === 'host.gen_tok_s,host.busy_pct')).toHaveLength(HOSTS.length);
      // The figures under test are not trivial: b's coverage counts temperature-only buckets the charts do not draw.
      const b = fast.health!.find((h) => h.host === 'b')!;
      expect(b.telemetryCoveragePct).toBeGreaterThan(0);
      expect(b.stalePeriods.length).toBeGreaterThan(0);
      expect(fast.health!.find((h) => h.host === 'c')!.telemetryCoveragePct).toBeGreaterThan(90);
      expect(fast.cost!.find((c) => c.host === 'a')!.observedSeconds).toBeGreaterThan(0);
    });
  }

  it('presence counts a bucket whose only value is a series outside the chart columns', () => {
    const { series } = fleet();
    const q: SeriesQuery = { host: 'b', range: '24h', metrics: ['host.gen_tok_s', 'host.busy_pct', 'gpu.*.vram_used_mib'], endMs: END };
    const { result, present } = series.queryWithPresence(q, ['host.gen_tok_s', 'host.busy_pct', 'gpu.*']);
    const all = series.query({ ...q, metrics: ['host.gen_tok_s', 'host.busy_pct', 'gpu.*'] });
    expect(result.t).toEqual(all.t);
    expect(present).toEqual(all.t.map((_, i) => all.series.some((c) => c.avg[i] !== null)));
    const chartOnly = result.t.map((_, i) => result.series.some((c) => c.avg[i] !== null));
    expect(present.filter(Boolean).length).toBeGreaterThan(chartOnly.filter(Boolean).length);
    expect(result.series.map((c) => c.metric).sort()).toEqual(['gpu.0.vram_used_mib', 'host.busy_pct', 'host.gen_tok_s']);
  });
});
