import { describe, expect, it } from 'vitest';
import { accrualMs, crossedThresholds, monthKeyUtc, monthStartUtc, newlyCrossed } from '../../../../src-main/core/budget/index.js';
import { budgetComputeHours, hoursUntilBudgetGate } from '../../../../src-main/core/cost/index.js';

describe('budget math', () => {
  it('uses UTC month boundaries', () => {
    expect(monthKeyUtc(Date.UTC(2026, 11, 31, 23, 59))).toBe('2026-12');
    expect(monthKeyUtc(Date.UTC(2027, 0, 1, 0, 0))).toBe('2027-01');
    expect(monthStartUtc(Date.UTC(2026, 11, 15, 12))).toBe(Date.UTC(2026, 11, 1));
  });
  it('accrues the gap, capped, and never across the month start', () => {
    expect(accrualMs(null, 1000, 60_000)).toBe(0);
    expect(accrualMs(1000, 3000, 60_000)).toBe(2000);
    expect(accrualMs(0, 10 * 60_000, 60_000)).toBe(60_000);
    const start = Date.UTC(2027, 0, 1);
    expect(accrualMs(start - 5000, start + 2000, 60_000)).toBe(2000);
  });
  it('crosses 50/80/100 once each', () => {
    expect(crossedThresholds(249, 500)).toEqual([]);
    expect(crossedThresholds(250, 500)).toEqual([50]);
    expect(crossedThresholds(500, 500)).toEqual([50, 80, 100]);
    expect(crossedThresholds(500, null)).toEqual([]);
    expect(newlyCrossed(450, 500, [50])).toEqual([80]);
  });
  it('field notes: USD 500 at 2.641736/h buys ≈189 compute hours', () => {
    expect(budgetComputeHours(500, 2.641736).value).toBeCloseTo(189.27, 1);
    expect(hoursUntilBudgetGate(500, 250, 2.641736).value).toBeCloseTo(94.63, 1);
  });
});
