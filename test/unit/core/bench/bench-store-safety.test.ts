import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BenchRun, FleetSnapshot, LevelResult, ServiceView } from '../../../../src-preload/contract/index.js';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { BenchRepository, NO_PEAKS, importGuidellm, markdownTable, peakReadingOf, raisePeaks } from '../../../../src-main/core/bench/index.js';
import { openStore, type Store } from '../../../../src-main/core/store/index.js';
import { hostStateFromView } from '../../../helpers/fleet-state.js';

// #26.5: one crafted GuideLLM report (a mean of 1e308) was stored with
// completionTokens = Infinity, which JSON wrote as null, and every later read
// of the runs failed. Imports are refused with the field named; a row that
// fails on read is listed as damaged and can still be deleted.
// #27.6: bench peaks on an AMD APU record GTT beside the VRAM carve-out.

const dist = (v: number) => ({ successful: { median: v, mean: v, percentiles: { p50: v, p95: v } } });
function report(over: { tokS?: number; ttftMs?: number; duration?: number } = {}): string {
  return JSON.stringify({
    benchmarks: [
      {
        args: { strategy: { type_: 'concurrent', streams: 4 } },
        duration: over.duration ?? 10,
        request_totals: { successful: 12, errored: 0 },
        metrics: {
          time_to_first_token_ms: dist(over.ttftMs ?? 192),
          request_latency: dist(4.2),
          inter_token_latency_ms: dist(57),
          output_tokens_per_second: dist(over.tokS ?? 71.5),
          requests_per_second: dist(1.2),
        },
      },
    ],
  });
}

describe('GuideLLM import refuses figures out of range, naming the field', () => {
  it('a mean of 1e308 tokens/s', () => {
    expect(() => importGuidellm(report({ tokS: 1e308 }))).toThrow(
      expect.objectContaining({
        code: 'BENCH_IMPORT_OUT_OF_RANGE',
        message: expect.stringContaining('benchmarks[0].metrics.output_tokens_per_second.successful.median is 1e+308'),
        details: expect.objectContaining({ field: 'benchmarks[0].metrics.output_tokens_per_second.successful.median', value: 1e308 }),
      }),
    );
  });

  it('a negative latency', () => {
    expect(() => importGuidellm(report({ ttftMs: -5 }))).toThrow(expect.objectContaining({ code: 'BENCH_IMPORT_OUT_OF_RANGE', message: expect.stringMatching(/time_to_first_token_ms.*-5.*at least 0/) }));
  });

  it('an ordinary report still imports', () => {
    expect(importGuidellm(report()).levels[0]).toMatchObject({ level: 4, outputTokPerS: 71.5, completionTokens: 715 });
  });

  it('a level without a token rate has unknown token counts, never 0', () => {
    const text = JSON.parse(report()) as { benchmarks: { metrics: Record<string, unknown> }[] };
    delete text.benchmarks[0]!.metrics.output_tokens_per_second;
    expect(importGuidellm(JSON.stringify(text)).levels[0]).toMatchObject({ outputTokPerS: null, completionTokens: null, promptTokens: null });
  });
});

const level: LevelResult = {
  phase: 'level', level: 1, requests: 1, completed: 1, failed: 0, cancelled: 0, wallMs: 1000, ttftP50Ms: 1, ttftP95Ms: 1, latencyP50Ms: 1, latencyP95Ms: 1,
  itlP50Ms: 1, itlP95Ms: 1, queueP95Ms: null, outputTokPerS: 10, requestsPerS: 1, completionTokens: 10, promptTokens: 1, errorsByCode: {}, truncated: 0,
  jsonParsed: null, schemaValid: null, checked: null, partial: false,
};
const run = (id: string, startedAt: number, over: Partial<BenchRun> = {}): BenchRun => ({
  id, name: id, state: 'imported', source: 'guidellm', scenario: null, upstream: null, host: null, model: 'M', slots: null, startedAt, finishedAt: startedAt,
  levels: [level], peaks: { ...NO_PEAKS }, baseline: false, error: null, note: null, ...over,
});

describe('a damaged row in the store', () => {
  let store: Store;
  let repo: BenchRepository;
  beforeEach(() => {
    store = openStore({ file: ':memory:' });
    repo = new BenchRepository(store.db, new FakeClock());
    repo.insertRun(run('good-1', 1000));
    repo.insertRun(run('good-2', 3000));
    // What an old import could write for a duration of 1e308: wallMs Infinity, stored by JSON as null.
    repo.insertRun(run('bad', 2000));
    store.db.prepare('UPDATE bench_runs SET levels = ? WHERE id = ?').run(JSON.stringify([{ ...level, wallMs: null }]), 'bad');
  });
  afterEach(() => store.close());

  it('is listed apart, with its id and what failed; the other runs are listed as before', () => {
    const out = repo.listRuns(50);
    expect(out.runs.map((r) => r.id)).toEqual(['good-2', 'good-1']);
    expect(out.damaged).toEqual([{ id: 'bad', name: 'bad', startedAt: 2000, host: null, problem: expect.stringMatching(/^levels\.0\.wallMs: .*number/) }]);
  });

  it('reading it alone is a coded error naming the damage, and it can be deleted (its requests with it)', () => {
    expect(() => repo.getRun('bad')).toThrow(expect.objectContaining({ code: 'BENCH_RUN_DAMAGED', details: expect.objectContaining({ id: 'bad' }) }));
    store.db.prepare("INSERT INTO bench_requests (run_id, seq, phase, level, start_ms, itl_ms) VALUES ('bad', 0, 'level', 1, 0, '[]')").run();
    repo.deleteRun('bad');
    expect(repo.listRuns(50).damaged).toEqual([]);
    expect(store.db.prepare("SELECT COUNT(*) AS n FROM bench_requests WHERE run_id = 'bad'").get()).toEqual({ n: 0 });
    expect(() => repo.deleteRun('bad')).toThrow(expect.objectContaining({ code: 'BENCH_RUN_NOT_FOUND' }));
  });

  it('a column that is not JSON at all is damage too', () => {
    store.db.prepare("UPDATE bench_runs SET peaks = '{oops' WHERE id = 'good-1'").run();
    expect(repo.listRuns(50).damaged.map((d) => [d.id, d.problem.split(':')[0]])).toEqual([
      ['bad', 'levels.0.wallMs'],
      ['good-1', 'peaks'],
    ]);
  });

  it('a row an old import wrote with completionTokens null (from Infinity) reads back with unknown tokens', () => {
    repo.insertRun(run('old', 5000));
    store.db.prepare('UPDATE bench_runs SET levels = ? WHERE id = ?').run(JSON.stringify([{ ...level, completionTokens: null, promptTokens: null }]), 'old');
    expect(repo.getRun('old').levels[0]).toMatchObject({ completionTokens: null, promptTokens: null });
    expect(repo.listRuns(50).damaged.map((d) => d.id)).toEqual(['bad']);
  });

  it('a run that would not read back is refused before it is written', () => {
    expect(() => repo.insertRun(run('inf', 4000, { levels: [{ ...level, completionTokens: Infinity }] }))).toThrow(
      expect.objectContaining({ code: 'BENCH_RUN_INVALID', message: expect.stringContaining('levels.0.completionTokens') }),
    );
    expect(repo.listRuns(50).runs.map((r) => r.id)).not.toContain('inf');
  });

  it('a run stored before GTT peaks were kept still reads (gttMiB absent = unknown)', () => {
    store.db.prepare('UPDATE bench_runs SET peaks = ? WHERE id = ?').run(JSON.stringify({ vramMiB: 100, gpuUtilPct: null, powerW: null, kvCachePct: null, samples: 1 }), 'good-1');
    expect(repo.getRun('good-1').peaks).toEqual({ vramMiB: 100, gpuUtilPct: null, powerW: null, kvCachePct: null, samples: 1 });
  });
});

type HostView = FleetSnapshot['hosts'][number];
const gpu = (over: Partial<HostView['gpus'][number]>): HostView['gpus'][number] => ({
  index: 0, uuid: null, name: 'GPU', memoryUsedMiB: null, memoryTotalMiB: null, utilizationPct: null, powerW: null, powerLimitW: null, temperatureC: null, ...over,
});
const host = (gpus: HostView['gpus'], stale = false) => hostStateFromView({ label: 'h', gpus, gpuStale: stale, services: [{ id: 'llama', kvCachePct: 40 } as ServiceView] }, 0);

describe('GPU peaks of a run', () => {
  it('an AMD APU reading keeps GTT (where the model lives) beside the VRAM carve-out', () => {
    // strix as amdgpu reports it: 512 MiB carve-out with 120 MiB used, the model's 30 GiB in GTT.
    const strix = host([gpu({ vendor: 'amd', memoryUsedMiB: 120, memoryTotalMiB: 512, gttUsedMiB: 30_800, gttTotalMiB: 63_488, utilizationPct: 97, powerW: 110 })]);
    const peaks = { ...NO_PEAKS };
    raisePeaks(peaks, peakReadingOf(strix, 'llama')!);
    raisePeaks(peaks, peakReadingOf(host([gpu({ vendor: 'amd', memoryUsedMiB: 118, gttUsedMiB: 31_200, gttTotalMiB: 63_488 })]), 'llama')!);
    expect(peaks).toEqual({ vramMiB: 120, gttMiB: 31_200, gpuUtilPct: 97, powerW: 110, kvCachePct: 40, samples: 2 });
    expect(markdownTable(run('r', 0, { peaks }))).toContain('Peak 120 MiB VRAM, 31,200 MiB GTT, 97% utilisation, 110 W, KV cache 40%.');
  });

  it('an NVIDIA reading has no GTT: unknown, not 0; a stale reading is not a sample', () => {
    const l20 = host([gpu({ vendor: 'nvidia', memoryUsedMiB: 38_751 }), gpu({ index: 1, vendor: 'nvidia', memoryUsedMiB: 1_000 })]);
    expect(peakReadingOf(l20, 'llama')).toMatchObject({ vramMiB: 39_751, gttMiB: null });
    expect(peakReadingOf(host([gpu({ vendor: 'amd', memoryUsedMiB: 1, gttUsedMiB: null, gttTotalMiB: null })]), null)).toMatchObject({ gttMiB: null, kvCachePct: null });
    expect(peakReadingOf(host([gpu({ memoryUsedMiB: 5 })], true), 'llama')).toBeNull();
  });
});
