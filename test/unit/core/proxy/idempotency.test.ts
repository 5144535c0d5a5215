import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { IdempotencyCache, type StoredAnswer } from '../../../../src-main/core/proxy/index.js';

const answer = (status: number, bytes = 1): StoredAnswer => ({ status, headers: {}, body: Buffer.alloc(bytes, 120), upstream: 'h/s' });
const KiB = 1024;

/** Runs one key to completion with an answer of `bytes`. */
function served(cache: IdempotencyCache, client: string, key: string, bytes: number): void {
  const first = cache.begin(client, key, 'f');
  if (first.kind !== 'first') throw new Error(`expected first, got ${first.kind}`);
  first.complete(answer(200, bytes));
}

describe('IdempotencyCache', () => {
  it('one run per key: a repeat while running waits, a later one replays until the TTL ends', async () => {
    const clock = new FakeClock();
    const cache = new IdempotencyCache(clock, 1000);
    const first = cache.begin('c', 'k', 'f');
    expect(first.kind).toBe('first');
    const twin = cache.begin('c', 'k', 'f');
    expect(twin.kind).toBe('wait');
    if (first.kind === 'first') first.complete(answer(200));
    if (twin.kind === 'wait') expect((await twin.answer)?.status).toBe(200);
    expect(cache.begin('c', 'k', 'f').kind).toBe('replay');
    expect(cache.begin('other-client', 'k', 'f').kind).toBe('first');
    expect(cache.begin('c', 'k', 'different body').kind).toBe('conflict');
    clock.advance(1001);
    expect(cache.begin('c', 'k', 'f').kind).toBe('first');
  });

  it('a failed first answer goes to its waiting twins but is not kept', async () => {
    const cache = new IdempotencyCache(new FakeClock(), 1000);
    const first = cache.begin('c', 'k', 'f');
    const twin = cache.begin('c', 'k', 'f');
    if (first.kind === 'first') first.complete(answer(429));
    if (twin.kind === 'wait') expect((await twin.answer)?.status).toBe(429);
    expect(cache.begin('c', 'k', 'f').kind).toBe('first');
  });

  it('an answer relayed but not captured (null) sends twins round again and keeps nothing', async () => {
    const cache = new IdempotencyCache(new FakeClock(), 60_000);
    const first = cache.begin('c', 'k', 'f');
    const twin = cache.begin('c', 'k', 'f');
    if (first.kind === 'first') first.complete(null);
    if (twin.kind === 'wait') expect(await twin.answer).toBeNull();
    expect(cache.begin('c', 'k', 'f').kind).toBe('first');
    expect(cache.usage().notKept).toBe(1);
  });

  it('an answer over the per-client share is handed to its twins but not kept', async () => {
    const cache = new IdempotencyCache(new FakeClock(), 60_000, { budgetBytes: 1024 * KiB, perClientBytes: 64 * KiB });
    const first = cache.begin('c', 'k', 'f');
    const twin = cache.begin('c', 'k', 'f');
    if (first.kind === 'first') first.complete(answer(200, 100 * KiB));
    if (twin.kind === 'wait') expect((await twin.answer)?.body.length).toBe(100 * KiB);
    expect(cache.begin('c', 'k', 'f').kind).toBe('first');
    expect(cache.usage()).toMatchObject({ notKept: 1 });
  });

  it('a client over its share forgets its own oldest answers, never another client’s', () => {
    const cache = new IdempotencyCache(new FakeClock(), 60_000, { budgetBytes: 1024 * KiB, perClientBytes: 100 * KiB });
    served(cache, 'quiet', 'q1', 30 * KiB);
    for (let i = 0; i < 20; i++) served(cache, 'flood', `k${i}`, 30 * KiB);
    const u = cache.usage();
    expect(u.bytes).toBeLessThanOrEqual(130 * KiB + 4 * KiB);
    expect(u.evicted).toBe(17);
    expect(cache.begin('quiet', 'q1', 'f').kind).toBe('replay');
    // The flood's newest answers are kept, its oldest forgotten (they run again on repeat).
    expect(cache.begin('flood', 'k19', 'f').kind).toBe('replay');
    expect(cache.begin('flood', 'k0', 'f').kind).toBe('first');
  });

  it('over the whole budget, the client holding the most bytes gives up its oldest answer', () => {
    const cache = new IdempotencyCache(new FakeClock(), 60_000, { budgetBytes: 200 * KiB, perClientBytes: 120 * KiB });
    served(cache, 'a', 'a1', 50 * KiB);
    served(cache, 'b', 'b1', 50 * KiB);
    served(cache, 'b', 'b2', 50 * KiB);
    served(cache, 'c', 'c1', 60 * KiB);
    const u = cache.usage();
    expect(u.bytes).toBeLessThanOrEqual(200 * KiB);
    expect(u.evicted).toBe(1);
    expect(cache.begin('b', 'b1', 'f').kind).toBe('first');
    for (const [client, key] of [['a', 'a1'], ['b', 'b2'], ['c', 'c1']] as const) expect(cache.begin(client, key, 'f').kind).toBe('replay');
  });

  it('stays within its budget and entry count under a flood of distinct keys from many clients; expired answers make room first', () => {
    const clock = new FakeClock();
    const cache = new IdempotencyCache(clock, 1000, { budgetBytes: 512 * KiB, perClientBytes: 128 * KiB, maxEntries: 200 });
    for (let i = 0; i < 2000; i++) {
      served(cache, `client-${i % 7}`, `key-${i}`, (i % 13) * KiB + 1);
      expect(cache.usage().bytes).toBeLessThanOrEqual(512 * KiB);
      expect(cache.size).toBeLessThanOrEqual(200);
    }
    clock.advance(1001);
    // Expired answers go when the cache is full again; then only the newcomers remain.
    for (let i = 0; i < 200; i++) served(cache, 'late', `late-${i}`, 1);
    expect(cache.usage()).toMatchObject({ entries: 200, clients: 1 });
  });

  it('a waiting twin that leaves does not hold the entry: the first still completes and is kept', async () => {
    const cache = new IdempotencyCache(new FakeClock(), 60_000);
    const first = cache.begin('c', 'k', 'f');
    const twin = cache.begin('c', 'k', 'f');
    if (twin.kind === 'wait') twin.cancel();
    if (first.kind === 'first') first.complete(answer(200, 10));
    expect(cache.begin('c', 'k', 'f').kind).toBe('replay');
    expect(cache.usage().bytes).toBeGreaterThan(10);
  });
});
