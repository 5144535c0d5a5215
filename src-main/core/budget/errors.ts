export const BudgetErrorCode = {
  INVALID_AMOUNT: 'BUDGET_INVALID_AMOUNT',
  UNKNOWN_HOST: 'BUDGET_UNKNOWN_HOST',
} as const;
export type BudgetErrorCode = (typeof BudgetErrorCode)[keyof typeof BudgetErrorCode];

declare module '../base/index.js' {
  interface ErrorCodeRegistry {
    budget: BudgetErrorCode;
  }
}
