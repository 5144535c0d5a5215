// Contract channels of budgets (src-preload/contract/budget.ts).
import type { budgetInvokeChannels } from '../../../src-preload/contract/index.js';
import { operatorActor } from '../base/index.js';
import type { HandlersFor } from '../channel.js';
import type { BudgetService } from './budget-service.js';

export function budgetChannels(budget: BudgetService): HandlersFor<keyof typeof budgetInvokeChannels> {
  return {
    'budget.get': () => budget.status(),
    'budget.set': (input, ctx) => budget.set(input, operatorActor(ctx.caller)),
  };
}
