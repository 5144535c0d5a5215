import { describe, expect, it } from 'vitest';
import { parsePrometheusText, readVllmMetrics } from '../../../../src-main/core/telemetry/index.js';

const read = (text: string) => readVllmMetrics(parsePrometheusText(text).families);

// Shaped like a 0.10.x dump (wire-formats §1): both KV names, _created gauges,
// engine labels, cache_config_info with string labels, two DP engines.
const NEW_TWO_ENGINES = `
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="q"} 2.0
vllm:num_requests_running{engine="1",model_name="q"} 1.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="q"} 4.0
vllm:num_requests_waiting{engine="1",model_name="q"} 0.0
# HELP vllm:gpu_cache_usage_perc GPU KV-cache usage. DEPRECATED: Use vllm:kv_cache_usage_perc instead.
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{engine="0",model_name="q"} 0.9
vllm:gpu_cache_usage_perc{engine="1",model_name="q"} 0.9
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="q"} 0.25
vllm:kv_cache_usage_perc{engine="1",model_name="q"} 0.75
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{engine="0",model_name="q"} 1000.0
vllm:prompt_tokens_total{engine="1",model_name="q"} 500.0
# TYPE vllm:prompt_tokens_created gauge
vllm:prompt_tokens_created{engine="0",model_name="q"} 1.7e9
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="q"} 300.0
vllm:generation_tokens_created{engine="0",model_name="q"} 1.7e9
vllm:generation_tokens_total{engine="1",model_name="q"} 200.0
# TYPE vllm:request_success_total counter
vllm:request_success_total{engine="0",finished_reason="stop",model_name="q"} 7.0
vllm:request_success_total{engine="1",finished_reason="stop",model_name="q"} 3.0
vllm:request_success_total{engine="0",finished_reason="length",model_name="q"} 2.0
vllm:request_success_total{engine="0",finished_reason="abort",model_name="q"} 0.0
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{engine="0",model_name="q"} 800.0
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{engine="0",model_name="q"} 200.0
# TYPE vllm:engine_sleep_state gauge
vllm:engine_sleep_state{engine="0",model_name="q",sleep_state="awake"} 1.0
vllm:engine_sleep_state{engine="0",model_name="q",sleep_state="weights_offloaded"} 0.0
vllm:engine_sleep_state{engine="0",model_name="q",sleep_state="discard_all"} 0.0
# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig
# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="16",cache_dtype="auto",engine="0",num_cpu_blocks="None",num_gpu_blocks="850"} 1.0
vllm:cache_config_info{block_size="16",cache_dtype="auto",engine="1",num_cpu_blocks="None",num_gpu_blocks="850"} 1.0
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="q"} 3.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="1.0",model_name="q"} 8.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="q"} 10.0
vllm:time_to_first_token_seconds_bucket{engine="1",le="0.1",model_name="q"} 1.0
vllm:time_to_first_token_seconds_bucket{engine="1",le="1.0",model_name="q"} 2.0
vllm:time_to_first_token_seconds_bucket{engine="1",le="+Inf",model_name="q"} 2.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="q"} 4.5
vllm:time_to_first_token_seconds_sum{engine="1",model_name="q"} 0.5
vllm:time_to_first_token_seconds_count{engine="0",model_name="q"} 10.0
vllm:time_to_first_token_seconds_count{engine="1",model_name="q"} 2.0
vllm:time_to_first_token_seconds_created{engine="0",model_name="q"} 1.7e9
`;

describe('readVllmMetrics', () => {
  it('sums counters and gauges of requests, averages KV usage across engines, prefers the new KV name', () => {
    const m = read(NEW_TWO_ENGINES);
    expect(m.running).toBe(3);
    expect(m.waiting).toBe(4);
    expect(m.kvCacheUsage).toBeCloseTo(0.5); // (0.25 + 0.75) / 2, not the deprecated 0.9
    expect(m.promptTokensTotal).toBe(1500); // _created ignored
    expect(m.generationTokensTotal).toBe(500);
    expect(m.requestSuccess).toEqual({ stop: 10, length: 2, abort: 0 });
    expect(m.prefixCacheQueries).toBe(800);
    expect(m.prefixCacheHits).toBe(200);
    expect(m.sleepState).toBe('awake');
    expect(m.kvCapacityTokens).toBe(2 * 850 * 16);
    expect(m.ttft).toEqual({
      buckets: [
        { le: 0.1, count: 4 },
        { le: 1, count: 10 },
        { le: Number.POSITIVE_INFINITY, count: 12 },
      ],
      sum: 5,
      count: 12,
    });
  });

  it('accepts old names: no engine label, _total-less counters, gpu_cache_usage_perc, gpu_prefix_cache_*', () => {
    const m = read(`
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="old"} 1.0
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{model_name="old"} 0.125
# TYPE vllm:prompt_tokens counter
vllm:prompt_tokens{model_name="old"} 42
# TYPE vllm:generation_tokens counter
vllm:generation_tokens_total{model_name="old"} 17
# TYPE vllm:gpu_prefix_cache_queries_total counter
vllm:gpu_prefix_cache_queries_total{model_name="old"} 10
`);
    expect(m.running).toBe(1);
    expect(m.waiting).toBeNull();
    expect(m.kvCacheUsage).toBe(0.125);
    expect(m.promptTokensTotal).toBe(42);
    expect(m.generationTokensTotal).toBe(17);
    expect(m.prefixCacheQueries).toBe(10);
    expect(m.prefixCacheHits).toBeNull();
    expect(m.sleepState).toBe('unknown');
    expect(m.kvCapacityTokens).toBeNull();
    expect(m.ttft).toBeNull();
    expect(m.requestSuccess).toEqual({});
  });

  it('maps the sleep states', () => {
    const sleep = (state: string) =>
      read(
        ['awake', 'weights_offloaded', 'discard_all']
          .map((s) => `vllm:engine_sleep_state{engine="0",sleep_state="${s}"} ${s === state ? 1 : 0}`)
          .join('\n'),
      ).sleepState;
    expect(sleep('awake')).toBe('awake');
    expect(sleep('weights_offloaded')).toBe('asleep-1');
    expect(sleep('discard_all')).toBe('asleep-2');
    expect(sleep('none')).toBe('unknown');
  });

  it('ignores NaN gauges and returns nulls for an empty exposition', () => {
    expect(read('vllm:kv_cache_usage_perc{engine="0"} NaN').kvCacheUsage).toBeNull();
    const empty = read('');
    expect(empty.running).toBeNull();
    expect(empty.generationTokensTotal).toBeNull();
  });
});
