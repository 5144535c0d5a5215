import type { HostCost } from '../../../src-preload/contract/telemetry.js';
import { budgetComputeHours, costPerMillionBoth, hostPricePerHour, hoursUntilBudgetGate, runRate, type HostPrice, type UsageWindow } from './cost-math.js';

export interface HostCostInput extends HostPrice, UsageWindow {
  host: string;
  monthlyBudgetUsd?: number | null;
  spentThisMonthUsd?: number | null;
}

/** Every cost figure of one host, as the contract's HostCost. */
export function hostCost(input: HostCostInput): HostCost {
  const price = hostPricePerHour(input);
  const rate = runRate(price);
  const both = costPerMillionBoth(price.value, input);
  return {
    host: input.host,
    perHour: rate.perHour,
    perDay: rate.perDay,
    perMonth: rate.perMonth,
    perMillionOutputUsageBased: both.usageBased,
    perMillionOutputReservationBased: both.reservationBased,
    budgetComputeHours: budgetComputeHours(input.monthlyBudgetUsd ?? null, price.value),
    hoursUntilBudgetGate: hoursUntilBudgetGate(input.monthlyBudgetUsd ?? null, input.spentThisMonthUsd ?? null, price.value),
  };
}
