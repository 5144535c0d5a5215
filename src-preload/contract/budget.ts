import { z } from 'zod';
import { HostLabelSchema } from './primitives.js';

// Monthly budgets (per host and for the fleet): the config value is the
// default, the UI sets or clears an override. Spend is an estimate: price per
// hour × the time the console saw the host connected this UTC calendar month.

/** A monthly budget in USD: positive, finite, at most a billion. */
export const MonthlyBudgetUsdSchema = z
  .number({ error: 'monthlyUsd must be a number' })
  .refine((v) => Number.isFinite(v), { error: 'monthlyUsd must be a finite number' })
  // A budget is money: at least a cent (a smaller positive number would divide spend into Infinity).
  .refine((v) => v >= 0.01, { error: 'monthlyUsd must be at least 0.01' })
  .refine((v) => v <= 1e9, { error: 'monthlyUsd must be at most 1,000,000,000' });

export const BudgetLineSchema = z
  .object({
    scope: z.enum(['host', 'fleet']),
    host: z.string().nullable(),
    /** The budget in force: the override if set, else the config value, else null. */
    monthlyUsd: z.number().nullable(),
    source: z.enum(['override', 'config', 'none']),
    configUsd: z.number().nullable(),
    /** Estimated spend this UTC month (price per hour × hours seen running). */
    spentUsd: z.number().nullable(),
    runningHours: z.number(),
    /** spent ÷ budget × 100; null without a budget or spend. */
    pctUsed: z.number().nullable(),
    /** Hours of running at the current rate until the gate; null when unknown. */
    hoursToGate: z.number().nullable(),
    /** Thresholds (50, 80, 100) already crossed this month. */
    crossed: z.array(z.number()),
  })
  .strict();
export type BudgetLine = z.infer<typeof BudgetLineSchema>;

export const BudgetStatusSchema = z
  .object({
    /** `YYYY-MM`, UTC. */
    month: z.string(),
    monthStartMs: z.number(),
    basis: z.string(),
    fleet: BudgetLineSchema,
    hosts: z.array(BudgetLineSchema),
  })
  .strict();
export type BudgetStatus = z.infer<typeof BudgetStatusSchema>;

export const BudgetSetInputSchema = z
  .object({
    /** A host label, or omitted for the fleet budget. */
    host: HostLabelSchema.optional(),
    /** The new override; null clears it (the config value applies again). */
    monthlyUsd: MonthlyBudgetUsdSchema.nullable(),
  })
  .strict();
export type BudgetSetInput = z.infer<typeof BudgetSetInputSchema>;

export const budgetInvokeChannels = {
  'budget.get': { input: z.object({}).strict(), output: BudgetStatusSchema },
  'budget.set': { input: BudgetSetInputSchema, output: BudgetStatusSchema },
} as const;
