// The limits form of a client token, as data: what the fields hold (text, as
// typed, so nothing is lost on a refusal), the change they make (only the
// fields that differ and that config does not own), and the problems the form
// can name before the core is asked. Pure: tested in Node.
import type { ModelRouteView, TokenLimitField, TokenLimits, TokenLimitsPatch } from '../../../../src-preload/contract/index.js';

export interface LimitsFormState {
  readonly models: readonly string[];
  readonly rpm: string;
  readonly tpm: string;
  readonly budgetUsd: string;
  readonly budgetAction: TokenLimits['budgetAction'];
  /** `YYYY-MM-DD`: the token works through the end of that day (UTC); empty: never expires. */
  readonly expires: string;
}

export const EMPTY_LIMITS_FORM: LimitsFormState = { models: [], rpm: '', tpm: '', budgetUsd: '', budgetAction: 'refuse', expires: '' };

const DAY_MS = 86_400_000;

export function formFromLimits(l: TokenLimits): LimitsFormState {
  return {
    models: l.models,
    rpm: l.rpm === null ? '' : String(l.rpm),
    tpm: l.tpm === null ? '' : String(l.tpm),
    budgetUsd: l.budgetUsd === null ? '' : String(l.budgetUsd),
    budgetAction: l.budgetAction,
    expires: l.expiresAt === null ? '' : new Date(l.expiresAt).toISOString().slice(0, 10),
  };
}

/** Names a token may be allowed: each model, its aliases, and each group, as /v1/models lists them. */
export function modelChoices(models: readonly ModelRouteView[] | undefined, current: readonly string[]): string[] {
  const names = new Set<string>();
  for (const m of models ?? []) {
    names.add(m.name);
    for (const a of m.aliases) names.add(a);
  }
  // A name the token already has stays choosable (and checked) even if the proxy no longer lists it.
  for (const c of current) names.add(c);
  return [...names].sort((a, b) => a.localeCompare(b));
}

type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

function perMinute(text: string, what: string): Parsed<number | null> {
  const t = text.trim().replace(/,/g, '');
  if (t === '') return { ok: true, value: null };
  const v = Number(t);
  if (!Number.isInteger(v)) return { ok: false, problem: `${what} must be a whole number` };
  if (v < 1) return { ok: false, problem: `${what} must be at least 1 (leave it empty for no limit)` };
  if (v > 1_000_000_000) return { ok: false, problem: `${what} must be at most 1,000,000,000` };
  return { ok: true, value: v };
}

function budget(text: string): Parsed<number | null> {
  const t = text.trim().replace(/^\$/, '').replace(/,/g, '');
  if (t === '') return { ok: true, value: null };
  const v = Number(t);
  if (!Number.isFinite(v)) return { ok: false, problem: 'the budget must be a number of USD' };
  if (v <= 0) return { ok: false, problem: 'the budget must be more than 0 (leave it empty for no budget)' };
  return { ok: true, value: v };
}

function expiry(text: string): Parsed<number | null> {
  const t = text.trim();
  if (t === '') return { ok: true, value: null };
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(t);
  const start = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  if (!m || !Number.isFinite(start) || new Date(start).toISOString().slice(0, 10) !== t) return { ok: false, problem: 'the expiry must be a date (YYYY-MM-DD)' };
  return { ok: true, value: start + DAY_MS - 1 };
}

export type LimitsRequest = { ok: true; patch: TokenLimitsPatch } | { ok: false; problem: string };

/**
 * The change the form asks for. `before`: the limits in force (null when creating: every filled field is
 * sent). Fields config owns are never sent; unchanged ones are left out, so a save changes only what moved.
 */
export function limitsRequest(state: LimitsFormState, before: TokenLimits | null, configFields: readonly TokenLimitField[]): LimitsRequest {
  const rpm = perMinute(state.rpm, 'requests/min');
  if (!rpm.ok) return rpm;
  const tpm = perMinute(state.tpm, 'tokens/min');
  if (!tpm.ok) return tpm;
  const usd = budget(state.budgetUsd);
  if (!usd.ok) return usd;
  const expiresAt = expiry(state.expires);
  if (!expiresAt.ok) return expiresAt;
  const wanted: TokenLimits = { models: [...state.models], rpm: rpm.value, tpm: tpm.value, budgetUsd: usd.value, budgetAction: state.budgetAction, expiresAt: expiresAt.value };
  const patch: Record<string, unknown> = {};
  for (const field of Object.keys(wanted) as TokenLimitField[]) {
    if (configFields.includes(field)) continue;
    const value = wanted[field];
    const was = before === null ? null : before[field];
    const same = Array.isArray(value) && Array.isArray(was) ? value.length === was.length && [...value].sort().join('\n') === [...was].sort().join('\n') : value === was;
    if (before === null ? value === null || (Array.isArray(value) && value.length === 0) || (field === 'budgetAction' && wanted.budgetUsd === null) : same) continue;
    patch[field] = value;
  }
  return { ok: true, patch: patch as TokenLimitsPatch };
}
