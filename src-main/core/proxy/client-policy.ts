// A token's limits in force: config `proxy.clients.<name>` merged over what the
// UI or CLI stored (a field config sets wins), the checks a change must pass
// before anything is stored, and the old → new diff its audit row carries.
import {
  TokenLimitErrorCode,
  type TokenLimitField,
  type TokenLimits,
  type TokenLimitsPatch,
} from '../../../src-preload/contract/index.js';
import { AppError } from '../base/index.js';
import { modelsReached, pricedModels, type ClientLimitsConfig, type Config } from '../config/index.js';

export const LIMIT_FIELDS: readonly TokenLimitField[] = ['models', 'rpm', 'tpm', 'budgetUsd', 'budgetAction', 'expiresAt'];

/** The config block's fields under the contract's names (config writes `expires`, a date). */
function configFields(cfg: ClientLimitsConfig | undefined): Partial<TokenLimits> {
  if (!cfg) return {};
  const out: Partial<TokenLimits> = {};
  if (cfg.models !== undefined) out.models = cfg.models;
  if (cfg.rpm !== undefined) out.rpm = cfg.rpm;
  if (cfg.tpm !== undefined) out.tpm = cfg.tpm;
  if (cfg.budgetUsd !== undefined) out.budgetUsd = cfg.budgetUsd;
  if (cfg.budgetAction !== undefined) out.budgetAction = cfg.budgetAction;
  if (cfg.expires !== undefined) out.expiresAt = cfg.expires;
  return out;
}

export function mergeLimits(stored: TokenLimits, cfg: ClientLimitsConfig | undefined): { limits: TokenLimits; configFields: TokenLimitField[] } {
  const fromConfig = configFields(cfg);
  return { limits: { ...stored, ...fromConfig }, configFields: LIMIT_FIELDS.filter((f) => f in fromConfig) };
}

/** What a change is checked against: the served names and groups, which models have a priced host, and now. */
export interface LimitsCatalog {
  /** Lower-cased model name or alias → the model it serves. */
  served: ReadonlyMap<string, string>;
  /** Lower-cased group name → members. */
  groups: ReadonlyMap<string, readonly string[]>;
  priced: ReadonlySet<string>;
}

export function limitsCatalog(config: Config): LimitsCatalog {
  const served = new Map<string, string>();
  for (const h of config.hosts) {
    for (const s of h.services) for (const n of [s.model, ...s.aliases]) if (!served.has(n.toLowerCase())) served.set(n.toLowerCase(), s.model);
  }
  const groups = new Map(Object.entries(config.proxy.groups).map(([g, m]) => [g.toLowerCase(), m] as const));
  return { served, groups, priced: pricedModels(config) };
}

/**
 * The stored limits after `patch`, checked: no config-owned field touched, every allow-list entry served,
 * a budget only where a priced host serves the token's models, an expiry in the future. Throws a coded
 * AppError naming what is wrong (nothing is stored by the caller then).
 */
export function applyPatch(
  name: string,
  stored: TokenLimits,
  patch: TokenLimitsPatch,
  cfg: ClientLimitsConfig | undefined,
  catalog: LimitsCatalog,
  now: number,
): TokenLimits {
  const owned = mergeLimits(stored, cfg).configFields.filter((f) => patch[f] !== undefined);
  if (owned.length > 0) {
    throw new AppError(TokenLimitErrorCode.FIELD_FROM_CONFIG, `${owned.join(', ')} of "${name}" ${owned.length === 1 ? 'is' : 'are'} set in config (proxy.clients.${name}); change ${owned.length === 1 ? 'it' : 'them'} there`, {
      details: { name, fields: owned },
    });
  }
  const next: TokenLimits = { ...stored };
  if (patch.models !== undefined) next.models = dedupe(patch.models);
  if (patch.rpm !== undefined) next.rpm = patch.rpm;
  if (patch.tpm !== undefined) next.tpm = patch.tpm;
  if (patch.budgetUsd !== undefined) next.budgetUsd = patch.budgetUsd;
  if (patch.budgetAction !== undefined) next.budgetAction = patch.budgetAction;
  if (patch.expiresAt !== undefined) next.expiresAt = patch.expiresAt;

  const unknown = next.models.filter((m) => !catalog.served.has(m.toLowerCase()) && !catalog.groups.has(m.toLowerCase()));
  if (patch.models !== undefined && unknown.length > 0) {
    throw new AppError(TokenLimitErrorCode.UNKNOWN_MODELS, `the proxy serves no model, alias or group named ${unknown.map((m) => `"${m}"`).join(', ')}`, {
      details: { name, unknown },
    });
  }
  if (patch.expiresAt !== undefined && patch.expiresAt !== null && patch.expiresAt <= now) {
    throw new AppError(TokenLimitErrorCode.EXPIRY_PAST, `the expiry ${new Date(patch.expiresAt).toISOString()} is not in the future`, { details: { name, expiresAt: patch.expiresAt } });
  }
  const effective = mergeLimits(next, cfg).limits;
  if (effective.budgetUsd !== null && (patch.budgetUsd !== undefined || patch.models !== undefined)) {
    const reach = modelsReached(effective.models, catalog.served, catalog.groups);
    const priced = reach === 'all' ? catalog.priced.size > 0 : [...reach].some((m) => catalog.priced.has(m));
    if (!priced) {
      throw new AppError(TokenLimitErrorCode.BUDGET_UNPRICED, `no host serving ${reach === 'all' ? 'any model' : `${effective.models.join(', ')}`} has pricePerHourUsd: the spend of "${name}" could never be estimated; set a price in config or drop the budget`, {
        details: { name },
      });
    }
  }
  return next;
}

function dedupe(models: readonly string[]): string[] {
  const seen = new Set<string>();
  return models.filter((m) => (seen.has(m.toLowerCase()) ? false : (seen.add(m.toLowerCase()), true)));
}

/** Changed fields, old → new, for the audit row. */
export function limitsDiff(before: TokenLimits, after: TokenLimits): Partial<Record<TokenLimitField, { from: unknown; to: unknown }>> {
  const out: Partial<Record<TokenLimitField, { from: unknown; to: unknown }>> = {};
  for (const f of LIMIT_FIELDS) {
    if (JSON.stringify(before[f]) !== JSON.stringify(after[f])) out[f] = { from: before[f], to: after[f] };
  }
  return out;
}
