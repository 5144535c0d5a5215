import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { PriorityPool, defaultCaps, validateCaps, type Lease, type PoolPolicy } from '../../../../src-main/core/proxy/index.js';

const policy: PoolPolicy = {
  holdBudgetMs: { interactive: 45_000, system: 10_000, batch: 1_800_000 },
  queueBound: { interactive: 8, system: 8, batch: 8 },
};

function pool(slots = 4, caps = defaultCaps(slots)) {
  const clock = new FakeClock();
  let t = 0;
  const p = new PriorityPool('h/s', { slots, caps }, policy, clock, () => t);
  return { p, clock, tick: (ms: number) => ((t += ms), clock.advance(ms)) };
}

describe('PriorityPool', () => {
  it('defaults reserve a quarter of the slots for interactive', () => {
    expect(defaultCaps(4)).toEqual({ reservedInteractive: 1, interactive: 4, system: 2, batch: 3 });
    expect(defaultCaps(1)).toEqual({ reservedInteractive: 0, interactive: 1, system: 1, batch: 1 });
    expect(validateCaps(4, { reservedInteractive: 5, interactive: 4, system: 1, batch: 1 })).toMatch(/exceeds/);
    expect(validateCaps(4, { reservedInteractive: 1, interactive: 0, system: 1, batch: 1 })).toMatch(/interactive/);
  });

  it('batch never takes the slots reserved for interactive', () => {
    const { p } = pool(4);
    const leases = [p.tryAcquire('batch'), p.tryAcquire('batch'), p.tryAcquire('batch')];
    expect(leases.every(Boolean)).toBe(true);
    expect(p.tryAcquire('batch')).toBeNull();
    expect(p.tryAcquire('system')).toBeNull();
    expect(p.tryAcquire('interactive')).not.toBeNull();
  });

  it('dispatches interactive, then system, then batch; FIFO within a class', async () => {
    const { p } = pool(2, { reservedInteractive: 0, interactive: 2, system: 2, batch: 2 });
    const held = [p.tryAcquire('batch')!, p.tryAcquire('batch')!];
    const order: string[] = [];
    const tickets = [
      ['batch', 'b1'],
      ['system', 's1'],
      ['interactive', 'i1'],
      ['batch', 'b2'],
      ['interactive', 'i2'],
    ].map(([cls, name]) => {
      const t = p.enqueue(cls as 'batch');
      void t.lease.then((l: Lease) => {
        order.push(name!);
        return l;
      });
      return t;
    });
    expect(tickets.map((t) => t.position())).toEqual([4, 3, 1, 5, 2]);
    for (const l of held) l.release();
    await Promise.resolve();
    await Promise.resolve();
    expect(order).toEqual(['i1', 'i2']);
    const granted = await Promise.all([tickets[2]!.lease, tickets[4]!.lease]);
    for (const l of granted) l.release();
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['i1', 'i2', 's1', 'b1']);
  });

  it('refuses past the queue bound and after the hold budget, with codes', async () => {
    const { p, tick } = pool(1);
    p.tryAcquire('interactive');
    const waiting = Array.from({ length: 8 }, () => p.enqueue('system'));
    for (const w of waiting.slice(1)) w.lease.catch(() => undefined);
    expect(() => p.enqueue('system')).toThrow(expect.objectContaining({ code: 'PROXY_QUEUE_FULL' }));
    const rejected = waiting[0]!.lease.catch((e: { code: string }) => e.code);
    tick(10_001);
    expect(await rejected).toBe('PROXY_HOLD_TIMEOUT');
    expect(p.queuedOf('system')).toBe(0);
  });

  it('a cancelled waiter leaves the queue and the ETA follows measured service times', async () => {
    const { p, tick } = pool(1);
    const first = p.tryAcquire('interactive')!;
    const a = p.enqueue('interactive');
    expect(a.etaMs()).toBeNull();
    tick(200);
    first.release();
    const second = await a.lease;
    const b = p.enqueue('interactive');
    const c = p.enqueue('interactive');
    expect(c.position()).toBe(2);
    expect(c.etaMs()).toBe(400);
    b.cancel();
    await expect(b.lease).rejects.toMatchObject({ code: 'PROXY_CANCELLED' });
    expect(c.position()).toBe(1);
    second.release();
    await expect(c.lease).resolves.toBeTruthy();
  });

  it('drain keeps queued requests waiting, refuses new ones, waits for in-flight work; resume serves the queue first', async () => {
    const { p } = pool(1);
    const l = p.tryAcquire('interactive')!;
    const w = p.enqueue('batch');
    const drained = p.drain();
    expect(() => p.enqueue('interactive')).toThrow(expect.objectContaining({ code: 'PROXY_DRAINING' }));
    expect(p.tryAcquire('interactive')).toBeNull();
    let done = false;
    void drained.then(() => (done = true));
    await Promise.resolve();
    expect(done).toBe(false);
    l.release();
    await drained;
    // Drained: the slot is free, but the queued request is held until resume.
    let granted = false;
    void w.lease.then(() => (granted = true));
    await Promise.resolve();
    expect(granted).toBe(false);
    expect(w.position()).toBe(1);
    p.resume();
    const lease = await w.lease;
    expect(lease.cls).toBe('batch');
  });

  it('drain with refuseQueued (shutdown) answers queued requests at once', async () => {
    const { p } = pool(1);
    const l = p.tryAcquire('interactive')!;
    const w = p.enqueue('batch');
    const drained = p.drain(true);
    await expect(w.lease).rejects.toMatchObject({ code: 'PROXY_DRAINING' });
    l.release();
    await drained;
  });

  it('caps change at runtime and take effect at once', () => {
    const { p } = pool(4);
    p.setLimits({ slots: 4, caps: { reservedInteractive: 0, interactive: 4, system: 4, batch: 4 } });
    expect([1, 2, 3, 4].map(() => p.tryAcquire('batch')).every(Boolean)).toBe(true);
  });
});
