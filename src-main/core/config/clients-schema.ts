// `proxy.clients`: per-token limits written in config, keyed by token name.
// A field given here wins over what the UI or the CLI stored for that token
// (and cannot be changed there: PROXY_TOKEN_FIELD_FROM_CONFIG) — config is the
// file a team reviews, so a UI change that config would silently undo is refused
// instead. A block whose name has no live token waits for one to be created.
import { z } from 'zod';
import { BudgetActionSchema, MonthlyBudgetUsdSchema, TokenModelsSchema, TokenNameSchema, TokenRpmSchema, TokenTpmSchema } from '../../../src-preload/contract/index.js';

/** `2027-01-31` (end of that UTC day is not implied: the token expires at its start) or a full ISO time. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/;

const ExpiresSchema = z
  .string({ error: 'expires must be a date such as 2027-01-31 or 2027-01-31T18:00:00Z' })
  .regex(ISO_DATE, { error: 'expires must be a date such as 2027-01-31 or 2027-01-31T18:00:00Z (a relative time like 30d has no fixed meaning in a file)' })
  .transform((s, ctx) => {
    const ms = Date.parse(s.length === 10 ? `${s}T00:00:00Z` : s);
    if (!Number.isFinite(ms)) {
      ctx.addIssue({ code: 'custom', message: `expires "${s}" is not a real date` });
      return z.NEVER;
    }
    return ms;
  });

export const ClientLimitsConfigSchema = z
  .object({
    /** Model names, aliases or groups the token may call; omitted: every model. */
    models: TokenModelsSchema.optional(),
    rpm: TokenRpmSchema.optional(),
    tpm: TokenTpmSchema.optional(),
    budgetUsd: MonthlyBudgetUsdSchema.optional(),
    budgetAction: BudgetActionSchema.optional(),
    /** Epoch ms once parsed. */
    expires: ExpiresSchema.optional(),
  })
  .strict();
export type ClientLimitsConfig = z.infer<typeof ClientLimitsConfigSchema>;

export const ClientsConfigSchema = z
  .record(TokenNameSchema, ClientLimitsConfigSchema)
  .default({});
export type ClientsConfig = z.infer<typeof ClientsConfigSchema>;

type Path = (string | number)[];

/**
 * Cross-field checks of `proxy.clients`: each allow-list entry is a served model, alias or group, and a budget
 * has at least one priced host among those serving the token's models (else its spend could never be known).
 * `served`: lower-cased name → the model it serves; `groups`: lower-cased group name → members;
 * `pricedModels`: lower-cased models served by a host with pricePerHourUsd.
 */
export function clientLimitIssues(
  clients: ClientsConfig,
  served: ReadonlyMap<string, string>,
  groups: ReadonlyMap<string, readonly string[]>,
  pricedModels: ReadonlySet<string>,
): { path: Path; message: string }[] {
  const issues: { path: Path; message: string }[] = [];
  for (const [name, c] of Object.entries(clients)) {
    const base: Path = ['proxy', 'clients', name];
    c.models?.forEach((m, i) => {
      const key = m.toLowerCase();
      if (!served.has(key) && !groups.has(key)) issues.push({ path: [...base, 'models', i], message: `"${m}" is neither a served model or alias nor a group` });
    });
    if (c.budgetUsd !== undefined) {
      const reach = modelsReached(c.models ?? [], served, groups);
      const priced = reach === 'all' ? pricedModels.size > 0 : [...reach].some((m) => pricedModels.has(m));
      if (!priced) {
        issues.push({
          path: [...base, 'budgetUsd'],
          message: `no host serving ${reach === 'all' ? 'any model' : 'these models'} has pricePerHourUsd, so the spend of "${name}" cannot be estimated; set a price or drop the budget`,
        });
      }
    }
  }
  return issues;
}

/** The models (lower-cased) an allow-list reaches, groups expanded; 'all' for an empty list. */
export function modelsReached(
  allowed: readonly string[],
  served: ReadonlyMap<string, string>,
  groups: ReadonlyMap<string, readonly string[]>,
): Set<string> | 'all' {
  if (allowed.length === 0) return 'all';
  const out = new Set<string>();
  const seen = new Set<string>();
  const visit = (name: string): void => {
    const key = name.toLowerCase();
    if (seen.has(key)) return;
    seen.add(key);
    const model = served.get(key);
    if (model !== undefined) out.add(model.toLowerCase());
    for (const m of groups.get(key) ?? []) visit(m);
  };
  for (const a of allowed) visit(a);
  return out;
}

/** Models (lower-cased) served by at least one host with a price: a budget over them can be estimated. */
export function pricedModels(config: { hosts: readonly { pricePerHourUsd?: number | undefined; services: readonly { model: string }[] }[] }): Set<string> {
  return new Set(config.hosts.filter((h) => h.pricePerHourUsd !== undefined).flatMap((h) => h.services.map((s) => s.model.toLowerCase())));
}
