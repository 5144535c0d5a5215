import type { Estimate } from '../../../../src-preload/contract/telemetry.js';

/** "$2.64/h est.", "$10.13 / 1M tok est.", "unavailable" — never a bare 0 for missing data. */
export function formatEstimate(e: Estimate): string {
  if (e.value === null) return 'unavailable';
  const v = e.value;
  switch (e.unit) {
    case 'USD':
      return `$${v.toFixed(2)} est.`;
    case 'USD/h':
      return `$${v.toFixed(2)}/h est.`;
    case 'USD/day':
      return `$${v.toFixed(2)}/day est.`;
    case 'USD/month':
      return `$${v.toFixed(0)}/month est.`;
    case 'USD/1M tok':
      return `$${v.toFixed(2)} / 1M tok est.`;
    case 'h':
      return `${v.toFixed(0)} h est.`;
  }
}

/** "$500.00". */
export function formatUsd(v: number): string {
  return `$${v.toFixed(2)}`;
}

/** A typed monthly budget → a number, or the reason it is refused. */
export function parseBudgetInput(text: string): number | string {
  const t = text.trim().replace(/^\$/, '').replace(/,/g, '');
  if (t === '') return 'enter an amount in USD, e.g. 500';
  const v = Number(t);
  if (!Number.isFinite(v)) return 'the budget must be a number';
  if (v <= 0) return 'the budget must be more than 0';
  if (v > 1e9) return 'the budget must be at most 1,000,000,000';
  return v;
}
