// Cost estimates: run rate from the host's price, cost per million output
// tokens (busy time and observed time) over a window by one function for the
// UI and the reports, per model and per client from the proxy's request rows
// (concurrent time shared, never counted twice), and the monthly budget gate.
// Every figure is labelled an estimate; no data → unavailable, never 0.
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
export { shareGpuTime, shareGpuTimeColumns, costShares, spanFromRequestRow, type RequestSpan, type RequestSpanRow, type ShareResult, type SpanColumns } from './request-share.js';
export { hostCost, windowFigures, windowUsage, type HostCostInput, type WindowCostSources, type WindowUsage } from './window-cost.js';
export { RollingCost, type ServiceTick, type RollingCostFigures } from './rolling-cost.js';
