// Cost estimates: run rate from the host's price, cost per million output
// tokens (busy time and all reserved time), per model and per client from the
// proxy's request rows (concurrent time shared, never counted twice), and the
// monthly budget gate. Every figure is labelled an estimate; no data → unavailable.
export { estimate, unavailable, type EstimateUnit } from './estimate.js';
export {
  HOURS_PER_DAY,
  HOURS_PER_MONTH,
  hostPricePerHour,
  runRate,
  costPerMillionOutputTokens,
  costPerMillionBoth,
  budgetComputeHours,
  hoursUntilBudgetGate,
  type HostPrice,
  type RunRate,
  type UsageWindow,
} from './cost-math.js';
export { shareGpuTime, costShares, spanFromRequestRow, type RequestSpan, type ShareResult } from './request-share.js';
export { hostCost, type HostCostInput } from './host-cost.js';
export { RollingCost, usageFromBuckets, type ServiceTick, type RollingCostFigures } from './rolling-cost.js';
