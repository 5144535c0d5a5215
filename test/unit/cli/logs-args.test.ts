import { describe, expect, it } from 'vitest';
import { parseLogsArgs, parseSince } from '../../../src-main/cli/extra/logs-args.js';
import { UsageError } from '../../../src-main/cli/output.js';

// `gpu-console logs`'s flags: what reaches logs.tail / logs.follow, and every bad
// flag a usage error (exit 2) that names it.

const NOW = Date.parse('2026-12-05T02:30:00.000Z');

function usageError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error('no usage error');
}

describe('parseSince', () => {
  it('counts a duration back from now, units combined as kubectl takes them', () => {
    expect(parseSince('10m', NOW)).toBe(NOW - 10 * 60_000);
    expect(parseSince('2h', NOW)).toBe(NOW - 2 * 3_600_000);
    expect(parseSince('45s', NOW)).toBe(NOW - 45_000);
    expect(parseSince('7d', NOW)).toBe(NOW - 7 * 86_400_000);
    expect(parseSince('1h30m', NOW)).toBe(NOW - 90 * 60_000);
  });

  it('takes an ISO time with its zone, as that instant', () => {
    expect(parseSince('2026-12-05T01:30:00Z', NOW)).toBe(Date.parse('2026-12-05T01:30:00Z'));
    expect(parseSince('2026-12-05T02:30:00.250+01:00', NOW)).toBe(Date.parse('2026-12-05T01:30:00.250Z'));
    expect(parseSince('2026-12-05 03:00+0100', NOW)).toBe(Date.parse('2026-12-05T02:00:00Z'));
  });

  it('refuses what it cannot read without guessing, naming --since', () => {
    // No zone: this machine's zone may not be the host's; a bare number has no unit.
    for (const bad of ['2026-12-05T01:30:00', '10', '10 m', '-5m', 'yesterday', '2026-12-05', '0m', '']) {
      expect(usageError(() => parseSince(bad, NOW))).toMatch(/--since/);
    }
    expect(usageError(() => parseSince('2026-13-45T01:00:00Z', NOW))).toMatch(/not a real date/);
    expect(usageError(() => parseSince('2026-12-06T00:00:00Z', NOW))).toMatch(/in the future/);
  });
});

describe('parseLogsArgs', () => {
  it('reads HOST/SERVICE and the console defaults', () => {
    expect(parseLogsArgs(['gpu-a/vllm'], NOW)).toEqual({
      label: 'gpu-a',
      serviceId: 'vllm',
      dataDir: undefined,
      lines: 200,
      sinceMs: undefined,
      follow: false,
      filter: undefined,
      timestamps: false,
      json: false,
    });
    expect(parseLogsArgs(['gpu-a/vllm', '-f'], NOW)).toMatchObject({ follow: true, lines: 100 });
  });

  it('passes every flag through', () => {
    const a = parseLogsArgs(['l20.poc/qwen', '--tail', '300', '--since', '10m', '--grep', 'out of memory', '-i', '--timestamps', '--json', '--data-dir', '/tmp/d'], NOW);
    expect(a).toEqual({
      label: 'l20.poc',
      serviceId: 'qwen',
      dataDir: '/tmp/d',
      lines: 300,
      sinceMs: NOW - 600_000,
      follow: false,
      filter: { pattern: 'out of memory', regex: false, ignoreCase: true },
      timestamps: true,
      json: true,
    });
    // grep's convention: case matters unless -i; --regex makes the pattern a regular expression.
    expect(parseLogsArgs(['h/s', '--grep', 'OOM|Xid', '--regex', '--follow', '--tail', '0'], NOW)).toMatchObject({
      follow: true,
      lines: 0,
      filter: { pattern: 'OOM|Xid', regex: true, ignoreCase: false },
    });
  });

  it('bounds --tail by the console\'s own limits, naming the flag', () => {
    expect(parseLogsArgs(['h/s', '--tail', '5000'], NOW).lines).toBe(5000);
    expect(usageError(() => parseLogsArgs(['h/s', '--tail', '5001'], NOW))).toMatch(/--tail must be a whole number from 1 to 5000/);
    expect(usageError(() => parseLogsArgs(['h/s', '--tail', '0'], NOW))).toMatch(/--tail/);
    expect(usageError(() => parseLogsArgs(['h/s', '--tail', '-3'], NOW))).toMatch(/--tail/);
    expect(usageError(() => parseLogsArgs(['h/s', '--tail', '1e3'], NOW))).toMatch(/--tail/);
    expect(usageError(() => parseLogsArgs(['h/s', '-f', '--tail', '1001'], NOW))).toMatch(/--tail must be a whole number from 0 to 1000 with --follow/);
  });

  it('refuses unknown flags, a missing value, filter flags without --grep and an over-long pattern', () => {
    expect(usageError(() => parseLogsArgs(['h/s', '--bogus'], NOW))).toMatch(/--bogus/);
    expect(usageError(() => parseLogsArgs(['h/s', '--tail'], NOW))).toMatch(/--tail/);
    expect(usageError(() => parseLogsArgs(['h/s', '--regex'], NOW))).toMatch(/--regex needs --grep/);
    expect(usageError(() => parseLogsArgs(['h/s', '-i'], NOW))).toMatch(/-i needs --grep/);
    expect(usageError(() => parseLogsArgs(['h/s', '--grep', ''], NOW))).toMatch(/--grep must be 1 to 500 characters/);
    expect(usageError(() => parseLogsArgs(['h/s', '--grep', 'x'.repeat(501)], NOW))).toMatch(/--grep/);
    expect(usageError(() => parseLogsArgs(['h/s', '--since', 'soon'], NOW))).toMatch(/--since/);
  });

  it('wants exactly one HOST/SERVICE', () => {
    expect(usageError(() => parseLogsArgs([], NOW))).toMatch(/usage: gpu-console logs HOST\/SERVICE/);
    expect(usageError(() => parseLogsArgs(['gpu-a'], NOW))).toMatch(/"gpu-a" is not HOST\/SERVICE/);
    expect(usageError(() => parseLogsArgs(['gpu-a/vllm/x'], NOW))).toMatch(/not HOST\/SERVICE/);
    expect(usageError(() => parseLogsArgs(['a/b', 'c/d'], NOW))).toMatch(/one HOST\/SERVICE/);
  });
});
