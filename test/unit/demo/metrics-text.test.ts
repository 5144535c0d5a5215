import { describe, expect, it } from 'vitest';
import { EngineMetrics, TTFT_BUCKETS } from '../../../src-main/demo/engine-metrics.js';
import { pyFloat, renderMetrics } from '../../../src-main/demo/metrics-text.js';

function render() {
  const m = new EngineMetrics(1_700_000_000_000);
  m.promptTokens = 120;
  m.generationTokens = 300;
  m.requestSuccess.stop = 2;
  m.ttft.observe(0.14);
  m.ttft.observe(4.3);
  return renderMetrics({
    modelName: 'Qwen3.6-27B-FP8',
    metrics: m,
    running: 3,
    waiting: 1,
    kvCacheUsage: 0.25,
    sleepState: 'weights_offloaded',
    cacheConfig: { blockSize: 16, numGpuBlocks: 9063, gpuMemoryUtilization: 0.85 },
  });
}

describe('renderMetrics', () => {
  it('prints every sample with its labels in alphabetical order, base and extra labels merged (as prometheus_client does)', () => {
    const samples = render()
      .trimEnd()
      .split('\n')
      .filter((l) => !l.startsWith('#'));
    let withExtra = 0;
    for (const line of samples) {
      const names = [...line.slice(line.indexOf('{') + 1, line.lastIndexOf('}')).matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)].map((m) => m[1]!);
      expect(names, line).toEqual([...names].sort());
      expect(new Set(names).size, line).toBe(names.length);
      if (names.includes('le') || names.includes('finished_reason')) withExtra++;
      if (names.includes('le')) expect(names, line).toEqual(['engine', 'le', 'model_name']);
    }
    expect(withExtra).toBeGreaterThan(10);
  });

  it('is well-formed exposition text: every sample belongs to a family declared by # HELP and # TYPE', () => {
    const text = render();
    expect(text.endsWith('\n')).toBe(true);
    const types = new Map<string, string>();
    for (const line of text.trimEnd().split('\n')) {
      const typeLine = /^# TYPE (\S+) (counter|gauge|histogram)$/.exec(line);
      if (typeLine) {
        types.set(typeLine[1]!, typeLine[2]!);
        continue;
      }
      if (line.startsWith('# HELP ')) continue;
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\{((?:[a-zA-Z_][a-zA-Z0-9_]*="[^"]*",?)*)\} (\S+)$/.exec(line);
      expect(m, line).not.toBeNull();
      const name = m![1]!;
      const family = types.has(name) ? name : name.replace(/_(bucket|count|sum)$/, '');
      expect(types.has(family), `family of ${name}`).toBe(true);
      expect(Number.isNaN(Number(m![3]!.replace('+Inf', 'Infinity')))).toBe(false);
      const keys = [...m![2]!.matchAll(/([a-zA-Z_]+)="/g)].map((k) => k[1]!);
      expect(keys).toEqual([...keys].sort());
    }
  });

  it('uses the newest vLLM names and labels', () => {
    const text = render();
    expect(text).toContain('vllm:num_requests_running{engine="0",model_name="Qwen3.6-27B-FP8"} 3.0');
    expect(text).toContain('vllm:num_requests_waiting{engine="0",model_name="Qwen3.6-27B-FP8"} 1.0');
    expect(text).toContain('vllm:kv_cache_usage_perc{engine="0",model_name="Qwen3.6-27B-FP8"} 0.25');
    expect(text).toContain('# TYPE vllm:prompt_tokens_total counter');
    expect(text).toContain('vllm:prompt_tokens_total{engine="0",model_name="Qwen3.6-27B-FP8"} 120.0');
    expect(text).toContain('vllm:generation_tokens_created{engine="0",model_name="Qwen3.6-27B-FP8"} 1700000000.0');
    expect(text).toContain('vllm:request_success_total{engine="0",finished_reason="abort",model_name="Qwen3.6-27B-FP8"} 0.0');
    expect(text).toContain('vllm:engine_sleep_state{engine="0",model_name="Qwen3.6-27B-FP8",sleep_state="weights_offloaded"} 1.0');
    expect(text).toContain('vllm:engine_sleep_state{engine="0",model_name="Qwen3.6-27B-FP8",sleep_state="awake"} 0.0');
    expect(text).toMatch(/vllm:cache_config_info\{block_size="16",.*engine="0",.*num_gpu_blocks="9063".*\} 1\.0/);
    expect(text).not.toMatch(/vllm:cache_config_info\{[^}]*model_name/);
    expect(text).not.toContain('gpu_cache_usage_perc');
  });

  it('writes cumulative histogram buckets with +Inf, _count and _sum', () => {
    const text = render();
    const buckets = text.split('\n').filter((l) => l.startsWith('vllm:time_to_first_token_seconds_bucket'));
    expect(buckets).toHaveLength(TTFT_BUCKETS.length + 1);
    expect(buckets[0]).toContain('le="0.001"');
    expect(buckets.find((l) => l.includes('le="0.25"'))).toMatch(/ 1\.0$/);
    expect(buckets.find((l) => l.includes('le="5.0"'))).toMatch(/ 2\.0$/);
    expect(buckets.at(-1)).toMatch(/le="\+Inf".* 2\.0$/);
    expect(text).toContain('vllm:time_to_first_token_seconds_count{engine="0",model_name="Qwen3.6-27B-FP8"} 2.0');
    expect(text).toMatch(/vllm:time_to_first_token_seconds_sum\{[^}]*\} 4\.4(4|39)/);
    for (const h of ['inter_token_latency_seconds', 'e2e_request_latency_seconds', 'request_queue_time_seconds']) {
      expect(text).toContain(`# TYPE vllm:${h} histogram`);
    }
  });

  it('prints numbers like Python floats', () => {
    expect(pyFloat(1)).toBe('1.0');
    expect(pyFloat(0.25)).toBe('0.25');
    expect(pyFloat(Infinity)).toBe('+Inf');
  });
});
