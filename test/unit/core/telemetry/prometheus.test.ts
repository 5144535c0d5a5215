import { describe, expect, it } from 'vitest';
import { parsePrometheusText, parseSampleValue } from '../../../../src-main/core/telemetry/index.js';

describe('parsePrometheusText', () => {
  it('reads HELP, TYPE, labels, timestamps and groups samples into families', () => {
    const text = [
      '# HELP vllm:num_requests_running Number of requests in model execution batches.',
      '# TYPE vllm:num_requests_running gauge',
      'vllm:num_requests_running{engine="0",model_name="m"} 3.0',
      '',
      '# HELP vllm:prompt_tokens_total Number of prefill tokens processed.',
      '# TYPE vllm:prompt_tokens_total counter',
      'vllm:prompt_tokens_total{engine="0",model_name="m"} 1234.0 1700000000000',
      'vllm:prompt_tokens_created{engine="0",model_name="m"} 1.7e9',
      '# a plain comment',
      '# TYPE vllm:time_to_first_token_seconds histogram',
      'vllm:time_to_first_token_seconds_bucket{le="0.1"} 2',
      'vllm:time_to_first_token_seconds_bucket{le="+Inf"} 5',
      'vllm:time_to_first_token_seconds_sum 1.5',
      'vllm:time_to_first_token_seconds_count 5',
    ].join('\n');
    const { families, errors, truncated } = parsePrometheusText(text);
    expect(errors).toBe(0);
    expect(truncated).toBe(false);
    expect(families.map((f) => [f.name, f.type, f.samples.length])).toEqual([
      ['vllm:num_requests_running', 'gauge', 1],
      ['vllm:prompt_tokens_total', 'counter', 2],
      ['vllm:time_to_first_token_seconds', 'histogram', 4],
    ]);
    const prompt = families[1]!;
    expect(prompt.help).toBe('Number of prefill tokens processed.');
    expect(prompt.samples[0]).toEqual({ name: 'vllm:prompt_tokens_total', labels: { engine: '0', model_name: 'm' }, value: 1234, timestampMs: 1700000000000 });
    expect(prompt.samples[1]!.name).toBe('vllm:prompt_tokens_created');
  });

  it('unescapes quotes, backslashes and newlines in label values and HELP', () => {
    const text = [
      '# HELP x a \\\\ b\\nc',
      'x{path="C:\\\\dir",msg="say \\"hi\\"\\nbye",} 1',
    ].join('\n');
    const { families, errors } = parsePrometheusText(text);
    expect(errors).toBe(0);
    expect(families[0]!.help).toBe('a \\ b\nc');
    expect(families[0]!.samples[0]!.labels).toEqual({ path: 'C:\\dir', msg: 'say "hi"\nbye' });
  });

  it('reads NaN, +Inf, -Inf and exponents', () => {
    const { families, errors } = parsePrometheusText('a NaN\nb +Inf\nc -Inf\nd 1.5e3\ne -0.25');
    expect(errors).toBe(0);
    const v = families.map((f) => f.samples[0]!.value);
    expect(Number.isNaN(v[0])).toBe(true);
    expect(v.slice(1)).toEqual([Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1500, -0.25]);
    expect(parseSampleValue('12abc')).toBeNull();
  });

  it('counts malformed lines and keeps the rest', () => {
    const text = [
      'good 1',
      'bad{unterminated="x 1',
      'novalue',
      'x{a="1"} notanumber',
      '1leadingdigit 3',
      'y 2 notatimestamp',
      '# TYPE z sparkline',
      'also_good{a="b"} 2',
    ].join('\n');
    const { families, errors } = parsePrometheusText(text);
    expect(errors).toBe(6);
    expect(families.filter((f) => f.samples.length > 0).map((f) => f.name)).toEqual(['good', 'also_good']);
  });

  it('caps the input size: partial result plus one error', () => {
    const line = 'metric_x{i="0"} 1\n';
    const text = line.repeat(1000);
    const { families, errors, truncated } = parsePrometheusText(text, { maxBytes: line.length * 10 + 5 });
    expect(truncated).toBe(true);
    expect(errors).toBe(1);
    expect(families[0]!.samples).toHaveLength(10);
  });

  it('handles CRLF line endings and blank input', () => {
    expect(parsePrometheusText('').families).toEqual([]);
    const { families, errors } = parsePrometheusText('# TYPE a gauge\r\na 1\r\n');
    expect(errors).toBe(0);
    expect(families[0]!.samples[0]!.value).toBe(1);
  });
});
