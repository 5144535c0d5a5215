import { describe, expect, it } from 'vitest';
import { parsePrometheusText, readVllmMetrics } from '../../../../src-main/core/telemetry/index.js';
import { VllmIssueCode, readVllmExposition } from '../../../../src-main/core/telemetry/vllm-metrics.js';
import { vllmDump } from '../../../fixtures/vllm/dumps.js';

const read = (text: string) => readVllmMetrics(parsePrometheusText(text).families);

// Each dump (test/fixtures/vllm, SOURCE.txt) read whole: the figures and the
// wire names they came from.
describe('readVllmMetrics on each version shape', () => {
  const cases = [
    {
      file: 'vllm-0.8.x-v0-engine.txt',
      running: 2,
      waiting: 0,
      kv: 0.0875,
      capacity: 4096 * 16,
      prefix: [null, null],
      unit: null,
      finished: 64,
      engines: null,
      names: { kvCacheUsage: 'vllm:gpu_cache_usage_perc', itl: 'vllm:time_per_output_token_seconds', prefixCache: null },
      sleep: 'unknown',
      ttft: 64,
    },
    {
      file: 'vllm-0.8.x.txt',
      running: 4,
      waiting: 1,
      kv: 0.3125,
      capacity: 8192 * 16,
      prefix: [5200, 1300],
      unit: 'blocks',
      finished: 155,
      engines: ['0'],
      names: { kvCacheUsage: 'vllm:gpu_cache_usage_perc', itl: 'vllm:time_per_output_token_seconds', prefixCache: 'vllm:gpu_prefix_cache' },
      sleep: 'unknown',
      ttft: 155,
    },
    {
      file: 'vllm-0.9.x.txt',
      running: 7,
      waiting: 3,
      kv: 0.55,
      capacity: 21000 * 16,
      prefix: [880000, 330000],
      unit: 'tokens',
      finished: 661,
      engines: ['0'],
      names: { kvCacheUsage: 'vllm:kv_cache_usage_perc', itl: 'vllm:time_per_output_token_seconds', prefixCache: 'vllm:prefix_cache' },
      sleep: 'unknown',
      ttft: 661,
    },
    {
      file: 'vllm-0.10.x.txt',
      running: 12,
      waiting: 0,
      kv: 0.71,
      capacity: 28000 * 16,
      prefix: [1250000, 500000],
      unit: 'tokens',
      finished: 1068,
      engines: ['0'],
      names: { kvCacheUsage: 'vllm:kv_cache_usage_perc', itl: 'vllm:time_per_output_token_seconds', prefixCache: 'vllm:prefix_cache' },
      sleep: 'unknown',
      ttft: 1068,
    },
    {
      file: 'vllm-0.11.x.txt',
      running: 5,
      waiting: 2,
      kv: 0.42,
      capacity: 30500 * 16,
      prefix: [640000, 192000],
      unit: 'tokens',
      finished: 433,
      engines: ['0'],
      names: { kvCacheUsage: 'vllm:kv_cache_usage_perc', itl: 'vllm:inter_token_latency_seconds', prefixCache: 'vllm:prefix_cache' },
      sleep: 'unknown',
      ttft: 433,
    },
    {
      file: 'vllm-0.12.x.txt',
      running: 9,
      waiting: 4,
      kv: 0.6375,
      capacity: 26000 * 16,
      prefix: [2000000, 900000],
      unit: 'tokens',
      finished: 1629,
      engines: ['0'],
      names: { kvCacheUsage: 'vllm:kv_cache_usage_perc', itl: 'vllm:inter_token_latency_seconds', prefixCache: 'vllm:prefix_cache' },
      sleep: 'awake',
      ttft: 1629,
    },
    {
      file: 'vllm-0.12.x-dp2.txt',
      running: 11,
      waiting: 2,
      kv: 0.5,
      capacity: 2 * 20000 * 16,
      prefix: [100000, 36800],
      unit: 'tokens',
      finished: 210,
      engines: ['0', '1'],
      names: { kvCacheUsage: 'vllm:kv_cache_usage_perc', itl: 'vllm:inter_token_latency_seconds', prefixCache: 'vllm:prefix_cache' },
      sleep: 'awake',
      ttft: 210,
    },
    {
      file: 'vllm-newest.txt',
      running: 3,
      waiting: 5,
      kv: 0.875,
      capacity: 60000 * 16,
      prefix: [300000, 150000],
      unit: 'tokens',
      finished: 287,
      engines: ['0'],
      names: { kvCacheUsage: 'vllm:kv_cache_usage_perc', itl: 'vllm:inter_token_latency_seconds', prefixCache: 'vllm:prefix_cache' },
      sleep: 'awake',
      ttft: 287,
    },
  ] as const;

  for (const c of cases) {
    it(`${c.file}: running ${c.running}, KV ${c.kv}, prefix ${c.prefix.join('/')}, ${c.engines?.length ?? 'no'} engine label(s)`, () => {
      const x = readVllmExposition(vllmDump(c.file));
      expect(x.parseErrors).toBe(0);
      expect(x.cut).toBe(false);
      const m = x.metrics;
      expect(m.issues).toEqual([]);
      expect(m.running).toBe(c.running);
      expect(m.waiting).toBe(c.waiting);
      expect(m.kvCacheUsage).toBeCloseTo(c.kv, 12);
      expect(m.kvCapacityTokens).toBe(c.capacity);
      expect([m.prefixCacheQueries, m.prefixCacheHits]).toEqual(c.prefix);
      expect(m.prefixCacheUnit).toBe(c.unit);
      expect(m.requestsFinishedTotal).toBe(c.finished);
      expect(m.perEngine?.map((e) => e.engine) ?? null).toEqual(c.engines);
      expect(m.engineCount).toBe(c.engines?.length ?? 1);
      expect(m.names).toEqual(c.names);
      expect(m.sleepState).toBe(c.sleep);
      expect(m.ttft?.count).toBe(c.ttft);
      expect(m.e2e?.count).toBe(c.ttft);
      // _created gauges (0.8 … 0.12 single API server) never count as values
      expect(m.promptTokensTotal).toBeGreaterThan(1000);
      expect(m.specDraftTokensTotal).toBeNull();
    });
  }

  it('prefers the new names where a version emits both (0.9, 0.10: the deprecated ones carry the same values here)', () => {
    const m = read(vllmDump('vllm-0.10.x.txt').replace(/^(vllm:gpu_cache_usage_perc\{.*\}) 0\.71$/m, '$1 0.99'));
    expect(m.kvCacheUsage).toBe(0.71);
    expect(m.names.kvCacheUsage).toBe('vllm:kv_cache_usage_perc');
  });

  it('0.11 with --show-hidden-metrics-for-version=0.10 emits time_per_output_token again: inter_token_latency wins', () => {
    const tpot = vllmDump('vllm-0.10.x.txt').match(/^# HELP vllm:time_per_output_token_seconds [\s\S]*?(?=^# HELP vllm:(?!time_per_output_token_seconds))/m)![0];
    const m = read(vllmDump('vllm-0.11.x.txt') + tpot.replaceAll('qwen2.5-7b', 'mistralai/Mistral-7B-Instruct-v0.3'));
    expect(m.names.itl).toBe('vllm:inter_token_latency_seconds');
    expect(m.itl?.count).toBe(433 * 380);
  });

  it('counters registered with or without _total read alike (older code named them ..._total itself)', () => {
    const m = read(`# TYPE vllm:prompt_tokens counter
vllm:prompt_tokens{model_name="old"} 42
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{model_name="old"} 17
`);
    expect([m.promptTokensTotal, m.generationTokensTotal]).toEqual([42, 17]);
  });

  it('prefix hits and queries come from one generation of names (never 0.10 tokens over 0.8 blocks)', () => {
    const m = read(`# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{engine="0",model_name="m"} 1000.0
# HELP vllm:gpu_prefix_cache_hits_total GPU prefix cache hits, in terms of number of cached blocks.
# TYPE vllm:gpu_prefix_cache_hits_total counter
vllm:gpu_prefix_cache_hits_total{engine="0",model_name="m"} 40.0
`);
    expect(m.prefixCacheQueries).toBe(1000);
    expect(m.prefixCacheHits).toBeNull();
    expect(m.names.prefixCache).toBe('vllm:prefix_cache');
  });
});

describe('data-parallel engines (vllm-0.12.x-dp2.txt)', () => {
  it('two engines: counters summed, KV averaged, capacity summed, one figure set per engine', () => {
    const m = readVllmExposition(vllmDump('vllm-0.12.x-dp2.txt')).metrics;
    expect(m.engineCount).toBe(2);
    expect(m.prefixCacheHits! / m.prefixCacheQueries!).toBe(0.368);
    expect(m.promptTokensTotal).toBe(60000 + 58000);
    expect(m.generationTokensTotal).toBe(42000 + 40000);
    expect(m.requestSuccess).toEqual({ stop: 193, length: 15, abort: 2 });
    expect(m.perEngine).toEqual([
      { engine: '0', running: 6, waiting: 2, kvCacheUsage: 0.4, promptTokensTotal: 60000, generationTokensTotal: 42000, prefixCacheQueries: 50000, prefixCacheHits: 20000 },
      { engine: '1', running: 5, waiting: 0, kvCacheUsage: 0.6, promptTokensTotal: 58000, generationTokensTotal: 40000, prefixCacheQueries: 50000, prefixCacheHits: 16800 },
    ]);
    // histograms: buckets summed across engines, same bounds
    expect(m.ttft?.buckets).toHaveLength(23);
    expect(m.ttft?.buckets.at(-1)).toEqual({ le: Number.POSITIVE_INFINITY, count: 210 });
  });

  it('multiprocess mode: a gauge written by two API-server processes (pid label) is one engine figure, averaged', () => {
    const m = read(`# HELP vllm:kv_cache_usage_perc Multiprocess metric
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m",pid="4101"} 0.25
vllm:kv_cache_usage_perc{engine="0",model_name="m",pid="4102"} 0.25
vllm:kv_cache_usage_perc{engine="1",model_name="m",pid="4101"} 0.75
vllm:kv_cache_usage_perc{engine="1",model_name="m",pid="4102"} 0.75
# HELP vllm:prompt_tokens_total Multiprocess metric
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{engine="0",model_name="m"} 100.0
vllm:prompt_tokens_total{engine="1",model_name="m"} 50.0
`);
    expect(m.kvCacheUsage).toBeCloseTo(0.5, 12);
    expect(m.perEngine?.map((e) => e.kvCacheUsage)).toEqual([0.25, 0.75]);
    expect(m.promptTokensTotal).toBe(150);
    expect(m.issues).toEqual([]);
  });

  it('engines in rank order, "10" after "2"', () => {
    const m = read(['2', '10', '0'].map((e) => `vllm:num_requests_running{engine="${e}",model_name="m"} ${e}.0`).join('\n') + '\n');
    expect(m.perEngine?.map((e) => e.engine)).toEqual(['0', '2', '10']);
    expect(m.running).toBe(12);
  });
});

describe('speculative decoding and the newest counters', () => {
  it('spec decode: drafts, drafted and accepted tokens, accepted by position', () => {
    const m = readVllmExposition(vllmDump('vllm-0.12.x-spec-decode.txt')).metrics;
    expect(m.specDraftsTotal).toBe(4000);
    expect(m.specDraftTokensTotal).toBe(12000);
    expect(m.specAcceptedTokensTotal).toBe(8100);
    expect(m.specAcceptedByPosition).toEqual([3400, 2700, 2000]);
  });

  it('0.8 spec decode had no num_drafts nor per-position counters', () => {
    const m = read(`# TYPE vllm:spec_decode_num_draft_tokens_total counter
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="m"} 90.0
# TYPE vllm:spec_decode_num_accepted_tokens_total counter
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} 60.0
`);
    expect([m.specDraftsTotal, m.specDraftTokensTotal, m.specAcceptedTokensTotal, m.specAcceptedByPosition]).toEqual([null, 90, 60, null]);
  });

  it('newest: waiting by reason, cached prompt tokens, five finish reasons; by-reason stands in when num_requests_waiting is absent', () => {
    const m = readVllmExposition(vllmDump('vllm-newest.txt')).metrics;
    expect(m.waiting).toBe(5);
    expect(m.waitingByReason).toEqual({ capacity: 4, deferred: 1 });
    expect(m.promptTokensCachedTotal).toBe(150000);
    expect(m.requestSuccess).toEqual({ stop: 250, length: 30, abort: 4, error: 1, repetition: 2 });
    // a series named num_requests_waiting_by_reason is not num_requests_waiting
    const byReasonOnly = read(`vllm:num_requests_waiting_by_reason{engine="0",model_name="m",reason="capacity"} 2.0
vllm:num_requests_waiting_by_reason{engine="0",model_name="m",reason="deferred"} 1.0
`);
    expect(byReasonOnly.waiting).toBe(3);
    expect(read(vllmDump('vllm-0.12.x.txt')).waitingByReason).toBeNull();
  });

  it('maps the sleep states, and engines that disagree read unknown', () => {
    const sleep = (states: string[]) =>
      read(
        states
          .flatMap((state, e) =>
            ['awake', 'weights_offloaded', 'discard_all'].map((s) => `vllm:engine_sleep_state{engine="${e}",model_name="m",sleep_state="${s}"} ${s === state ? 1 : 0}.0`),
          )
          .join('\n') + '\n',
      ).sleepState;
    expect(sleep(['awake'])).toBe('awake');
    expect(sleep(['weights_offloaded', 'weights_offloaded'])).toBe('asleep-1');
    expect(sleep(['discard_all'])).toBe('asleep-2');
    expect(sleep(['none'])).toBe('unknown');
    expect(sleep(['awake', 'discard_all'])).toBe('unknown');
  });

  it('NaN reads as unknown; an empty exposition gives nulls', () => {
    expect(read('vllm:kv_cache_usage_perc{engine="0"} NaN\n').kvCacheUsage).toBeNull();
    const empty = read('');
    expect(empty.running).toBeNull();
    expect(empty.generationTokensTotal).toBeNull();
    expect(empty.perEngine).toBeNull();
    expect(empty.engineCount).toBe(1);
  });
});

describe('bad input: the figures it touches are null, with a coded issue; the rest reads', () => {
  const DP2 = vllmDump('vllm-0.12.x-dp2.txt');
  const line = (text: string, re: RegExp): string => {
    const m = text.match(re);
    if (!m) throw new Error(`no line ${re}`);
    return m[0];
  };
  const codes = (m: { issues: { code: string; family: string }[] }) => m.issues.map((i) => `${i.code} ${i.family}`);

  it('an engine label missing on one series: that family null, that engine null, everything else read', () => {
    const kv1 = line(DP2, /^vllm:kv_cache_usage_perc\{engine="1",.*$/m);
    const m = read(DP2.replace(kv1, kv1.replace('engine="1",', '')));
    expect(m.kvCacheUsage).toBeNull();
    expect(m.perEngine?.map((e) => e.kvCacheUsage)).toEqual([0.4, null]);
    expect(codes(m)).toEqual([`${VllmIssueCode.ENGINE_LABEL_MISSING} vllm:kv_cache_usage_perc`]);
    expect(m.issues[0]!.message).toContain('1 series without the engine label');
    expect(m.engineCount).toBe(2);
    expect(m.running).toBe(11);
    expect(m.prefixCacheHits).toBe(36800);
  });

  it('the label missing on every series of a family while two engines exist: null (a total or one engine? unknown)', () => {
    const m = read(DP2.replace(/^(vllm:prefix_cache_hits_total)\{engine="\d",/gm, '$1{'));
    expect(m.prefixCacheHits).toBeNull();
    expect(m.prefixCacheQueries).toBe(100000);
    // without the label the two series are one series twice, too
    expect(codes(m)).toEqual([`${VllmIssueCode.DUPLICATE_SERIES} vllm:prefix_cache_hits_total`, `${VllmIssueCode.ENGINE_LABEL_MISSING} vllm:prefix_cache_hits_total`]);
  });

  it('one engine and no engine label on a family: the series is that engine (0.8 cache_config_info)', () => {
    const m = read(vllmDump('vllm-0.8.x.txt'));
    expect(m.kvCapacityTokens).toBe(8192 * 16);
    expect(m.issues).toEqual([]);
  });

  it("an engine's series missing from a family: the sum is null, never one engine's count", () => {
    const m = read(DP2.replace(line(DP2, /^vllm:generation_tokens_total\{engine="1",.*\n/m), ''));
    expect(m.generationTokensTotal).toBeNull();
    expect(m.perEngine?.map((e) => e.generationTokensTotal)).toEqual([42000, null]);
    expect(codes(m)).toEqual([`${VllmIssueCode.ENGINE_SERIES_MISSING} vllm:generation_tokens_total`]);
    expect(m.promptTokensTotal).toBe(118000);
  });

  it('the same series twice: null', () => {
    const run0 = line(DP2, /^vllm:num_requests_running\{engine="0",.*\n/m);
    const m = read(DP2.replace(run0, run0 + run0));
    expect(m.running).toBeNull();
    expect(codes(m)).toEqual([`${VllmIssueCode.DUPLICATE_SERIES} vllm:num_requests_running`]);
  });

  it("a histogram engine without +Inf, or with other bounds: that histogram null", () => {
    const noInf = read(DP2.replace(line(DP2, /^vllm:time_to_first_token_seconds_bucket\{engine="1",le="\+Inf".*\n/m), ''));
    expect(noInf.ttft).toBeNull();
    expect(codes(noInf)).toEqual([`${VllmIssueCode.HISTOGRAM_INCOMPLETE} vllm:time_to_first_token_seconds`]);
    expect(noInf.e2e?.count).toBe(210);
    const otherBounds = read(DP2.replace(line(DP2, /^vllm:time_to_first_token_seconds_bucket\{engine="1",le="0.001".*\n/m), ''));
    expect(otherBounds.ttft).toBeNull();
  });

  it('a body cut mid-value: the cut line is not read as a smaller number, and its family is dropped', () => {
    const hits1 = line(DP2, /^vllm:prefix_cache_hits_total\{engine="1",.*$/m); // ... 16800.0
    const cut = DP2.slice(0, DP2.indexOf(hits1) + hits1.length - 4); // ... 168
    expect(read(cut).prefixCacheHits).toBe(20168); // what a lenient parser alone makes of it
    const x = readVllmExposition(cut);
    expect(x.cut).toBe(true);
    expect(x.parseErrors).toBe(1);
    const m = x.metrics;
    expect(m.prefixCacheHits).toBeNull();
    expect(m.prefixCacheQueries).toBe(100000);
    expect(codes(m)).toEqual([`${VllmIssueCode.BODY_CUT} vllm:prefix_cache_hits_total`]);
    expect(m.running).toBe(11);
    expect(m.kvCacheUsage).toBeCloseTo(0.5, 12);
    expect(m.ttft).toBeNull(); // after the cut
  });

  it('a body cut after a complete line of engine 0: engine 1 is missing, the family reads null', () => {
    const hits0 = line(DP2, /^vllm:prefix_cache_hits_total\{engine="0",.*\n/m);
    const x = readVllmExposition(DP2.slice(0, DP2.indexOf(hits0) + hits0.length));
    expect(x.cut).toBe(false); // nothing at the text level tells
    expect(x.metrics.prefixCacheHits).toBeNull();
    expect(codes(x.metrics)).toEqual([`${VllmIssueCode.ENGINE_SERIES_MISSING} vllm:prefix_cache_hits_total`]);
  });

  it('a body cut inside a HELP line keeps the family before it', () => {
    const help = DP2.indexOf('# HELP vllm:prefix_cache_hits_total');
    const x = readVllmExposition(DP2.slice(0, help + 20));
    expect(x.metrics.prefixCacheQueries).toBe(100000);
    expect(x.metrics.prefixCacheHits).toBeNull();
    expect(x.metrics.issues).toEqual([]);
    expect(x.parseErrors).toBe(1);
  });

  it('a body over the size cap: cut there, the family it ends in dropped, one error', () => {
    const hits1 = line(DP2, /^vllm:prefix_cache_hits_total\{engine="1",.*$/m);
    const x = readVllmExposition(DP2, { maxBytes: Buffer.byteLength(DP2.slice(0, DP2.indexOf(hits1) + 20)) });
    expect(x.cut).toBe(true);
    expect(x.parseErrors).toBe(1);
    expect(x.metrics.prefixCacheHits).toBeNull();
    expect(x.metrics.prefixCacheQueries).toBe(100000);
  });

  it('garbage lines among the series are counted and skipped', () => {
    const x = readVllmExposition(DP2.replace('# HELP vllm:kv_cache_usage_perc', '\u0000\u0001 garbage {{\nvllm:kv_cache_usage_perc{engine="0" 1\n# HELP vllm:kv_cache_usage_perc'));
    expect(x.parseErrors).toBe(2);
    expect(x.metrics.kvCacheUsage).toBeCloseTo(0.5, 12);
    expect(x.metrics.issues).toEqual([]);
  });
});
