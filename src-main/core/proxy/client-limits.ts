// Per-client limits on the request path, cheap enough for every request: a
// token's limits (config merged over the stored ones) are compiled once per
// token and config, and each request then costs a few map lookups and bucket
// arithmetic. Order of refusals: expired (401, at auth), model not allowed
// (403), budget spent (402), requests a minute, tokens a minute (429 with a
// calibrated Retry-After). Tokens a minute reserve an estimate at admission
// (prompt bytes ÷ 4 + max_tokens) and settle with the usage the answer reports.
import type { TokenLimits } from '../../../src-preload/contract/index.js';
import type { ClientsConfig } from '../config/index.js';
import { mergeLimits } from './client-policy.js';
import { wire, type Exchange } from './exchange.js';
import type { ModelPlacement, ModelRegistry } from './registry.js';
import type { JsonBody } from './stages/body.js';
import { fail, PASS, type StageEnv, type StageResult } from './stages/stage.js';
import { TokenBucket } from './token-buckets.js';

const NO_RETRY = Object.freeze({ 'x-should-retry': 'false' });
/** Bytes per token for the admission estimate: rough for English, over for code and CJK; settled after the answer. */
export const BYTES_PER_TOKEN_ESTIMATE = 4;
const GRANTS_MAX = 4_096;

/** The month's estimated spend per client (client-budget.ts); null: unknown (unpriced host, not computed yet). */
export interface ClientSpend {
  spentUsd(client: string): number | null;
}

interface Grant {
  readonly name: string;
  readonly limits: TokenLimits;
  readonly stored: TokenLimits;
  readonly clients: ClientsConfig;
  /** Lower-cased allowed names (models, aliases, groups) and the models they reach, for `registry`. */
  allowed: { registry: ModelRegistry; names: Set<string>; models: Set<string> } | null;
  rpm: TokenBucket | null;
  tpm: TokenBucket | null;
}

export class ClientLimits {
  private readonly grants = new Map<string, Grant>();
  private readonly reserved = new WeakMap<Exchange, { bucket: TokenBucket; tokens: number }>();

  constructor(
    private readonly env: Pick<StageEnv, 'clock' | 'mono' | 'settings'>,
    private readonly spend: ClientSpend | null,
  ) {}

  /** At auth: compiles the client's limits (once per token and config) and refuses an expired token. */
  enter(ex: Exchange, stored: TokenLimits | undefined): StageResult<void> {
    if (stored === undefined) return PASS;
    const g = this.grantOf(ex.clientId, ex.client, stored);
    const expiresAt = g.limits.expiresAt;
    if (expiresAt !== null && this.env.clock.now() >= expiresAt) {
      return fail(wire(401, 'token_expired', `the token "${g.name}" expired at ${new Date(expiresAt).toISOString()}`, { headers: NO_RETRY, extra: { expired_at: new Date(expiresAt).toISOString() } }));
    }
    return PASS;
  }

  /** Once the model is known: allow-list, budget, then the rate buckets (taken only when all pass). */
  admit(ex: Exchange, placement: ModelPlacement, body: JsonBody, registry: ModelRegistry): StageResult<void> {
    const g = this.grants.get(ex.clientId);
    if (g === undefined) return PASS;
    const l = g.limits;
    if (l.models.length > 0 && !this.allows(g, placement, registry)) {
      return fail(
        wire(403, 'model_not_allowed', `the token "${g.name}" may not use "${placement.name}"; it may use: ${l.models.join(', ')}`, {
          headers: NO_RETRY,
          param: 'model',
          extra: { model: placement.name, token: g.name, allowed: l.models },
        }),
      );
    }
    if (l.budgetUsd !== null && l.budgetAction === 'refuse') {
      const spent = this.spend?.spentUsd(g.name) ?? null;
      if (spent !== null && spent >= l.budgetUsd) {
        return fail(
          wire(402, 'budget_exhausted', `the token "${g.name}" has spent an estimated $${spent.toFixed(2)} of its $${l.budgetUsd.toFixed(2)} monthly budget; it is refused until the next UTC month`, {
            headers: NO_RETRY,
            extra: { token: g.name, budget_usd: l.budgetUsd, spent_usd: Math.round(spent * 100) / 100 },
          }),
        );
      }
    }
    if (g.rpm === null && g.tpm === null) return PASS;
    return this.takeRate(ex, g, body);
  }

  /** After the answer: the tokens-a-minute reservation settled with the usage reported (refunded if nothing ran). */
  settle(ex: Exchange): void {
    const r = this.reserved.get(ex);
    if (r === undefined) return;
    this.reserved.delete(ex);
    const known = ex.tokensIn !== null || ex.tokensOut !== null;
    // Unknown usage: a refusal or failure before the upstream used nothing; an answer without usage keeps the estimate.
    const used = known ? (ex.tokensIn ?? 0) + (ex.tokensOut ?? 0) : ex.status >= 400 ? 0 : r.tokens;
    r.bucket.give(r.tokens - used, this.env.mono());
  }

  private takeRate(ex: Exchange, g: Grant, body: JsonBody): StageResult<void> {
    const now = this.env.mono();
    const rpmWait = g.rpm === null ? 0 : g.rpm.waitMs(1, now);
    if (rpmWait > 0) return fail(rateRefusal('rpm', g.name, g.rpm!.perMinute, rpmWait));
    const estimate = g.tpm === null ? 0 : estimateTokens(body);
    const tpmWait = g.tpm === null ? 0 : g.tpm.waitMs(estimate, now);
    if (tpmWait > 0) return fail(rateRefusal('tpm', g.name, g.tpm!.perMinute, tpmWait, estimate));
    g.rpm?.take(1, now);
    if (g.tpm !== null) {
      g.tpm.take(estimate, now);
      this.reserved.set(ex, { bucket: g.tpm, tokens: estimate });
    }
    return PASS;
  }

  private grantOf(id: string, name: string, stored: TokenLimits): Grant {
    const clients = this.env.settings.clients;
    const old = this.grants.get(id);
    if (old !== undefined && old.stored === stored && old.clients === clients) return old;
    const { limits } = mergeLimits(stored, clients[name]);
    const now = this.env.mono();
    // The stored object is new each time the repository refills its cache (after every request-log flush):
    // an unchanged limit keeps its bucket (and the reservations settling into it); a changed one keeps what
    // was used (the new bucket starts no fuller than the old one was).
    const bucket = (perMinute: number | null, prev: TokenBucket | null | undefined): TokenBucket | null =>
      perMinute === null ? null : prev && prev.perMinute === perMinute ? prev : new TokenBucket(perMinute, now, prev?.available(now));
    const sameModels = old !== undefined && old.limits.models.join('\n') === limits.models.join('\n');
    const g: Grant = { name, limits, stored, clients, allowed: sameModels ? old.allowed : null, rpm: bucket(limits.rpm, old?.rpm), tpm: bucket(limits.tpm, old?.tpm) };
    if (old === undefined && this.grants.size >= GRANTS_MAX) this.grants.clear();
    this.grants.set(id, g);
    return g;
  }

  /**
   * A name on the list is allowed (a group or alias, with whatever it leads to); so is any name whose models
   * are all reached through listed models or aliases (a model's other alias). A listed group does not open
   * its members by their own names: they are allowed through it.
   */
  private allows(g: Grant, placement: ModelPlacement, registry: ModelRegistry): boolean {
    let a = g.allowed;
    if (a === null || a.registry !== registry) {
      const groups = new Set(Object.keys(this.env.settings.groups).map((k) => k.toLowerCase()));
      const names = new Set(g.limits.models.map((m) => m.toLowerCase()));
      const models = new Set<string>();
      for (const n of names) if (!groups.has(n)) for (const m of registry.lookup(n)?.chain ?? []) models.add(m.toLowerCase());
      a = g.allowed = { registry, names, models };
    }
    return a.names.has(placement.name.toLowerCase()) || placement.chain.every((m) => a.models.has(m.toLowerCase()));
  }
}

/** Prompt bytes ÷ 4 plus the completion asked for (max_tokens or max_completion_tokens); at least 1. */
export function estimateTokens(body: JsonBody): number {
  const json = body.json;
  const max = typeof json['max_tokens'] === 'number' ? json['max_tokens'] : typeof json['max_completion_tokens'] === 'number' ? json['max_completion_tokens'] : 0;
  return Math.max(1, Math.ceil(body.raw.length / BYTES_PER_TOKEN_ESTIMATE) + (Number.isFinite(max) && max > 0 ? Math.floor(max) : 0));
}

function rateRefusal(limit: 'rpm' | 'tpm', token: string, perMinute: number, waitMs: number, estimate?: number) {
  const what = limit === 'rpm' ? 'requests' : 'tokens';
  const retryS = Math.max(1, Math.ceil(waitMs / 1000));
  return wire(429, limit === 'rpm' ? 'rate_limit_rpm' : 'rate_limit_tpm', `the token "${token}" is limited to ${perMinute} ${what} a minute${estimate !== undefined ? ` (this request reserves about ${estimate})` : ''}; retry in ${retryS} s`, {
    // Exact seconds: Retry-After is their ceiling and retry-after-ms the milliseconds, both long enough.
    retryAfterS: Math.ceil(waitMs) / 1000,
    headers: { [`x-ratelimit-limit-${what}`]: String(perMinute) },
    extra: { limit, limit_value: perMinute, token },
  });
}
