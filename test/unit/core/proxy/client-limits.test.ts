import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { AppError, FakeClock } from '../../../../src-main/core/base/index.js';
import { ConfigSchema, type Config } from '../../../../src-main/core/config/index.js';
import { ClientLimits, ModelRegistry, TokenBucket, applyPatch, estimateTokens, mergeLimits } from '../../../../src-main/core/proxy/index.js';
import { limitsCatalog } from '../../../../src-main/core/proxy/client-policy.js';
import { Exchange } from '../../../../src-main/core/proxy/exchange.js';
import { DEFAULT_TOKEN_LIMITS, TokenLimitErrorCode, type TokenLimits } from '../../../../src-preload/contract/index.js';

// Per-client limits without sockets: buckets on a hand-moved monotonic clock, the allow-list over a real
// registry (aliases, groups), expiry, the budget gate, and the checks a change must pass before it is stored.

function config(clients: Record<string, unknown> = {}, priced = true): Config {
  return ConfigSchema.parse({
    hosts: [
      {
        label: 'a',
        ssh: { host: '127.0.0.1', user: 'x', agent: true },
        ...(priced ? { pricePerHourUsd: 2 } : {}),
        services: [
          { id: 'q', kind: 'vllm', remotePort: 8000, model: 'Qwen/Qwen3-8B', aliases: ['qwen'] },
          { id: 'g', kind: 'vllm', remotePort: 8001, model: 'google/gemma-3', aliases: ['gemma'] },
        ],
      },
    ],
    proxy: { groups: { fast: ['qwen', 'gemma'] }, clients },
  });
}

function world(clients: Record<string, unknown> = {}, spent: number | null = null) {
  const cfg = config(clients);
  let mono = 0;
  const clock = new FakeClock(Date.parse('2026-12-05T12:00:00Z'));
  const env = { clock, mono: () => mono, settings: cfg.proxy };
  const limits = new ClientLimits(env, { spentUsd: () => spent });
  const registry = ModelRegistry.fromConfig(cfg);
  const request = (name: string, stored: TokenLimits, model: string, body: Record<string, unknown> = {}) => {
    const ex = new Exchange({} as ServerResponse, mono, clock.now());
    ex.client = name;
    ex.clientId = `id-${name}`;
    const entered = limits.enter(ex, stored);
    if (!entered.ok) return { ex, result: entered };
    const json = { model, ...body };
    return { ex, result: limits.admit(ex, registry.lookup(model)!, { raw: Buffer.from(JSON.stringify(json)), json, model }, registry) };
  };
  return { limits, request, clock, advance: (ms: number) => (mono += ms) };
}

const L = (l: Partial<TokenLimits>): TokenLimits => ({ ...DEFAULT_TOKEN_LIMITS, ...l });
const code = (r: { ok: boolean; error?: { code: string } | null }) => (r.ok ? 'ok' : r.error!.code);

describe('TokenBucket', () => {
  it('holds a minute, refills continuously, and a wait rounded up to seconds is enough', () => {
    const b = new TokenBucket(10, 0);
    for (let i = 0; i < 10; i++) {
      expect(b.waitMs(1, 0)).toBe(0);
      b.take(1, 0);
    }
    expect(b.waitMs(1, 0)).toBeCloseTo(6_000);
    expect(b.waitMs(1, 5_999)).toBeGreaterThan(0);
    expect(b.waitMs(1, Math.ceil(6_000 / 1000) * 1000)).toBe(0);
    // Never above a minute's allowance, however long it sat.
    expect(b.available(10_000_000)).toBe(10);
  });

  it('an amount over the allowance waits for a full bucket; a settled overrun is a debt paid by waiting', () => {
    const b = new TokenBucket(100, 0);
    expect(b.waitMs(500, 0)).toBe(0);
    b.take(500, 0);
    expect(b.available(0)).toBe(-400);
    expect(b.waitMs(1, 0)).toBeCloseTo(((401 * 60_000) / 100), 5);
    b.give(300, 0);
    expect(b.available(0)).toBe(-100);
  });
});

describe('ClientLimits', () => {
  it("a 10 rpm token's 11th request is refused 429 with the exact wait; waiting Retry-After admits it", () => {
    const w = world();
    const stored = L({ rpm: 10 });
    for (let i = 0; i < 10; i++) expect(code(w.request('app', stored, 'qwen').result)).toBe('ok');
    const refused = w.request('app', stored, 'qwen').result;
    expect(code(refused)).toBe('rate_limit_rpm');
    const err = (refused as { error: { retryAfterS: number; extra: Record<string, unknown> } }).error;
    expect(err.retryAfterS).toBe(6);
    expect(err.extra).toMatchObject({ limit: 'rpm', limit_value: 10, token: 'app' });
    w.advance(Math.ceil(err.retryAfterS) * 1000);
    expect(code(w.request('app', stored, 'qwen').result)).toBe('ok');
    // Another token has its own bucket.
    expect(code(w.request('other', stored, 'qwen').result)).toBe('ok');
  });

  it('tpm reserves prompt/4 + max_tokens and settles with the usage reported (a refusal refunds)', () => {
    const w = world();
    const stored = L({ tpm: 1_000 });
    const body = { max_tokens: 400, messages: [{ role: 'user', content: 'x'.repeat(380) }] };
    const first = w.request('app', stored, 'qwen', body);
    const estimate = estimateTokens({ raw: Buffer.from(JSON.stringify({ model: 'qwen', ...body })), json: { model: 'qwen', ...body }, model: 'qwen' });
    expect(estimate).toBeGreaterThan(500);
    expect(code(first.result)).toBe('ok');
    // The second would overrun what is left until the first settles.
    expect(code(w.request('app', stored, 'qwen', body).result)).toBe('rate_limit_tpm');
    first.ex.status = 200;
    first.ex.tokensIn = 100;
    first.ex.tokensOut = 20;
    w.limits.settle(first.ex);
    expect(code(w.request('app', stored, 'qwen', body).result)).toBe('ok');
  });

  it('a reservation settles into the same bucket when the repository hands a fresh copy of unchanged limits', () => {
    const w = world();
    const body = { max_tokens: 400, messages: [{ role: 'user', content: 'x'.repeat(380) }] };
    const first = w.request('app', L({ tpm: 1_000 }), 'qwen', body);
    expect(code(first.result)).toBe('ok');
    first.ex.status = 200;
    first.ex.tokensIn = 100;
    first.ex.tokensOut = 20;
    // The token check cache refilled meanwhile (a request-log flush): equal limits, a new object.
    expect(code(w.request('app', L({ tpm: 1_000 }), 'qwen', body).result)).toBe('rate_limit_tpm');
    w.limits.settle(first.ex);
    expect(code(w.request('app', L({ tpm: 1_000 }), 'qwen', body).result)).toBe('ok');
  });

  it('allow-list: a listed alias reaches its model by any name; a listed group passes by its name only', () => {
    const w = world();
    const qwenOnly = L({ models: ['qwen'] });
    expect(code(w.request('a', qwenOnly, 'qwen').result)).toBe('ok');
    expect(code(w.request('a', qwenOnly, 'Qwen/Qwen3-8B').result)).toBe('ok');
    const refused = w.request('a', qwenOnly, 'gemma').result;
    expect(code(refused)).toBe('model_not_allowed');
    expect((refused as { error: { message: string } }).error.message).toBe('the token "a" may not use "gemma"; it may use: qwen');
    // A group of qwen and gemma reaches gemma: not through a qwen-only list.
    expect(code(w.request('a', qwenOnly, 'fast').result)).toBe('model_not_allowed');
    const groupOnly = L({ models: ['fast'] });
    expect(code(w.request('b', groupOnly, 'fast').result)).toBe('ok');
    expect(code(w.request('b', groupOnly, 'gemma').result)).toBe('model_not_allowed');
    expect(code(w.request('c', L({ models: ['qwen', 'gemma'] }), 'fast').result)).toBe('ok');
  });

  it('an expired token is refused 401 naming the expiry; config expiry wins over the stored one', () => {
    const w = world({ cfg: { expires: '2026-12-01' } });
    expect(code(w.request('app', L({ expiresAt: w.clock.now() - 1 }), 'qwen').result)).toBe('token_expired');
    expect(code(w.request('app', L({ expiresAt: w.clock.now() + 60_000 }), 'qwen').result)).toBe('ok');
    const byConfig = w.request('cfg', L({ expiresAt: null }), 'qwen').result;
    expect(code(byConfig)).toBe('token_expired');
    expect((byConfig as { error: { message: string } }).error.message).toContain('2026-12-01T00:00:00.000Z');
  });

  it('budget: refused 402 at 100 % with refuse, passed with warn, passed while the spend is unknown', () => {
    expect(code(world({}, 10).request('a', L({ budgetUsd: 10 }), 'qwen').result)).toBe('budget_exhausted');
    expect(code(world({}, 9.99).request('a', L({ budgetUsd: 10 }), 'qwen').result)).toBe('ok');
    expect(code(world({}, 50).request('a', L({ budgetUsd: 10, budgetAction: 'warn' }), 'qwen').result)).toBe('ok');
    expect(code(world({}, null).request('a', L({ budgetUsd: 10 }), 'qwen').result)).toBe('ok');
  });

  it('a token without limits costs no state and passes', () => {
    const w = world();
    expect(code(w.request('a', DEFAULT_TOKEN_LIMITS, 'gemma').result)).toBe('ok');
  });
});

describe('changing limits (client-policy)', () => {
  const now = Date.parse('2026-12-05T12:00:00Z');
  const refusal = (fn: () => unknown): AppError => {
    try {
      fn();
    } catch (err) {
      return err as AppError;
    }
    throw new Error('not refused');
  };

  it('refuses unknown models, an unpriced budget, a past expiry and config-owned fields, naming them', () => {
    const cfg = config({ ci: { rpm: 5 } });
    const cat = limitsCatalog(cfg);
    expect(refusal(() => applyPatch('x', DEFAULT_TOKEN_LIMITS, { models: ['qwen', 'llama'] }, undefined, cat, now))).toMatchObject({
      code: TokenLimitErrorCode.UNKNOWN_MODELS,
      details: { unknown: ['llama'] },
    });
    expect(refusal(() => applyPatch('x', DEFAULT_TOKEN_LIMITS, { expiresAt: now }, undefined, cat, now)).code).toBe(TokenLimitErrorCode.EXPIRY_PAST);
    expect(refusal(() => applyPatch('ci', DEFAULT_TOKEN_LIMITS, { rpm: 50 }, cfg.proxy.clients['ci'], cat, now))).toMatchObject({
      code: TokenLimitErrorCode.FIELD_FROM_CONFIG,
      details: { fields: ['rpm'] },
    });
    const unpriced = limitsCatalog(config({}, false));
    expect(refusal(() => applyPatch('x', DEFAULT_TOKEN_LIMITS, { budgetUsd: 10 }, undefined, unpriced, now)).code).toBe(TokenLimitErrorCode.BUDGET_UNPRICED);
    expect(applyPatch('x', DEFAULT_TOKEN_LIMITS, { budgetUsd: 10, models: ['gemma'], rpm: 3 }, undefined, cat, now)).toEqual(L({ budgetUsd: 10, models: ['gemma'], rpm: 3 }));
  });

  it('config fields win over stored ones and are named', () => {
    const cfg = config({ ci: { rpm: 5, models: ['fast'] } });
    expect(mergeLimits(L({ rpm: 100, tpm: 7 }), cfg.proxy.clients['ci'])).toEqual({ limits: L({ rpm: 5, tpm: 7, models: ['fast'] }), configFields: ['models', 'rpm'] });
  });

  it('config: unknown models and an unpriced budget are CONFIG issues naming the field', () => {
    const bad = ConfigSchema.safeParse({
      hosts: [{ label: 'a', ssh: { host: '127.0.0.1', user: 'x', agent: true }, services: [{ id: 'q', kind: 'vllm', remotePort: 8000, model: 'm' }] }],
      proxy: { clients: { ci: { models: ['nope'], budgetUsd: 5 }, zero: { rpm: 0 } } },
    });
    expect(bad.success).toBe(false);
    const issues = bad.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^proxy\.clients\.ci\.models\.0: "nope" is neither/),
        expect.stringMatching(/^proxy\.clients\.ci\.budgetUsd: no host serving these models has pricePerHourUsd/),
        expect.stringMatching(/^proxy\.clients\.zero\.rpm: rpm must be at least 1/),
      ]),
    );
  });
});
