import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parsePrometheusText } from '../../../../src-main/core/telemetry/index.js';
import { VLLM_DUMPS, vllmDump, type VllmDumpName } from '../../../fixtures/vllm/dumps.js';

// The dumps are constructed (test/fixtures/vllm/SOURCE.txt): this pins the
// wire shape each claims — which names each version emits, the exposition
// rules of prometheus_client — so a reader test on them means what it says.

const FIXTURES = fileURLToPath(new URL('../../../fixtures/vllm/', import.meta.url));

/** Which vLLM families appear in which dump. */
const NAMES: Record<string, VllmDumpName[]> = {
  'vllm:gpu_cache_usage_perc': ['vllm-0.8.x-v0-engine.txt', 'vllm-0.8.x.txt', 'vllm-0.9.x.txt', 'vllm-0.10.x.txt'],
  'vllm:kv_cache_usage_perc': ['vllm-0.9.x.txt', 'vllm-0.10.x.txt', 'vllm-0.11.x.txt', 'vllm-0.12.x.txt', 'vllm-0.12.x-dp2-t0.txt', 'vllm-0.12.x-dp2.txt', 'vllm-0.12.x-spec-decode.txt', 'vllm-newest.txt'],
  'vllm:gpu_prefix_cache_queries_total': ['vllm-0.8.x.txt', 'vllm-0.9.x.txt', 'vllm-0.10.x.txt'],
  'vllm:prefix_cache_queries_total': ['vllm-0.9.x.txt', 'vllm-0.10.x.txt', 'vllm-0.11.x.txt', 'vllm-0.12.x.txt', 'vllm-0.12.x-dp2-t0.txt', 'vllm-0.12.x-dp2.txt', 'vllm-0.12.x-spec-decode.txt', 'vllm-newest.txt'],
  'vllm:time_per_output_token_seconds': ['vllm-0.8.x-v0-engine.txt', 'vllm-0.8.x.txt', 'vllm-0.9.x.txt', 'vllm-0.10.x.txt'],
  'vllm:inter_token_latency_seconds': ['vllm-0.11.x.txt', 'vllm-0.12.x.txt', 'vllm-0.12.x-dp2-t0.txt', 'vllm-0.12.x-dp2.txt', 'vllm-0.12.x-spec-decode.txt', 'vllm-newest.txt'],
  'vllm:external_prefix_cache_queries_total': ['vllm-0.11.x.txt', 'vllm-0.12.x.txt', 'vllm-0.12.x-dp2-t0.txt', 'vllm-0.12.x-dp2.txt', 'vllm-0.12.x-spec-decode.txt', 'vllm-newest.txt'],
  'vllm:engine_sleep_state': ['vllm-0.12.x.txt', 'vllm-0.12.x-dp2-t0.txt', 'vllm-0.12.x-dp2.txt', 'vllm-0.12.x-spec-decode.txt', 'vllm-newest.txt'],
  'vllm:request_prefill_kv_computed_tokens': ['vllm-0.12.x.txt', 'vllm-0.12.x-dp2-t0.txt', 'vllm-0.12.x-dp2.txt', 'vllm-0.12.x-spec-decode.txt', 'vllm-newest.txt'],
  'vllm:num_requests_waiting_by_reason': ['vllm-newest.txt'],
  'vllm:prompt_tokens_cached_total': ['vllm-newest.txt'],
  'vllm:num_requests_swapped': ['vllm-0.8.x-v0-engine.txt'],
  'vllm:gpu_prefix_cache_hit_rate': ['vllm-0.8.x-v0-engine.txt'],
  'vllm:spec_decode_num_drafts_total': ['vllm-0.12.x-spec-decode.txt'],
};

/** Dumps without `_created` gauges: V0 calls disable_created_metrics(); multiprocess mode has none. */
const NO_CREATED: VllmDumpName[] = ['vllm-0.8.x-v0-engine.txt', 'vllm-newest.txt'];

describe('constructed vLLM dumps', () => {
  it('construct.mjs writes exactly the committed files', () => {
    const out = mkdtempSync(join(tmpdir(), 'vllm-dumps-'));
    try {
      execFileSync(process.execPath, [join(FIXTURES, 'construct.mjs'), '--out', out]);
      for (const name of VLLM_DUMPS) expect(readFileSync(join(out, name), 'utf8'), name).toBe(vllmDump(name));
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  for (const name of VLLM_DUMPS) {
    it(`${name}: prometheus_client's exposition rules`, () => {
      const text = vllmDump(name);
      expect(text.endsWith('\n')).toBe(true);
      const parsed = parsePrometheusText(text);
      expect(parsed.errors).toBe(0);
      const declared = new Set<string>();
      for (const line of text.split('\n')) {
        const t = /^# TYPE (\S+) /.exec(line);
        if (t) declared.add(t[1]!);
        if (line === '' || line.startsWith('#')) continue;
        // Labels sorted by name, as generate_latest writes them.
        const labels = [...(/\{(.*)\}/.exec(line)?.[1] ?? '').matchAll(/([a-zA-Z_]+)="/g)].map((m) => m[1]!);
        expect(labels, line).toEqual([...labels].sort());
        // Every sample under a TYPE of its family written before it.
        const sample = /^[^{ ]+/.exec(line)![0];
        const family = [sample, sample.replace(/_(bucket|count|sum)$/, '')].find((n) => declared.has(n));
        expect(family, line).toBeDefined();
      }
      const vllm = parsed.families.filter((f) => f.name.startsWith('vllm:'));
      const names = new Set(vllm.map((f) => f.name));
      for (const [metric, inDumps] of Object.entries(NAMES)) expect(names.has(metric), `${metric} in ${name}`).toBe(inDumps.includes(name));
      expect(vllm.some((f) => f.name.endsWith('_created'))).toBe(!NO_CREATED.includes(name));
      expect(parsed.families.some((f) => f.name.startsWith('process_'))).toBe(name !== 'vllm-newest.txt');
      // The engine label: none in V0; on every series in V1, except 0.8's cache_config_info.
      for (const f of vllm) {
        const labelled = f.samples.every((s) => s.labels['engine'] !== undefined);
        const expected = name !== 'vllm-0.8.x-v0-engine.txt' && !(name === 'vllm-0.8.x.txt' && f.name === 'vllm:cache_config_info');
        expect(labelled, `${f.name} in ${name}`).toBe(expected);
        expect(
          f.samples.every((s) => (f.name === 'vllm:cache_config_info') === (s.labels['model_name'] === undefined)),
          `${f.name} model_name`,
        ).toBe(true);
      }
    });
  }

  it('HELP texts carry the version: 0.8 prefix cache in blocks, 0.9/0.10 deprecations, multiprocess mode', () => {
    const help = (name: VllmDumpName, metric: string) => parsePrometheusText(vllmDump(name)).families.find((f) => f.name === metric)?.help;
    expect(help('vllm-0.8.x.txt', 'vllm:gpu_prefix_cache_queries_total')).toBe('GPU prefix cache queries, in terms of number of queried blocks.');
    expect(help('vllm-0.10.x.txt', 'vllm:gpu_cache_usage_perc')).toContain('DEPRECATED: Use vllm:kv_cache_usage_perc instead.');
    expect(help('vllm-0.8.x-v0-engine.txt', 'vllm:num_requests_running')).toBe('Number of requests currently running on GPU.');
    expect(help('vllm-0.12.x.txt', 'vllm:num_requests_running')).toBe('Number of requests in model execution batches.');
    expect(help('vllm-newest.txt', 'vllm:num_requests_running')).toBe('Multiprocess metric');
  });
});
