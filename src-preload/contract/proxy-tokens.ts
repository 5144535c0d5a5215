import { z } from 'zod';
import { MonthlyBudgetUsdSchema } from './budget.js';

export { TokenLimitErrorCode } from './codes.js';

// Per-client governance of a proxy token: which models it may call, how many
// requests and tokens a minute, a monthly budget in USD (from the same cost
// estimate as cost.summary byClient) and an expiry. Set from the UI and the
// CLI (proxy.createToken / proxy.setToken) or config `proxy.clients.<name>`;
// a field config sets wins and cannot be changed here (configFields says which).

export const TokenLimitFieldSchema = z.enum(['models', 'rpm', 'tpm', 'budgetUsd', 'budgetAction', 'expiresAt']);
export type TokenLimitField = z.infer<typeof TokenLimitFieldSchema>;

export const BudgetActionSchema = z.enum(['refuse', 'warn'], { error: 'budgetAction must be refuse or warn' });
export type BudgetAction = z.infer<typeof BudgetActionSchema>;

/** Model names, aliases or group names; empty = every model. */
export const TokenModelsSchema = z
  .array(z.string().trim().min(1, { error: 'a model name must not be empty' }).max(200, { error: 'a model name has at most 200 characters' }))
  .max(64, { error: 'at most 64 models' });

const perMinute = (what: string) =>
  z
    .number({ error: `${what} must be a number` })
    .int({ error: `${what} must be a whole number` })
    .min(1, { error: `${what} must be at least 1 (clear it to lift the limit)` })
    .max(1_000_000_000, { error: `${what} must be at most 1000000000` });

export const TokenRpmSchema = perMinute('rpm');
export const TokenTpmSchema = perMinute('tpm');

/** The limits in force (config fields merged over what the UI or CLI stored). null: no limit. */
export const TokenLimitsSchema = z
  .object({
    models: z.array(z.string()),
    rpm: z.number().int().nullable(),
    tpm: z.number().int().nullable(),
    budgetUsd: z.number().nullable(),
    /** At 100 % of the budget: refuse (402 budget_exhausted) or only warn. */
    budgetAction: BudgetActionSchema,
    /** Epoch ms; from then on the token is refused 401 token_expired. */
    expiresAt: z.number().nullable(),
  })
  .strict();
export type TokenLimits = z.infer<typeof TokenLimitsSchema>;

/** A change: a field left out stays as it is; null clears it (models: [] clears the allow-list). */
export const TokenLimitsPatchSchema = z
  .object({
    models: TokenModelsSchema.optional(),
    rpm: TokenRpmSchema.nullable().optional(),
    tpm: TokenTpmSchema.nullable().optional(),
    budgetUsd: MonthlyBudgetUsdSchema.nullable().optional(),
    budgetAction: BudgetActionSchema.optional(),
    expiresAt: z.number({ error: 'expiresAt must be epoch milliseconds' }).int().positive().nullable().optional(),
  })
  .strict();
export type TokenLimitsPatch = z.infer<typeof TokenLimitsPatchSchema>;

/** The token's estimated spend this UTC month against its budget. */
export const TokenBudgetUseSchema = z
  .object({
    /** `YYYY-MM`, UTC. */
    month: z.string(),
    /** null: unknown (a host that served it has no price, or not computed yet) — never 0 for unknown. */
    spentUsd: z.number().nullable(),
    pctUsed: z.number().nullable(),
    /** Thresholds (50, 80, 100) crossed this month. */
    crossed: z.array(z.number()),
    /** When the spend was last computed (epoch ms); null before the first time. */
    computedAt: z.number().nullable(),
  })
  .strict();
export type TokenBudgetUse = z.infer<typeof TokenBudgetUseSchema>;

export const DEFAULT_TOKEN_LIMITS: TokenLimits = Object.freeze({
  models: [],
  rpm: null,
  tpm: null,
  budgetUsd: null,
  budgetAction: 'refuse',
  expiresAt: null,
}) as TokenLimits;

