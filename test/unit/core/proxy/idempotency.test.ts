import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { IdempotencyCache } from '../../../../src-main/core/proxy/index.js';

const answer = (status: number) => ({ status, headers: {}, body: Buffer.from('x'), upstream: 'h/s' });

describe('IdempotencyCache', () => {
  it('one run per key: a repeat while running waits, a later one replays until the TTL ends', async () => {
    const clock = new FakeClock();
    const cache = new IdempotencyCache(clock, 1000);
    const first = cache.begin('c', 'k', 'f');
    expect(first.kind).toBe('first');
    const twin = cache.begin('c', 'k', 'f');
    expect(twin.kind).toBe('wait');
    if (first.kind === 'first') first.complete(answer(200));
    if (twin.kind === 'wait') expect((await twin.answer).status).toBe(200);
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
    if (twin.kind === 'wait') expect((await twin.answer).status).toBe(429);
    expect(cache.begin('c', 'k', 'f').kind).toBe('first');
  });
});
