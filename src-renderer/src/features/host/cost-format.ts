import type { CostWindowFigures, Estimate } from '../../../../src-preload/contract/telemetry.js';
import { formatDuration } from '../../format/format.js';

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

/** "1 h 2 min of 24 h (4.3 %)", "never observed (0 % of 24 h)", "window not started": how much of the window the figures cover. */
export function formatObserved(w: CostWindowFigures): string {
  if (w.windowSeconds <= 0 || w.coveragePct === null) return 'window not started';
  const of = formatDuration(w.windowSeconds * 1000);
  if (w.observedSeconds <= 0) return `never observed (0 % of ${of})`;
  return `${formatDuration(w.observedSeconds * 1000)} of ${of} (${w.coveragePct.toFixed(1)} %)`;
}

/** "265,240"; an unknown count is "—", never 0. */
export function formatTokens(n: number | null): string {
  return n === null || !Number.isFinite(n) ? '—' : Math.round(n).toLocaleString('en-US');
}
