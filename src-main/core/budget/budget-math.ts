// Pure budget arithmetic: UTC month keys, spend accrual between ticks and
// which of the 50 / 80 / 100 % thresholds a spend has crossed.

export const BUDGET_THRESHOLDS_PCT = [50, 80, 100] as const;
export type BudgetThresholdPct = (typeof BUDGET_THRESHOLDS_PCT)[number];

/** `YYYY-MM` of the UTC calendar month holding `ms`. */
export function monthKeyUtc(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** First millisecond of the UTC month holding `ms`. */
export function monthStartUtc(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/**
 * Milliseconds of running to count between two ticks: the gap, capped (a long
 * gap means the console was not watching, and unseen time is not counted), and
 * never before the start of `now`'s month (a tick across midnight of the 1st
 * counts only the part inside the new month).
 */
export function accrualMs(prevAt: number | null, now: number, maxGapMs: number): number {
  if (prevAt === null || now <= prevAt) return 0;
  const from = Math.max(prevAt, monthStartUtc(now));
  return Math.min(now - from, maxGapMs);
}

/** Thresholds at or below `spent / budget` (percent), in ascending order. */
export function crossedThresholds(spentUsd: number, monthlyUsd: number | null): BudgetThresholdPct[] {
  if (monthlyUsd === null || !(monthlyUsd > 0)) return [];
  const pct = (spentUsd / monthlyUsd) * 100;
  return BUDGET_THRESHOLDS_PCT.filter((t) => pct >= t - 1e-9);
}

/** Thresholds crossed now that had not fired before. */
export function newlyCrossed(spentUsd: number, monthlyUsd: number | null, fired: readonly number[]): BudgetThresholdPct[] {
  return crossedThresholds(spentUsd, monthlyUsd).filter((t) => !fired.includes(t));
}
