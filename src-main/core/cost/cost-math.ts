import type { Estimate } from '../../../src-preload/contract/telemetry.js';
import { estimate, unavailable } from './estimate.js';

// Formulas of field-notes §5 and §1:
//   run rate        = host price per hour (×24 per day, ×730 per month: 365 × 24 / 12)
//   cost per 1M out = price per hour ÷ (3600 × output tok/s) × 10⁶
//     usage-based:       tok/s over BUSY time (some request in flight)
//     reservation-based: tok/s over ALL reserved time, idle included
//   budget gate     = monthly budget ÷ price per hour (compute hours it buys)

export const HOURS_PER_DAY = 24;
/** Average month (365 × 24 / 12), the convention of cloud price sheets. */
export const HOURS_PER_MONTH = 730;

export interface HostPrice {
  /** Price of the whole host per hour (config `pricePerHourUsd`). */
  pricePerHourUsd?: number | null;
  /** Or a price per GPU-hour times the GPU count. */
  pricePerGpuHourUsd?: number | null;
  gpuCount?: number | null;
}

export function hostPricePerHour(p: HostPrice): Estimate {
  if (p.pricePerHourUsd != null && p.pricePerHourUsd > 0) return estimate(p.pricePerHourUsd, 'USD/h', 'host price per hour from config');
  if (p.pricePerGpuHourUsd != null && p.pricePerGpuHourUsd > 0) {
    if (p.gpuCount == null || p.gpuCount <= 0) return unavailable('USD/h', 'price is per GPU-hour and the GPU count is not known yet');
    return estimate(p.pricePerGpuHourUsd * p.gpuCount, 'USD/h', `${p.gpuCount} GPU × price per GPU-hour`);
  }
  return unavailable('USD/h', 'no price configured for this host');
}

export interface RunRate {
  perHour: Estimate;
  perDay: Estimate;
  perMonth: Estimate;
}

export function runRate(price: Estimate): RunRate {
  if (price.value === null) {
    const r = price.unavailableReason ?? 'no price';
    return { perHour: price, perDay: unavailable('USD/day', r), perMonth: unavailable('USD/month', r) };
  }
  return {
    perHour: price,
    perDay: estimate(price.value * HOURS_PER_DAY, 'USD/day', 'price per hour × 24'),
    perMonth: estimate(price.value * HOURS_PER_MONTH, 'USD/month', 'price per hour × 730 (average month)'),
  };
}

/** price ÷ (3600 × tok/s) × 10⁶. */
export function costPerMillionOutputTokens(pricePerHourUsd: number | null, outputTokPerS: number | null, basis: string): Estimate {
  if (pricePerHourUsd === null || !(pricePerHourUsd > 0)) return unavailable('USD/1M tok', 'no price configured', basis);
  if (outputTokPerS === null || !Number.isFinite(outputTokPerS)) return unavailable('USD/1M tok', 'throughput unknown', basis);
  if (outputTokPerS <= 0) return unavailable('USD/1M tok', 'no output tokens in the window', basis);
  return estimate((pricePerHourUsd / (3600 * outputTokPerS)) * 1e6, 'USD/1M tok', basis);
}

export interface UsageWindow {
  /** Output (completion) tokens generated in the window. */
  outputTokens: number | null;
  /** Seconds with at least one request in flight. */
  busySeconds: number | null;
  /** Seconds the host was reserved (the window, or less if it came up later). */
  reservedSeconds: number | null;
}

export function costPerMillionBoth(pricePerHourUsd: number | null, w: UsageWindow): { usageBased: Estimate; reservationBased: Estimate } {
  const tokS = (secs: number | null): number | null =>
    w.outputTokens === null || secs === null ? null : secs <= 0 ? (w.outputTokens > 0 ? null : 0) : w.outputTokens / secs;
  return {
    usageBased: costPerMillionOutputTokens(pricePerHourUsd, tokS(w.busySeconds), 'busy time only: price ÷ (3600 × tokens ÷ busy seconds)'),
    reservationBased: costPerMillionOutputTokens(
      pricePerHourUsd,
      tokS(w.reservedSeconds),
      'all reserved time, idle included: price ÷ (3600 × tokens ÷ reserved seconds)',
    ),
  };
}

/** Compute hours a monthly budget buys. */
export function budgetComputeHours(monthlyBudgetUsd: number | null, pricePerHourUsd: number | null): Estimate {
  if (monthlyBudgetUsd === null || !(monthlyBudgetUsd > 0)) return unavailable('h', 'no monthly budget set');
  if (pricePerHourUsd === null || !(pricePerHourUsd > 0)) return unavailable('h', 'no price configured');
  return estimate(monthlyBudgetUsd / pricePerHourUsd, 'h', 'monthly budget ÷ price per hour');
}

/** Hours of running at the current rate until this month's spend reaches the budget (0 once it has). */
export function hoursUntilBudgetGate(monthlyBudgetUsd: number | null, spentThisMonthUsd: number | null, pricePerHourUsd: number | null): Estimate {
  if (monthlyBudgetUsd === null || !(monthlyBudgetUsd > 0)) return unavailable('h', 'no monthly budget set');
  if (pricePerHourUsd === null || !(pricePerHourUsd > 0)) return unavailable('h', 'no price configured');
  if (spentThisMonthUsd === null) return unavailable('h', "this month's spend is unknown");
  return estimate(Math.max(0, (monthlyBudgetUsd - spentThisMonthUsd) / pricePerHourUsd), 'h', '(budget − spent this month) ÷ price per hour');
}
