import { describe, expect, it } from 'vitest';
import { BenchScenarioSchema, type BenchScenario } from '../../../src-preload/contract/index.js';
import { DEFAULT_FORM, formFromScenario, scenarioFromForm, windowOf } from '../../../src-renderer/src/features/bench/scenario-form.js';

const parse = (x: unknown): BenchScenario => BenchScenarioSchema.parse(x);

describe('the Benchmarks form ↔ scenario', () => {
  it('builds a proxy scenario with synthetic prompts from the default form', () => {
    const out = scenarioFromForm(DEFAULT_FORM, null);
    expect('scenario' in out && parse(out.scenario)).toMatchObject({
      name: 'sweep',
      target: { kind: 'proxy', model: 'qwen', class: 'batch' },
      prompts: { kind: 'synthetic', inputTokens: 64 },
      levels: [1, 2, 4, 8],
      perLevel: { kind: 'requests', count: 8 },
    });
  });

  it('sends a chosen JSONL file inline, and refuses JSONL mode without a file', () => {
    const out = scenarioFromForm({ ...DEFAULT_FORM, promptMode: 'jsonl', jsonl: { text: '[{"role":"user","content":"a"}]\n', filename: 'c.jsonl' } }, null);
    expect('scenario' in out && out.scenario.prompts).toEqual({ kind: 'inline', text: '[{"role":"user","content":"a"}]\n', filename: 'c.jsonl' });
    expect(scenarioFromForm({ ...DEFAULT_FORM, promptMode: 'jsonl', jsonl: null }, null)).toEqual({ error: 'prompts: choose a JSONL file' });
  });

  it('names a bad schema or bad levels instead of sending them', () => {
    expect(scenarioFromForm({ ...DEFAULT_FORM, schema: '{nope' }, null)).toMatchObject({ error: expect.stringContaining('schema is not JSON') });
    expect(scenarioFromForm({ ...DEFAULT_FORM, schema: '[1]' }, null)).toMatchObject({ error: expect.stringContaining('JSON object') });
    expect(scenarioFromForm({ ...DEFAULT_FORM, levels: '1,x' }, null)).toMatchObject({ error: expect.stringContaining('levels') });
  });

  it('round-trips a loaded scenario and keeps what the form does not show', () => {
    const base = parse({
      name: 'tunnel sweep',
      target: { kind: 'tunnel', host: 'l20', serviceId: 'qwen', model: 'Q' },
      prompts: { kind: 'jsonl', file: '/srv/chats.jsonl' },
      maxTokens: 128,
      thinking: true,
      mode: 'closed',
      levels: [1, 4],
      perLevel: { kind: 'duration', seconds: 30 },
      warmupRequests: 3,
      stability: { requests: 50, concurrency: 4 },
      responseFormat: { schema: { type: 'object' }, expected: { '/status': 'ok' } },
      extraBody: { temperature: 0 },
    });
    const form = formFromScenario(base);
    expect(form).toMatchObject({ name: 'tunnel sweep', model: 'Q', levels: '1,4', maxTokens: 128, thinking: true, promptMode: 'kept', schema: '{"type":"object"}' });
    const out = scenarioFromForm({ ...form, maxTokens: 256 }, base);
    expect('scenario' in out).toBe(true);
    if (!('scenario' in out)) return;
    expect(parse(out.scenario)).toEqual({ ...base, maxTokens: 256 });
  });

  it('loads an inline scenario back into JSONL mode', () => {
    const s = parse({ name: 'n', target: { kind: 'proxy', model: 'm', class: 'system' }, prompts: { kind: 'inline', text: 'x', filename: 'f.jsonl' }, maxTokens: 8, levels: [2], perLevel: { kind: 'requests', count: 3 } });
    expect(formFromScenario(s)).toMatchObject({ cls: 'system', count: 3, promptMode: 'jsonl', jsonl: { text: 'x', filename: 'f.jsonl' } });
  });

  it('windows end now', () => {
    expect(windowOf(15, 1_000_000_000)).toEqual({ fromMs: 1_000_000_000 - 900_000, toMs: 1_000_000_000 });
  });
});
