import { describe, expect, it } from 'vitest';
import { until } from '../../helpers/until.js';

describe('until (the tests\' one poll)', () => {
  it('resolves once the predicate holds, sync or async', async () => {
    let n = 0;
    await until(() => ++n === 3, { intervalMs: 1 });
    expect(n).toBe(3);
    let m = 0;
    await until(async () => ++m === 2, { intervalMs: 0 });
    expect(m).toBe(2);
  });

  it('on timeout names what it waited for and how long', async () => {
    const t0 = Date.now();
    await expect(until(() => false, { timeoutMs: 60, intervalMs: 5, what: 'the tunnel to open' })).rejects.toThrow('timed out after 60 ms waiting for the tunnel to open');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(60);
  });

  it('without `what` quotes the predicate; a `what` function is asked only on timeout, for the state seen then', async () => {
    const queued: number = 0;
    await expect(until(() => queued === 1, { timeoutMs: 20, intervalMs: 5 })).rejects.toThrow('waiting for () => queued === 1');
    let asked = 0;
    await until(() => true, { what: () => String(++asked) });
    expect(asked).toBe(0);
    await expect(until(() => false, { timeoutMs: 10, intervalMs: 5, what: () => `state ${++asked}` })).rejects.toThrow('waiting for state 1');
  });

  it('a predicate that throws fails at once with its own error', async () => {
    const t0 = Date.now();
    await expect(until(() => { throw new Error('boom'); }, { timeoutMs: 5_000 })).rejects.toThrow('boom');
    expect(Date.now() - t0).toBeLessThan(1_000);
  });
});
