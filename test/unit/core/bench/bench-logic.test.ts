import { describe, expect, it } from 'vitest';
import { BenchScenarioSchema, type BenchRun } from '../../../../src-preload/contract/index.js';
import { compareRuns, compileSchema, importGuidellm, levelResult, markdownTable, nearestRank, parseJsonl, type RecordedRequest } from '../../../../src-main/core/bench/index.js';

describe('nearest-rank percentiles', () => {
  // Recorded TTFTs (ms); by hand: sorted = 120 130 136 150 192 226 337 605 4326 4367.
  const samples = [136, 4326, 192, 226, 605, 4367, 120, 337, 150, 130];
  it('equals the hand-computed ranks', () => {
    expect(nearestRank(samples, 50)).toBe(192); // rank ⌈0.5·10⌉ = 5
    expect(nearestRank(samples, 95)).toBe(4367); // rank ⌈9.5⌉ = 10
    expect(nearestRank(samples, 90)).toBe(4326); // rank 9
    expect(nearestRank([5], 95)).toBe(5);
    expect(nearestRank([], 50)).toBeNull();
    expect(nearestRank([1, 2, 3, 4], 50)).toBe(2); // no interpolation
  });
});

describe('structured-output checks', () => {
  const s = compileSchema({ type: 'object', properties: { status: { enum: ['ok', 'bad'] } }, required: ['status'] });
  it('parses, then validates, then compares expected values', () => {
    expect(s.check('{"status":"ok"}')).toEqual({ jsonOk: true, schemaOk: true, error: null });
    expect(s.check('{"status":"maybe"}')).toMatchObject({ jsonOk: true, schemaOk: false });
    expect(s.check('{"status":"ok"')).toMatchObject({ jsonOk: false, schemaOk: false });
    expect(s.check('Sure! Here is the JSON')).toMatchObject({ jsonOk: false });
    expect(s.check('{"status":"ok"}', { '/status': 'bad' })).toMatchObject({ jsonOk: true, schemaOk: false, error: expect.stringContaining('/status') });
  });
  it('refuses a schema that is not JSON Schema', () => {
    expect(() => compileSchema({ type: 'objekt' })).toThrow(expect.objectContaining({ code: 'BENCH_INVALID_JSON_SCHEMA' }));
  });
});

describe('JSONL prompts', () => {
  it('reads arrays and {messages, expected}, and names a broken line', () => {
    const ok = parseJsonl('[{"role":"user","content":"a"}]\n\n{"messages":[{"role":"user","content":"b"}],"expected":{"/x":1}}\n', 'p.jsonl');
    expect(ok).toHaveLength(2);
    expect(ok[1]!.expected).toEqual({ '/x': 1 });
    expect(() => parseJsonl('[{"role":"user","content":"a"}]\n{"role":"user"}\n', 'p.jsonl')).toThrow(/p\.jsonl:2/);
    expect(() => parseJsonl('\n\n', 'e.jsonl')).toThrow(/empty/);
  });
});

describe('scenario validation', () => {
  const base = { name: 'x', target: { kind: 'proxy', model: 'qwen', class: 'batch' }, prompts: { kind: 'synthetic', inputTokens: 8 }, maxTokens: 8, perLevel: { kind: 'requests', count: 1 } };
  it('refuses zero, negative and fractional closed-loop levels, and an interactive class', () => {
    expect(BenchScenarioSchema.safeParse({ ...base, levels: [1, 2] }).success).toBe(true);
    expect(BenchScenarioSchema.safeParse({ ...base, levels: [0] }).success).toBe(false);
    expect(BenchScenarioSchema.safeParse({ ...base, levels: [-1] }).success).toBe(false);
    expect(BenchScenarioSchema.safeParse({ ...base, levels: [1.5] }).success).toBe(false);
    expect(BenchScenarioSchema.safeParse({ ...base, levels: [1.5], mode: 'open' }).success).toBe(true);
    expect(BenchScenarioSchema.safeParse({ ...base, levels: [1], target: { kind: 'proxy', model: 'q', class: 'interactive' } }).success).toBe(false);
  });
});

const req = (over: Partial<RecordedRequest>): RecordedRequest => ({
  seq: 0, phase: 'level', level: 2, startMs: 0, queueMs: 0, ttftMs: 100, totalMs: 1000, itlMs: [10, 20], promptTokens: 5, completionTokens: 50,
  finishReason: 'stop', status: 200, errorCode: null, cancelled: false, jsonOk: null, schemaOk: null, schemaError: null, ...over,
});

describe('level figures', () => {
  it('aggregate tok/s is completion tokens over wall time; errors by code; truncations apart', () => {
    const l = levelResult('level', 2, [req({}), req({ ttftMs: 300, totalMs: 2000, finishReason: 'length' }), req({ errorCode: 'HTTP_503', completionTokens: null }), req({ cancelled: true })], 2000, true, false);
    expect(l).toMatchObject({ requests: 4, completed: 2, failed: 1, cancelled: 1, outputTokPerS: 50, requestsPerS: 1, errorsByCode: { HTTP_503: 1 }, truncated: 1, ttftP50Ms: 100, ttftP95Ms: 300, partial: true, jsonParsed: null });
  });
  it('a level whose answers never said their token counts has unknown tokens and tok/s, never 0', () => {
    const l = levelResult('level', 1, [req({ completionTokens: null, promptTokens: null })], 1000, false, false);
    expect(l).toMatchObject({ completed: 1, completionTokens: null, promptTokens: null, outputTokPerS: null, requestsPerS: 1 });
  });
});

const run = (id: string, tokS: number): BenchRun => ({
  id, name: id, state: 'completed', source: 'console', scenario: null, upstream: 'l20-poc/qwen', host: 'l20-poc', model: 'Q', slots: 4, startedAt: 0, finishedAt: 1,
  levels: [levelResult('level', 8, [req({})], 1000, false, false)].map((l) => ({ ...l, outputTokPerS: tokS })),
  peaks: { vramMiB: 38751, gpuUtilPct: 100, powerW: 262, kvCachePct: null, samples: 3 }, baseline: false, error: null, note: null,
});

describe('comparison and export', () => {
  it('deltas are b − a with a percentage of a', () => {
    const row = compareRuns(run('a', 72), run('b', 36)).find((r) => r.metric === 'outputTokPerS')!;
    expect(row).toMatchObject({ a: 72, b: 36, delta: -36, deltaPct: -50 });
  });
  it('Markdown is shaped like the field-notes table', () => {
    const md = markdownTable(run('a', 73.1));
    expect(md).toContain('| workload | requests | TTFT p50/p95 | latency p50/p95 | output tok/s |');
    expect(md).toContain('| concurrency 8, 4 slots | 1 | 0.100 / 0.100 s | 1.000 / 1.000 s | 73.10 |');
    expect(md).toContain('Peak 38,751 MiB VRAM, 100% utilisation, 262 W');
  });
  it('imports a GuideLLM report: concurrent benchmarks become levels', () => {
    const d = (p50: number, p95: number) => ({ successful: { median: p50, mean: p50, percentiles: { p50, p95 } } });
    const text = JSON.stringify({
      benchmarks: [
        { args: { strategy: { type_: 'concurrent', streams: 4 } }, duration: 10, request_totals: { successful: 12, errored: 1 },
          metrics: { time_to_first_token_ms: d(192, 337), request_latency: d(4.24, 4.429), inter_token_latency_ms: d(57, 60), output_tokens_per_second: d(71.5, 71.5), requests_per_second: d(1.2, 1.2) } },
      ],
    });
    const out = importGuidellm(text);
    expect(out.levels[0]).toMatchObject({ level: 4, requests: 13, failed: 1, ttftP50Ms: 192, ttftP95Ms: 337, latencyP95Ms: 4429, outputTokPerS: 71.5 });
    expect(() => importGuidellm('{"x":1}')).toThrow(expect.objectContaining({ code: 'BENCH_IMPORT_INVALID' }));
  });
});

describe('inline JSONL prompts (the Benchmarks view sends a chosen file as text)', () => {
  it('loads inline text like a file and names the broken line', async () => {
    const { loadPrompts } = await import('../../../../src-main/core/bench/index.js');
    const ok = await loadPrompts({ kind: 'inline', text: '[{"role":"user","content":"a"}]\n{"messages":[{"role":"user","content":"b"}]}\n', filename: 'chats.jsonl' }, 8);
    expect(ok.map((p) => p.messages[0]!.content)).toEqual(['a', 'b']);
    await expect(loadPrompts({ kind: 'inline', text: '[{"role":"user","content":"a"}]\n{not json\n', filename: 'chats.jsonl' }, 8)).rejects.toMatchObject({
      code: 'BENCH_PROMPT_FILE_INVALID',
      message: expect.stringContaining('chats.jsonl:2'),
    });
    await expect(loadPrompts({ kind: 'inline', text: '\n{"x":1}\n' }, 8)).rejects.toThrow(/inline JSONL:2/);
  });
  it('is part of the scenario schema (and an empty inline text is refused)', () => {
    const base = { name: 'n', target: { kind: 'proxy', model: 'm', class: 'batch' }, maxTokens: 8, levels: [1], perLevel: { kind: 'requests', count: 1 } };
    expect(BenchScenarioSchema.safeParse({ ...base, prompts: { kind: 'inline', text: '[]', filename: 'a.jsonl' } }).success).toBe(true);
    expect(BenchScenarioSchema.safeParse({ ...base, prompts: { kind: 'inline', text: '' } }).success).toBe(false);
  });
});
