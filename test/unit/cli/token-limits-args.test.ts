import { describe, expect, it } from 'vitest';
import { limitsPatch, parseExpires } from '../../../src-main/cli/extra/token-limits-args.js';
import { UsageError } from '../../../src-main/cli/output.js';

// `tokens create / set` limit flags: what reaches proxy.createToken / proxy.setToken, and every flag the
// CLI cannot read a usage error (exit 2) naming it. Range checks (0, negative) are the contract's.

const NOW = Date.parse('2026-12-05T12:00:00.000Z');

function usageError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error('no usage error');
}

describe('token limit flags', () => {
  it('reads every limit into the patch', () => {
    expect(limitsPatch({ models: 'qwen, gemma', rpm: '10', tpm: '20000', 'budget-usd': '12.5', 'budget-action': 'warn', expires: '30d' }, NOW)).toEqual({
      models: ['qwen', 'gemma'],
      rpm: 10,
      tpm: 20_000,
      budgetUsd: 12.5,
      budgetAction: 'warn',
      expiresAt: NOW + 30 * 86_400_000,
    });
    expect(limitsPatch({ 'clear-models': true, 'no-rpm': true, 'no-budget': true, 'no-expiry': true }, NOW)).toEqual({ models: [], rpm: null, budgetUsd: null, expiresAt: null });
    // 0 goes through: the contract refuses it naming rpm (nothing stored).
    expect(limitsPatch({ rpm: '0' }, NOW)).toEqual({ rpm: 0 });
  });

  it('expiry: durations from now, a date at UTC midnight, an ISO time with its zone', () => {
    expect(parseExpires('12h', NOW)).toBe(NOW + 12 * 3_600_000);
    expect(parseExpires('2w', NOW)).toBe(NOW + 14 * 86_400_000);
    expect(parseExpires('2027-01-31', NOW)).toBe(Date.parse('2027-01-31T00:00:00Z'));
    expect(parseExpires('2027-01-31T18:00:00+01:00', NOW)).toBe(Date.parse('2027-01-31T17:00:00Z'));
  });

  it('refuses what it cannot read, naming the flag', () => {
    for (const bad of ['30', '30 d', 'soon', '-1d', '0d', '2027-01-31T18:00', '']) expect(usageError(() => parseExpires(bad, NOW))).toMatch(/--expires/);
    expect(usageError(() => parseExpires('2027-02-31', NOW))).toMatch(/not a real date/);
    expect(usageError(() => parseExpires('2027-13-01', NOW))).toMatch(/not a real date/);
    expect(usageError(() => limitsPatch({ rpm: 'ten' }, NOW))).toMatch(/--rpm must be a whole number/);
    expect(usageError(() => limitsPatch({ rpm: '1.5' }, NOW))).toMatch(/--rpm/);
    expect(usageError(() => limitsPatch({ 'budget-usd': 'lots' }, NOW))).toMatch(/--budget-usd/);
    expect(usageError(() => limitsPatch({ 'budget-action': 'block' }, NOW))).toMatch(/--budget-action must be refuse or warn/);
    expect(usageError(() => limitsPatch({ models: ' , ' }, NOW))).toMatch(/--models/);
    expect(usageError(() => limitsPatch({ rpm: '5', 'no-rpm': true }, NOW))).toMatch(/contradict/);
  });
});
