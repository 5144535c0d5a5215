export const BudgetErrorCode = {
  INVALID_AMOUNT: 'BUDGET_INVALID_AMOUNT',
  UNKNOWN_HOST: 'BUDGET_UNKNOWN_HOST',
} as const;
