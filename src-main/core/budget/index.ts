// Monthly budgets per host and for the fleet: config default with an audited
// UI override, estimated spend this UTC month from sampled up time (persisted),
// and 50 / 80 / 100 % alerts fired once per month each.
export { BudgetService, BUDGET_BASIS, type BudgetServiceDeps, type BudgetFleet } from './budget-service.js';
export { BUDGET_THRESHOLDS_PCT, accrualMs, crossedThresholds, monthKeyUtc, monthStartUtc, newlyCrossed, type BudgetThresholdPct } from './budget-math.js';
export { BudgetErrorCode } from './errors.js';
export { budgetChannels } from './channels.js';
