import { describe, expect, it } from 'vitest';
import { parseConfig, type ConfigIssue } from '../../../../src-main/core/config/index.js';
import { configIssues } from './fixtures.js';

// Alert rule settings (issue #30, "Bad input"): fleet-wide, per host and per
// model; thresholds that make no sense are refused by config check naming
// the file, the line and the field.

const opts = { file: 'config.yaml', home: '/home/me' };
const HOST = ['hosts:', '  - label: a', '    ssh: { host: 10.0.0.1, user: ops, agent: true }', '    services:', '      - { id: q, kind: vllm, remotePort: 8000, model: Qwen3.6-27B-FP8, aliases: [qwen] }'];
const yaml = (...alerts: string[]) => [...HOST, 'alerts:', ...alerts.map((l) => `  ${l}`)].join('\n');

const issues = (text: string): ConfigIssue[] => configIssues(text, opts);

describe('alerts config: rules', () => {
  it('takes fleet-wide, per-host and per-model rule settings', () => {
    const text = [
      ...HOST,
      '    alerts:',
      '      rules:',
      '        gpu_hot: { warnC: 90 }',
      '        tunnel_flapping: { enabled: false }',
      'alerts:',
      '  rules:',
      '    error_rate: { thresholdPct: 5, minAnswers: 20, sustainMs: 60000 }',
      '    ttft_slow: { targetsMs: { interactive: 10000, batch: 120000 } }',
      '  models:',
      '    qwen3.6-27b-fp8:',
      '      rules:',
      '        ttft_slow: { targetsMs: { interactive: 20000 } }',
    ].join('\n');
    const c = parseConfig(text, opts);
    expect(c.alerts?.rules?.error_rate).toEqual({ thresholdPct: 5, minAnswers: 20, sustainMs: 60_000 });
    expect(c.alerts?.models?.['qwen3.6-27b-fp8']?.rules?.ttft_slow).toEqual({ targetsMs: { interactive: 20_000 } });
    expect(c.hosts[0]!.alerts?.rules).toEqual({ gpu_hot: { warnC: 90 }, tunnel_flapping: { enabled: false } });
  });

  it('refuses a negative threshold, naming file, line and field', () => {
    const found = issues(yaml('rules:', '  error_rate:', '    thresholdPct: -5'));
    expect(found).toEqual([expect.objectContaining({ path: 'alerts.rules.error_rate.thresholdPct', line: 9, message: expect.stringMatching(/more than 0/) })]);
  });

  it('refuses a p95 target of 0', () => {
    const found = issues(yaml('rules:', '  ttft_slow:', '    targetsMs: { interactive: 0 }'));
    expect(found).toEqual([expect.objectContaining({ path: 'alerts.rules.ttft_slow.targetsMs.interactive', line: 9, message: 'must be more than 0' })]);
  });

  it('refuses a sustain longer than the recent series kept in memory (1 h)', () => {
    const found = issues(yaml('rules:', '  gpu_hot:', '    sustainMs: 7200000'));
    expect(found).toEqual([expect.objectContaining({ path: 'alerts.rules.gpu_hot.sustainMs', line: 9, message: expect.stringMatching(/at most 3600000 \(the 1 h of recent series kept in memory\)/) })]);
  });

  it('refuses an unknown model name in alerts.models (aliases are not model names)', () => {
    const found = issues(yaml('models:', '  Llama-9000:', '    rules: { kv_cache: { thresholdPct: 90 } }', '  qwen:', '    rules: {}'));
    expect(found.map((i) => [i.path, i.line])).toEqual([
      ['alerts.models.Llama-9000', 9], // the model's block
      ['alerts.models.qwen', 11],
    ]);
    expect(found[0]!.message).toBe('no service serves a model called "Llama-9000" (the model of a hosts[].services entry)');
  });

  it('refuses an unknown rule name, fleet-wide and per host, and a host-level rule under a model', () => {
    expect(issues(yaml('rules:', '  gpu_too_warm: { warnC: 80 }')).map((i) => [i.path, i.line])).toEqual([['alerts.rules.gpu_too_warm', 8]]);
    const perModel = issues(yaml('models:', '  Qwen3.6-27B-FP8:', '    rules: { gpu_hot: { warnC: 80 } }'));
    expect(perModel).toEqual([expect.objectContaining({ path: expect.stringMatching(/^alerts\.models\.Qwen3\.6-27B-FP8\.rules/), line: 9 })]);
    expect(perModel[0]!.path + perModel[0]!.message).toMatch(/gpu_hot/);
  });
});
