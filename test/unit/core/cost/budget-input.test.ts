import { describe, expect, it } from 'vitest';
import { parseBudgetInput } from '../../../../src-renderer/src/features/host/cost-format.js';

describe('budget form input', () => {
  it('accepts amounts and refuses bad ones with a reason', () => {
    expect(parseBudgetInput('$1,500')).toBe(1500);
    expect(parseBudgetInput('0')).toMatch(/more than 0/);
    expect(parseBudgetInput('-2')).toMatch(/more than 0/);
    expect(parseBudgetInput('abc')).toMatch(/number/);
    expect(parseBudgetInput('1e12')).toMatch(/at most/);
    expect(parseBudgetInput('')).toMatch(/enter an amount/);
  });
});
