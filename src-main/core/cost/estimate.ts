import type { Estimate } from '../../../src-preload/contract/telemetry.js';

// Every cost figure is an estimate. Without the data to compute it, it is
// unavailable with a reason — never a zero that reads as "free".

export type EstimateUnit = Estimate['unit'];

export function estimate(value: number, unit: EstimateUnit, basis: string): Estimate {
  if (!Number.isFinite(value)) return unavailable(unit, 'the figure is not a finite number', basis);
  return { value, unit, estimate: true, unavailableReason: null, basis };
}

export function unavailable(unit: EstimateUnit, reason: string, basis = ''): Estimate {
  return { value: null, unit, estimate: true, unavailableReason: reason, basis };
}
