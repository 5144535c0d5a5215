// Bearer tokens of local clients: a name, a highest class, and a SHA-256 of
// the token (the token itself is shown once, at creation, and never stored).
// Works on the database directly, so the CLI can issue tokens with or without
// a running console. Checks are answered from a small in-memory map (hash →
// entry): a revocation through this repository empties it at once; a change
// by another process (the CLI) or another writer is noticed by a cheap version
// query run at most every VERSION_CHECK_MS, not on every request (that query
// takes SQLite's read locks and cost more than the rest of the check).
import { hash, randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { TokenView } from '../../../src-preload/contract/index.js';
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
}

export type TokenCheck =
  /** `id`: the token's own identity (its hash), unlike `name`, which a new token may take after a revocation. */
  | { ok: true; id: string; name: string; maxClass: TrafficClass }
  | { ok: false; reason: 'unknown' | 'revoked'; name?: string };

export interface TokenRepository {
  create(name: string, maxClass: TrafficClass): { token: string; view: TokenView };
  list(): TokenView[];
  revoke(name: string): TokenView;
  check(token: string): TokenCheck;
  /** Stamps last use for the named clients (called from the batched request writer). */
  touch(names: Iterable<string>, at: number): void;
}

export function hashToken(token: string): string {
  // One-shot: no Hash object per request.
  return hash('sha256', token, 'hex');
}

function toView(row: TokenRow): TokenView {
  return {
    name: row.name,
    maxClass: row.max_class,
    prefix: row.prefix,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
  };
}

export function createTokenRepository(db: Database.Database, clock: Clock): TokenRepository {
  const insert = db.prepare(
    'INSERT INTO client_tokens (token_hash, name, prefix, max_class, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const byHash = db.prepare<[string], Pick<TokenRow, 'name' | 'max_class' | 'revoked_at'>>(
    'SELECT name, max_class, revoked_at FROM client_tokens WHERE token_hash = ?',
  );
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
    create(name, maxClass) {
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
      };
      insert.run(row.token_hash, row.name, row.prefix, row.max_class, row.created_at);
      return { token, view: toView(row) };
    },
    list: () => all.all().map(toView),
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
          : { ok: true, id: tokenHash, name: row.name, maxClass: row.max_class };
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
