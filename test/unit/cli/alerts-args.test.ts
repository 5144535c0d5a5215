import { describe, expect, it } from 'vitest';
import { parseAlertsArgs, parseSilenceFor } from '../../../src-main/cli/extra/alerts-args.js';
import { UsageError } from '../../../src-main/cli/output.js';

const NOW = Date.UTC(2026, 11, 5, 12, 0, 0);
const parse = (args: string[]) => parseAlertsArgs(args, NOW);
const usage = (args: string[]): string => {
  try {
    parse(args);
  } catch (err) {
    if (err instanceof UsageError) return err.message;
    throw err;
  }
  throw new Error('no usage error');
};

describe('gpu-console alerts: arguments', () => {
  it('list is the default; ack takes one ID and a note', () => {
    expect(parse([])).toMatchObject({ verb: 'list', json: false });
    expect(parse(['list', '--json'])).toMatchObject({ verb: 'list', json: true });
    expect(parse(['ack', 'gpu_fault:tri-gpu#2', '--note', 'RMA opened'])).toMatchObject({ verb: 'ack', id: 'gpu_fault:tri-gpu#2', note: 'RMA opened' });
    expect(usage(['ack'])).toMatch(/takes one alert ID/);
    expect(usage(['ack', 'a', '--reason', 'x'])).toMatch(/takes no --reason/);
  });

  it('silence: rule, scope, duration and reason', () => {
    expect(parse(['silence', 'throughput', '--host', 'gpu-a', '--service', 'qwen', '--for', '2h', '--reason', 'maintenance window'])).toEqual({
      verb: 'silence',
      rule: 'throughput',
      host: 'gpu-a',
      serviceId: 'qwen',
      model: undefined,
      forMs: 7_200_000,
      reason: 'maintenance window',
      dataDir: undefined,
      json: false,
    });
    expect(parse(['silence', 'all', '--model', 'qwen', '--for', '1h30m', '--reason', 'reload'])).toMatchObject({ rule: 'all', model: 'qwen', forMs: 5_400_000 });
  });

  it('refuses a bad duration, an unknown rule and a missing reason by name', () => {
    expect(usage(['silence', 'throughput', '--for', '10y', '--reason', 'why not'])).toMatch(/--for must be a duration .* got "10y"/);
    expect(usage(['silence', 'throughput', '--for', '-5m', '--reason', 'why not'])).toMatch(/--for must be a duration .* got "-5m"/);
    expect(usage(['silence', 'throughput', '--for', '31d', '--reason', 'why not'])).toMatch(/at most 30d/);
    expect(usage(['silence', 'throughput', '--for', '30s', '--reason', 'why not'])).toMatch(/at least 1m/);
    expect(usage(['silence', 'throughput', '--for', '0m', '--reason', 'why not'])).toMatch(/at least 1m/);
    expect(usage(['silence', 'nope', '--for', '2h', '--reason', 'why not'])).toMatch(/unknown rule "nope"; one of: all, throughput/);
    expect(usage(['silence', 'throughput', '--for', '2h'])).toMatch(/needs --reason/);
    expect(usage(['silence', 'throughput', '--reason', 'why not'])).toMatch(/needs --for/);
    expect(usage(['silence', '--for', '2h', '--reason', 'why not'])).toMatch(/takes one RULE/);
  });

  it('history: --since back from now, --host, --limit bounded', () => {
    expect(parse(['history'])).toMatchObject({ verb: 'history', fromMs: undefined, limit: undefined });
    expect(parse(['history', '--since', '4h', '--host', 'gpu-a', '--limit', '50'])).toMatchObject({ fromMs: NOW - 4 * 3_600_000, host: 'gpu-a', limit: 50 });
    expect(usage(['history', '--since', '-4h'])).toMatch(/--since must be/);
    expect(usage(['history', '--limit', '0'])).toMatch(/--limit must be/);
    expect(usage(['unsilence'])).toMatch(/takes one silence ID/);
    expect(usage(['mute'])).toMatch(/unknown alerts command "mute"/);
  });

  it('parseSilenceFor sums its parts', () => {
    expect(parseSilenceFor('1d2h')).toBe(26 * 3_600_000);
  });
});
