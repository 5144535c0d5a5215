// The limit flags of `gpu-console tokens create` and `tokens set`, read into the
// contract's TokenLimitsPatch (the core checks the rest: 0 or negative limits,
// unknown models, an unpriced budget, an expiry in the past — each refused with
// its code and nothing stored). A flag this cannot read is a usage error naming it.
import type { TokenLimitsPatch } from '../../../src-preload/contract/index.js';
import { UsageError } from '../output.js';

export const LIMIT_OPTIONS = {
  models: { type: 'string' },
  rpm: { type: 'string' },
  tpm: { type: 'string' },
  'budget-usd': { type: 'string' },
  'budget-action': { type: 'string' },
  expires: { type: 'string' },
} as const;

/** Only for `tokens set`: lift a limit. */
export const CLEAR_OPTIONS = {
  'clear-models': { type: 'boolean', default: false },
  'no-rpm': { type: 'boolean', default: false },
  'no-tpm': { type: 'boolean', default: false },
  'no-budget': { type: 'boolean', default: false },
  'no-expiry': { type: 'boolean', default: false },
} as const;

export const LIMITS_HELP = `[--models a,b] [--rpm N] [--tpm N] [--budget-usd N] [--budget-action refuse|warn] [--expires 30d|2027-01-31]`;

/** What parseArgs read (its type unions the option sets a command may take). */
type Values = Readonly<Record<string, string | boolean | undefined>>;

const UNIT_MS: Record<string, number> = { h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `30d`, `12h`, `2w` from now, or a date (`2027-01-31`, midnight UTC) or an ISO time with its zone. */
export function parseExpires(text: string, now: number): number {
  const rel = /^(\d{1,5})([hdw])$/.exec(text);
  if (rel) {
    const n = Number(rel[1]);
    if (n <= 0) throw new UsageError(`--expires ${text}: a duration must be more than 0`);
    return now + n * UNIT_MS[rel[2]!]!;
  }
  const date = /^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(text) ? text : null;
  if (date === null) throw new UsageError(`--expires must be a duration (30d, 12h, 2w) or a date (2027-01-31, 2027-01-31T18:00:00Z), got "${text}"`);
  const ms = Date.parse(date);
  const day = date.slice(0, 10);
  // Date.parse rolls 2027-02-31 over to March 3: read the day back to be sure it is a real date.
  const dayMs = Date.parse(`${day}T00:00:00Z`);
  if (!Number.isFinite(ms) || !Number.isFinite(dayMs) || new Date(dayMs).toISOString().slice(0, 10) !== day) throw new UsageError(`--expires ${text} is not a real date`);
  return ms;
}

function wholeNumber(flag: string, text: string): number {
  if (!/^-?\d+$/.test(text)) throw new UsageError(`--${flag} must be a whole number, got "${text}"`);
  return Number(text);
}

/** The patch the flags ask for; `clearing` only for `tokens set`. */
export function limitsPatch(raw: Values, now: number): TokenLimitsPatch {
  const str = (k: keyof typeof LIMIT_OPTIONS): string | undefined => (typeof raw[k] === 'string' ? raw[k] : undefined);
  const values = { models: str('models'), rpm: str('rpm'), tpm: str('tpm'), 'budget-usd': str('budget-usd'), 'budget-action': str('budget-action'), expires: str('expires') };
  const patch: TokenLimitsPatch = {};
  if (values.models !== undefined) {
    const models = values.models.split(',').map((m) => m.trim()).filter((m) => m !== '');
    if (models.length === 0) throw new UsageError('--models needs at least one name (use --clear-models to allow every model)');
    patch.models = models;
  }
  if (values.rpm !== undefined) patch.rpm = wholeNumber('rpm', values.rpm);
  if (values.tpm !== undefined) patch.tpm = wholeNumber('tpm', values.tpm);
  if (values['budget-usd'] !== undefined) {
    const usd = Number(values['budget-usd']);
    if (values['budget-usd'].trim() === '' || !Number.isFinite(usd)) throw new UsageError(`--budget-usd must be a number, got "${values['budget-usd']}"`);
    patch.budgetUsd = usd;
  }
  if (values['budget-action'] !== undefined) {
    const a = values['budget-action'];
    if (a !== 'refuse' && a !== 'warn') throw new UsageError(`--budget-action must be refuse or warn, got "${a}"`);
    patch.budgetAction = a;
  }
  if (values.expires !== undefined) patch.expiresAt = parseExpires(values.expires, now);
  const clears: [keyof typeof CLEAR_OPTIONS, keyof TokenLimitsPatch, string][] = [
    ['clear-models', 'models', 'models'],
    ['no-rpm', 'rpm', 'rpm'],
    ['no-tpm', 'tpm', 'tpm'],
    ['no-budget', 'budgetUsd', 'budget-usd'],
    ['no-expiry', 'expiresAt', 'expires'],
  ];
  for (const [flag, field, given] of clears) {
    if (raw[flag] !== true) continue;
    if (patch[field] !== undefined) throw new UsageError(`--${flag} and --${given} contradict each other; give one`);
    (patch as Record<string, unknown>)[field] = field === 'models' ? [] : null;
  }
  return patch;
}
