// Bearer tokens of local clients: a name, a highest class, and a SHA-256 of
// the token (the token itself is shown once, at creation, and never stored).
// Works on the database directly, so the CLI can issue tokens with or without
// a running console. Checks are answered from a small in-memory map (hash →
// entry): a revocation through this repository empties it at once; a change
// by another process (the CLI) or another writer is noticed by a cheap version
// query run at most every VERSION_CHECK_MS, not on every request (that query
// takes SQLite's read locks and cost more than the rest of the check).
// Each token also keeps the limits the UI or CLI stored (allow-list, rpm, tpm,
// budget, expiry); config `proxy.clients` is merged over them by the caller's
// `viewExtras` for views and by client-policy.ts on the request path.
import { hash, randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import { DEFAULT_TOKEN_LIMITS, type TokenLimits, type TokenView } from '../../../src-preload/contract/index.js';
import { AppError, type Clock } from '../base/index.js';
import type { TrafficClass } from './classes.js';
import { ProxyErrorCode } from './errors.js';

export const TOKEN_PREFIX = 'gcp_';
const TOKEN_CACHE_MAX = 1_024;
/** Longest a revocation made outside this repository (CLI, another connection) can go unnoticed. */
export const VERSION_CHECK_MS = 100;

interface TokenRow {
  token_hash: string;
  name: string;
  prefix: string;
  max_class: TrafficClass;
  created_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
  allowed_models: string | null;
  rpm: number | null;
  tpm: number | null;
  budget_usd: number | null;
  budget_action: 'refuse' | 'warn';
  expires_at: number | null;
}

/** What a view adds to the stored row: the config fields merged over it and the budget's use (service.ts wires them). */
export interface TokenViewExtras {
  view(name: string, stored: TokenLimits): Pick<TokenView, 'limits' | 'configFields' | 'budget'>;
}

const STORED_ONLY: TokenViewExtras = { view: (_name, stored) => ({ limits: stored, configFields: [], budget: null }) };

export type TokenCheck =
  /** `id`: the token's own identity (its hash), unlike `name`, which a new token may take after a revocation. */
  | { ok: true; id: string; name: string; maxClass: TrafficClass; /** As stored (absent: none, e.g. internal clients). */ limits?: TokenLimits }
  | { ok: false; reason: 'unknown' | 'revoked'; name?: string };

export interface TokenRepository {
  create(name: string, maxClass: TrafficClass, limits?: TokenLimits): { token: string; view: TokenView };
  list(): TokenView[];
  /** The live token's class and stored limits; throws PROXY_UNKNOWN_TOKEN. */
  stored(name: string): { maxClass: TrafficClass; limits: TokenLimits };
  /** Replaces a live token's class and stored limits (the caller validates and audits); the new view. */
  update(name: string, maxClass: TrafficClass, limits: TokenLimits): TokenView;
  revoke(name: string): TokenView;
  check(token: string): TokenCheck;
  /** Stamps last use for the named clients (called from the batched request writer). */
  touch(names: Iterable<string>, at: number): void;
}

export function hashToken(token: string): string {
  // One-shot: no Hash object per request.
  return hash('sha256', token, 'hex');
}

function limitsOf(row: TokenRow): TokenLimits {
  return {
    models: row.allowed_models === null ? [] : (JSON.parse(row.allowed_models) as string[]),
    rpm: row.rpm,
    tpm: row.tpm,
    budgetUsd: row.budget_usd,
    budgetAction: row.budget_action,
    expiresAt: row.expires_at,
  };
}

function limitColumns(l: TokenLimits): [string | null, number | null, number | null, number | null, string, number | null] {
  return [l.models.length === 0 ? null : JSON.stringify(l.models), l.rpm, l.tpm, l.budgetUsd, l.budgetAction, l.expiresAt === null ? null : Math.floor(l.expiresAt)];
}

export function createTokenRepository(db: Database.Database, clock: Clock, extras: TokenViewExtras = STORED_ONLY): TokenRepository {
  const toView = (row: TokenRow): TokenView => ({
    name: row.name,
    maxClass: row.max_class,
    prefix: row.prefix,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
    ...extras.view(row.name, limitsOf(row)),
  });
  const insert = db.prepare(
    'INSERT INTO client_tokens (token_hash, name, prefix, max_class, created_at, allowed_models, rpm, tpm, budget_usd, budget_action, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const update = db.prepare(
    'UPDATE client_tokens SET max_class = ?, allowed_models = ?, rpm = ?, tpm = ?, budget_usd = ?, budget_action = ?, expires_at = ? WHERE token_hash = ?',
  );
  const byHash = db.prepare<[string], TokenRow>('SELECT * FROM client_tokens WHERE token_hash = ?');
  const liveByName = db.prepare<[string], TokenRow>('SELECT * FROM client_tokens WHERE name = ? AND revoked_at IS NULL');
  const all = db.prepare<[], TokenRow>('SELECT * FROM client_tokens ORDER BY revoked_at IS NOT NULL, created_at DESC');
  const revoke = db.prepare('UPDATE client_tokens SET revoked_at = ? WHERE token_hash = ?');
  const touch = db.prepare('UPDATE client_tokens SET last_used_at = ? WHERE name = ? AND revoked_at IS NULL');
  const touchAll = db.transaction((names: string[], at: number) => {
    for (const n of names) touch.run(at, n);
  });
  // data_version moves when another connection commits, total_changes() when this one writes
  // anything (its request rows too, so the cache is refilled after each batch: cheap).
  const version = db.prepare<[], { c: number; d: number }>('SELECT total_changes() AS c, data_version AS d FROM pragma_data_version');
  const cache = new Map<string, TokenCheck>();
  let seen = version.get()!;
  let checkedAt = clock.now();
  // Keyed by the presented token: a hit costs no SHA-256 (the hash is for the table, where a leak must not
  // give tokens away; this map lives only in this process, as the request that carried the token does).
  const cached = (token: string): TokenCheck | undefined => {
    const at = clock.now();
    // Also when the clock went back: never trust the cache longer than the interval.
    if (at - checkedAt >= VERSION_CHECK_MS || at < checkedAt) {
      checkedAt = at;
      const now = version.get()!;
      if (now.c !== seen.c || now.d !== seen.d) {
        seen = now;
        cache.clear();
        return undefined;
      }
    }
    return cache.get(token);
  };

  return {
    create(name, maxClass, limits = DEFAULT_TOKEN_LIMITS) {
      if (liveByName.get(name)) {
        throw new AppError(ProxyErrorCode.TOKEN_NAME_TAKEN, `a token named "${name}" exists; revoke it first or pick another name`, {
          details: { name },
        });
      }
      const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
      const row: TokenRow = {
        token_hash: hashToken(token),
        name,
        prefix: token.slice(0, TOKEN_PREFIX.length + 6),
        max_class: maxClass,
        created_at: Math.floor(clock.now()),
        revoked_at: null,
        last_used_at: null,
        ...rowLimits(limits),
      };
      insert.run(row.token_hash, row.name, row.prefix, row.max_class, row.created_at, ...limitColumns(limits));
      return { token, view: toView(row) };
    },
    list: () => all.all().map(toView),
    stored(name) {
      const row = liveByName.get(name);
      if (!row) throw new AppError(ProxyErrorCode.UNKNOWN_TOKEN, `no live token named "${name}"`, { details: { name } });
      return { maxClass: row.max_class, limits: limitsOf(row) };
    },
    update(name, maxClass, limits) {
      const row = liveByName.get(name);
      if (!row) throw new AppError(ProxyErrorCode.UNKNOWN_TOKEN, `no live token named "${name}"`, { details: { name } });
      update.run(maxClass, ...limitColumns(limits), row.token_hash);
      // In force from the next request, not after the next version check.
      cache.clear();
      return toView({ ...row, max_class: maxClass, ...rowLimits(limits) });
    },
    revoke(name) {
      const row = liveByName.get(name);
      if (!row) throw new AppError(ProxyErrorCode.UNKNOWN_TOKEN, `no live token named "${name}"`, { details: { name } });
      const at = Math.floor(clock.now());
      revoke.run(at, row.token_hash);
      // Refused from the next request on, not after the next version check.
      cache.clear();
      return toView({ ...row, revoked_at: at });
    },
    check(token) {
      const hit = cached(token);
      if (hit) return hit;
      const tokenHash = hashToken(token);
      const row = byHash.get(tokenHash);
      const result: TokenCheck = !row
        ? { ok: false, reason: 'unknown' }
        : row.revoked_at !== null
          ? { ok: false, reason: 'revoked', name: row.name }
          : { ok: true, id: tokenHash, name: row.name, maxClass: row.max_class, limits: limitsOf(row) };
      // Bounded: random unknown tokens must not grow it without limit.
      if (cache.size >= TOKEN_CACHE_MAX) cache.clear();
      cache.set(token, result);
      return result;
    },
    touch(names, at) {
      const list = [...names];
      if (list.length > 0) touchAll(list, Math.floor(at));
    },
  };
}

function rowLimits(l: TokenLimits): Pick<TokenRow, 'allowed_models' | 'rpm' | 'tpm' | 'budget_usd' | 'budget_action' | 'expires_at'> {
  const [allowed_models, rpm, tpm, budget_usd, budget_action, expires_at] = limitColumns(l);
  return { allowed_models, rpm, tpm, budget_usd, budget_action: budget_action as TokenRow['budget_action'], expires_at };
}
