import { describe, expect, it } from 'vitest';
import { ClientUsageRowSchema, TokenViewSchema, type ClientUsageRow, type Estimate, type TokenLimitField, type TokenLimits, type TokenView } from '../../../src-preload/contract/index.js';
import { clientRowView, parseClientsPrefs, sortClients, DEFAULT_CLIENTS_PREFS } from '../../../src-renderer/src/features/proxy/client-usage-view.js';
import { EMPTY_LIMITS_FORM, formFromLimits, limitsRequest, modelChoices } from '../../../src-renderer/src/features/proxy/token-limits-form.js';

// The Clients panel and the token limits form (issue #32 item 1): figures in
// words (unknown never 0), refusals by reason apart from server failures,
// budget use, sort with unknown last, persisted choices read back safely; the
// form sends only what changed and never a field config owns.

const NO_LIMITS: TokenLimits = { models: [], rpm: null, tpm: null, budgetUsd: null, budgetAction: 'refuse', expiresAt: null };
const token = (p: Partial<TokenView> = {}): TokenView =>
  TokenViewSchema.parse({ name: 'chat-app', maxClass: 'interactive', prefix: 'gcp_abcdef', createdAt: 1, revokedAt: null, lastUsedAt: null, limits: NO_LIMITS, configFields: [], budget: null, ...p });
const usd = (value: number | null, reason: string | null = null): Estimate => ({ value, unit: 'USD', estimate: true, unavailableReason: reason, basis: 'GPU time shared' });
const row = (p: Partial<ClientUsageRow> = {}): ClientUsageRow =>
  ClientUsageRowSchema.parse({
    client: 'chat-app', kind: 'token', token: token(), requests: 10, answered: 8, tokensIn: 100, tokensOut: 200, requestsWithoutTokens: 0,
    cost: usd(0.5), gpuSeconds: 3, errors: [], lastSeenAt: 5, ...p,
  });

describe('a client row in words', () => {
  it('unknown tokens and cost are "—" and "unknown", never 0', () => {
    const v = clientRowView(row({ tokensIn: null, tokensOut: null, cost: usd(null, 'a host that served these requests has no price configured') }));
    expect(v.tokensText).toBe('— / —');
    expect(v.tokensTotal).toBeNull();
    expect(v.costText).toBe('unknown');
    expect(v.costTitle).toContain('no price');
    expect(clientRowView(row({ cost: usd(0.0042) })).costText).toBe('$0.0042 est.');
  });

  it('names refusals by reason, refusals before server failures, and counts each side', () => {
    const v = clientRowView(
      row({
        errors: [
          { code: 'upstream_reset', status: 502, requests: 4 },
          { code: 'rate_limit_rpm', status: 429, requests: 3 },
          { code: 'model_not_allowed', status: 403, requests: 2 },
          { code: 'model_sleeping', status: 503, requests: 1 },
          { code: 'some_new_code', status: 400, requests: 1 },
        ],
      }),
    );
    expect(v.refused).toBe(7);
    expect(v.failed).toBe(4);
    expect(v.reasons.map((r) => r.text)).toEqual(['rate limit (requests/min)', 'model not allowed', 'model asleep', 'some new code', 'server cut the answer']);
  });

  it('budget this month: spent of budget with its share; a budget whose spend is unknown says so; no budget: none', () => {
    const limits = { ...NO_LIMITS, budgetUsd: 20 };
    const spent = clientRowView(row({ token: token({ limits, budget: { month: '2026-12', spentUsd: 16, pctUsed: 80, crossed: [50, 80], computedAt: 1 } }) }));
    expect(spent.budget).toEqual({ text: '$16.00 of $20.00 (80 %)', pct: 80 });
    expect(clientRowView(row({ token: token({ limits, budget: null }) })).budget).toEqual({ text: 'spend unknown of $20.00', pct: null });
    expect(clientRowView(row()).budget).toBeNull();
  });

  it('lists the limits in force and whether config sets some', () => {
    const v = clientRowView(row({ token: token({ limits: { models: ['qwen'], rpm: 10, tpm: 5000, budgetUsd: 20, budgetAction: 'warn', expiresAt: Date.UTC(2027, 0, 31, 23, 59, 59, 999) }, configFields: ['rpm'] }) }));
    expect(v.limits).toEqual(['models qwen', '10 req/min', '5,000 tok/min', 'budget $20.00/month (warn at 100 %)', 'expires 2027-01-31']);
    expect(v.configOwned).toBe(true);
    expect(clientRowView(row({ kind: 'anonymous', client: 'anonymous', token: null })).limits).toEqual([]);
  });
});

describe('sorting and the kept choices', () => {
  const views = [row({ client: 'a', cost: usd(null, 'x') }), row({ client: 'b', cost: usd(2) }), row({ client: 'c', cost: usd(1) })].map(clientRowView);
  it('unknown figures sort last in either direction', () => {
    expect(sortClients(views, 'cost', true).map((v) => v.client)).toEqual(['b', 'c', 'a']);
    expect(sortClients(views, 'cost', false).map((v) => v.client)).toEqual(['c', 'b', 'a']);
    expect(sortClients(views, 'client', true).map((v) => v.client)).toEqual(['c', 'b', 'a']);
  });
  it('reads kept choices through the schema; a damaged entry falls back to the defaults field by field', () => {
    expect(parseClientsPrefs(JSON.stringify({ window: '7d', sort: 'cost', descending: false }))).toEqual({ window: '7d', sort: 'cost', descending: false });
    expect(parseClientsPrefs(JSON.stringify({ window: 'forever', sort: 'cost' }))).toEqual({ ...DEFAULT_CLIENTS_PREFS, sort: 'cost' });
    expect(parseClientsPrefs('{not json')).toEqual(DEFAULT_CLIENTS_PREFS);
    expect(parseClientsPrefs(null)).toEqual(DEFAULT_CLIENTS_PREFS);
  });
});

describe('the limits form', () => {
  it('creating sends the filled fields only; the expiry is the end of that day (UTC)', () => {
    expect(limitsRequest(EMPTY_LIMITS_FORM, null, [])).toEqual({ ok: true, patch: {} });
    const r = limitsRequest({ ...EMPTY_LIMITS_FORM, models: ['qwen'], rpm: '10', budgetUsd: '$1,500', budgetAction: 'warn', expires: '2027-01-31' }, null, []);
    expect(r).toEqual({ ok: true, patch: { models: ['qwen'], rpm: 10, budgetUsd: 1500, budgetAction: 'warn', expiresAt: Date.UTC(2027, 0, 31, 23, 59, 59, 999) } });
  });

  it('saving sends what changed (null clears), never a field config owns', () => {
    const before = { models: ['qwen'], rpm: 10, tpm: null, budgetUsd: 20, budgetAction: 'refuse' as const, expiresAt: null };
    const configFields: TokenLimitField[] = ['budgetUsd'];
    const state = { ...formFromLimits(before), rpm: '', tpm: '9000', budgetUsd: '999', models: ['qwen'] };
    expect(limitsRequest(state, before, configFields)).toEqual({ ok: true, patch: { rpm: null, tpm: 9000 } });
    expect(limitsRequest(formFromLimits(before), before, [])).toEqual({ ok: true, patch: {} });
    expect(limitsRequest({ ...formFromLimits(before), models: [] }, before, [])).toEqual({ ok: true, patch: { models: [] } });
  });

  it('names what it refuses before asking the core', () => {
    expect(limitsRequest({ ...EMPTY_LIMITS_FORM, rpm: '0' }, null, [])).toEqual({ ok: false, problem: 'requests/min must be at least 1 (leave it empty for no limit)' });
    expect(limitsRequest({ ...EMPTY_LIMITS_FORM, tpm: '2.5' }, null, [])).toEqual({ ok: false, problem: 'tokens/min must be a whole number' });
    expect(limitsRequest({ ...EMPTY_LIMITS_FORM, budgetUsd: '-3' }, null, [])).toMatchObject({ ok: false, problem: expect.stringContaining('more than 0') });
    expect(limitsRequest({ ...EMPTY_LIMITS_FORM, expires: '2027-02-30' }, null, [])).toEqual({ ok: false, problem: 'the expiry must be a date (YYYY-MM-DD)' });
  });

  it('offers every model, alias and group the proxy lists, and keeps a name the token already has', () => {
    const routes = [
      { name: 'Qwen3-8B', kind: 'model' as const, chain: ['Qwen3-8B'], replicas: ['h1/qwen'], aliases: ['qwen'] },
      { name: 'chat', kind: 'group' as const, chain: ['Qwen3-8B'], replicas: ['h1/qwen'], aliases: [] },
    ];
    expect(modelChoices(routes, ['retired-model'])).toEqual(['chat', 'qwen', 'Qwen3-8B', 'retired-model']);
    expect(modelChoices(undefined, [])).toEqual([]);
  });
});

// The node typecheck has no JSX: the component and React are loaded by specifiers it does not resolve (as alert-list.test.ts).
const COMPONENT = '../../../src-renderer/src/features/proxy/TokenLimitsForm.js';
const REACT = 'react';
const REACT_DOM_SERVER = 'react-dom/server';
type Props = { idPrefix: string; state: typeof EMPTY_LIMITS_FORM; onChange(): void; choices: string[]; configFields: TokenLimitField[]; tokenName: string };
const { TokenLimitsFields } = (await import(COMPONENT)) as { TokenLimitsFields: (p: Props) => unknown };
const { createElement } = (await import(REACT)) as { createElement(c: (p: Props) => unknown, p: Props): unknown };
const { renderToStaticMarkup } = (await import(REACT_DOM_SERVER)) as { renderToStaticMarkup(el: unknown): string };

describe('the limits fields', () => {
  it('a field config owns is read-only and says where to change it; the others are editable and labelled', () => {
    const html = renderToStaticMarkup(createElement(TokenLimitsFields, { idPrefix: 'e', state: { ...EMPTY_LIMITS_FORM, rpm: '10' }, onChange: () => undefined, choices: ['qwen', 'gemma'], configFields: ['rpm'], tokenName: 'chat-app' }));
    expect(html).toMatch(/<input id="e-rpm"[^>]*disabled=""[^>]*aria-describedby="e-rpm-config"/);
    expect(html).toContain('set by config (proxy.clients.chat-app): change it there');
    expect(html).not.toMatch(/<input id="e-tpm"[^>]*disabled/);
    expect(html).toContain('<label for="e-tpm">Tokens/min</label>');
    expect(html).toContain('data-testid="e-model-gemma"');
  });
});
