import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { ClientUsageQuery, windowBounds } from '../../../../src-main/core/proxy/client-usage.js';
import { RequestLog, createTokenRepository, requestWindows, type RequestRecord } from '../../../../src-main/core/proxy/index.js';
import { openStore, type Store } from '../../../../src-main/core/store/index.js';

// The Clients panel's figures (issue #32 item 1): per client over a window,
// requests, tokens, the cost by cost.summary's byClient split (concurrent time
// shared; a host without a price makes the cost unknown, never $0), errors by
// code, last seen; tokens without traffic listed at zero, revoked ones only
// with traffic, anonymous loopback when it is on.

// 2026-12-15T12:00:00Z
const NOW = Date.UTC(2026, 11, 15, 12);
const H = 3_600_000;
const D = 24 * H;

const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

let seq = 0;
function row(p: Partial<RequestRecord>): RequestRecord {
  seq += 1;
  return {
    id: `req-${seq}`, ts: NOW - 60_000, client: 'chat-app', class: 'interactive', endpoint: '/v1/chat/completions', model: 'qwen', upstream: 'h1/qwen',
    stream: false, status: 200, errorCode: null, queueMs: 0, ttftMs: null, totalMs: 1_000, tokensIn: 10, tokensOut: 20, bytesIn: 100, bytesOut: 200, replayed: false,
    ...p,
  };
}

function world(options: { anonymous?: boolean; prices?: Record<string, number> } = {}) {
  const clock = new FakeClock(NOW);
  const store = openStore({ file: ':memory:', clock });
  stores.push(store);
  const tokens = createTokenRepository(store.db, clock);
  const log = new RequestLog({ db: store.db, clock, logger: silentLogger });
  const prices = options.prices ?? { h1: 36 };
  const query = new ClientUsageQuery({
    db: store.db,
    windows: requestWindows(store.db),
    tokens: () => tokens.list(),
    anonymousEnabled: () => options.anonymous ?? false,
    priceOf: (host) => prices[host] ?? null,
    flush: () => log.flush(),
  });
  return { tokens, log, usage: (w: Parameters<ClientUsageQuery['usage']>[0], at = NOW) => query.usage(w, at) };
}

const byName = (u: ReturnType<ClientUsageQuery['usage']>) => Object.fromEntries(u.clients.map((c) => [c.client, c]));

describe('client usage windows', () => {
  it('counts only the rows of the chosen window; "month" starts at the UTC month', () => {
    const w = world();
    w.tokens.create('chat-app', 'interactive');
    for (const ago of [30 * 60_000, 2 * H, 3 * D, 10 * D, 20 * D]) w.log.add(row({ ts: NOW - ago }));
    const counts = Object.fromEntries((['1h', '24h', '7d', '30d', 'month'] as const).map((win) => [win, byName(w.usage(win))['chat-app']!.requests]));
    // 14.5 days into December: 20 days ago is November.
    expect(counts).toEqual({ '1h': 1, '24h': 2, '7d': 3, '30d': 5, month: 4 });
    expect(windowBounds('month', NOW)).toEqual({ fromMs: Date.UTC(2026, 11, 1), toMs: NOW });
    expect(byName(w.usage('1h'))['chat-app']!.lastSeenAt).toBe(NOW - 30 * 60_000);
  });

  it('sums tokens of the rows that reported them; requests none of which did are unknown, not 0', () => {
    const w = world();
    w.tokens.create('chat-app', 'interactive');
    w.tokens.create('silent', 'batch');
    w.tokens.create('idle', 'batch');
    w.log.add(row({ tokensIn: 7, tokensOut: 11 }));
    w.log.add(row({ tokensIn: null, tokensOut: null }));
    w.log.add(row({ client: 'silent', tokensIn: null, tokensOut: null }));
    const u = byName(w.usage('24h'));
    expect(u['chat-app']).toMatchObject({ requests: 2, answered: 2, tokensIn: 7, tokensOut: 11, requestsWithoutTokens: 1 });
    expect(u['silent']).toMatchObject({ requests: 1, tokensIn: null, tokensOut: null, requestsWithoutTokens: 1 });
    // A token that asked nothing: a known zero, and no GPU time that could cost anything.
    expect(u['idle']).toMatchObject({ requests: 0, tokensIn: 0, tokensOut: 0, lastSeenAt: null });
    expect(u['idle']!.cost.value).toBe(0);
  });
});

describe('client usage cost', () => {
  it('shares concurrent GPU time among clients (cost.summary byClient), and a host without a price makes the cost unknown', () => {
    const w = world({ prices: { h1: 36 } }); // $36/h = $0.01 a second
    for (const n of ['a', 'b', 'c']) w.tokens.create(n, 'interactive');
    const t0 = NOW - 10 * 60_000;
    // a: 0–10 s, b: 5–15 s on h1: the 5 s they overlap are split, 7.5 GPU-seconds each.
    w.log.add(row({ client: 'a', ts: t0, totalMs: 10_000 }));
    w.log.add(row({ client: 'b', ts: t0 + 5_000, totalMs: 10_000 }));
    // c: on h2, which has no price; and a refusal that never reached a server costs nothing.
    w.log.add(row({ client: 'c', ts: t0, totalMs: 4_000, upstream: 'h2/gemma' }));
    w.log.add(row({ client: 'a', ts: t0, status: 429, errorCode: 'queue_full', upstream: null, tokensIn: null, tokensOut: null }));
    const u = byName(w.usage('1h'));
    expect(u['a']!.gpuSeconds).toBeCloseTo(7.5, 6);
    expect(u['a']!.cost.value).toBeCloseTo(0.075, 9);
    expect(u['b']!.cost.value).toBeCloseTo(0.075, 9);
    expect(u['c']!.cost).toMatchObject({ value: null, estimate: true });
    expect(u['c']!.cost.unavailableReason).toMatch(/no price/);
  });
});

describe('client usage cost reuse', () => {
  it('reuses a long window\'s cost split for its TTL and says when it was computed; counts stay fresh', () => {
    const w = world();
    w.tokens.create('a', 'interactive');
    w.log.add(row({ client: 'a', ts: NOW - H, totalMs: 10_000 }));
    const first = w.usage('7d');
    expect(first.costAt).toBe(NOW);
    w.log.add(row({ client: 'a', ts: NOW + 1_000, totalMs: 10_000 }));
    const soon = w.usage('7d', NOW + 60_000);
    expect(soon.costAt).toBe(NOW);
    expect(byName(soon)['a']).toMatchObject({ requests: 2, gpuSeconds: 10 });
    const later = w.usage('7d', NOW + 121_000);
    expect(later.costAt).toBe(NOW + 121_000);
    expect(byName(later)['a']!.gpuSeconds).toBeCloseTo(20, 6);
    // The hour is always computed afresh.
    expect(w.usage('1h', NOW + 60_000).costAt).toBe(NOW + 60_000);
  });
});

describe('client usage errors and clients listed', () => {
  it('counts errors by code, most frequent first, with the status they came with', () => {
    const w = world();
    w.tokens.create('chat-app', 'interactive');
    const refuse = (status: number, errorCode: string | null, n: number) => {
      for (let i = 0; i < n; i++) w.log.add(row({ status, errorCode, upstream: null, tokensIn: null, tokensOut: null }));
    };
    refuse(429, 'rate_limit_rpm', 3);
    refuse(403, 'model_not_allowed', 2);
    refuse(429, 'queue_full', 1);
    refuse(502, 'upstream_reset', 1);
    refuse(500, null, 1);
    w.log.add(row({}));
    const c = byName(w.usage('24h'))['chat-app']!;
    expect(c).toMatchObject({ requests: 9, answered: 1 });
    expect(c.errors).toEqual([
      { code: 'rate_limit_rpm', status: 429, requests: 3 },
      { code: 'model_not_allowed', status: 403, requests: 2 },
      { code: 'http_500', status: 500, requests: 1 },
      { code: 'queue_full', status: 429, requests: 1 },
      { code: 'upstream_reset', status: 502, requests: 1 },
    ]);
  });

  it('lists live tokens, revoked ones only with traffic, anonymous when on, and never the unauthenticated', () => {
    const on = world({ anonymous: true });
    on.tokens.create('live', 'interactive');
    on.tokens.create('gone-quiet', 'batch');
    on.tokens.revoke('gone-quiet');
    on.tokens.create('gone-busy', 'batch');
    on.log.add(row({ client: 'gone-busy' }));
    on.tokens.revoke('gone-busy');
    on.log.add(row({ client: 'unauthenticated', status: 401, errorCode: 'missing_token', upstream: null }));
    const u = on.usage('24h');
    expect(u.clients.map((c) => c.client).sort()).toEqual(['anonymous', 'gone-busy', 'live']);
    expect(byName(u)['anonymous']).toMatchObject({ kind: 'anonymous', token: null, requests: 0 });
    expect(byName(u)['gone-busy']!.token?.revokedAt).not.toBeNull();
    expect(byName(u)['live']).toMatchObject({ kind: 'token', token: { name: 'live', maxClass: 'interactive' } });

    const off = world({ anonymous: false });
    expect(off.usage('24h').clients).toEqual([]);
    off.log.add(row({ client: 'anonymous' }));
    off.log.add(row({ client: 'console:playground' }));
    expect(byName(off.usage('24h'))['console:playground']).toMatchObject({ kind: 'internal', token: null, requests: 1 });
    // Turned off since: its traffic of the window still shows.
    expect(byName(off.usage('24h'))['anonymous']).toMatchObject({ kind: 'anonymous', requests: 1 });
  });

  it('says how far back the request log reaches', () => {
    const w = world();
    expect(w.usage('30d').oldestRowTs).toBeNull();
    w.log.add(row({ ts: NOW - 2 * D }));
    expect(w.usage('30d').oldestRowTs).toBe(NOW - 2 * D);
  });
});
