import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { ProxyConfigSchema } from '../../../../src-main/core/config/index.js';
import type { ModelPlacement } from '../../../../src-main/core/proxy/registry.js';
import { chooseNow, type ChooseContext } from '../../../../src-main/core/proxy/stages/upstream.js';
import { PriorityPool, defaultCaps, type Lease, type PoolPolicy, type UpstreamAvailability, type UpstreamSpec } from '../../../../src-main/core/proxy/index.js';
import type { UpstreamResolver } from '../../../../src-main/core/proxy/resolver.js';
import { FAILING_FOR_MS, ReplicaRouter, type Candidate, type Choice } from '../../../../src-main/core/proxy/router.js';

// The replica choice alone: real priority pools for the slot accounting, a resolver
// answering from a table, and a monotonic clock the test moves.

const policy: PoolPolicy = {
  holdBudgetMs: { interactive: 45_000, system: 10_000, batch: 1_800_000 },
  queueBound: { interactive: 64, system: 64, batch: 64 },
};

const NONE: ReadonlySet<string> = new Set();

function world() {
  let t = 0;
  const clock = new FakeClock();
  const mono = () => t;
  const router = new ReplicaRouter(mono);
  const avail = new Map<string, UpstreamAvailability>();
  const resolver: UpstreamResolver = { resolve: (spec) => avail.get(spec.key) ?? { ok: true, url: `http://127.0.0.1/${spec.key}` } };
  const replica = (key: string, options: { slots?: number; weight?: number; model?: string } = {}): Candidate => {
    const slots = options.slots ?? 4;
    const [label, serviceId] = key.split('/') as [string, string];
    const spec: UpstreamSpec = {
      key,
      label,
      serviceId,
      kind: 'vllm',
      model: options.model ?? 'M',
      aliases: [],
      slots,
      caps: defaultCaps(slots),
      apiKeyRef: null,
      weight: options.weight ?? 1,
    };
    return { spec, pool: new PriorityPool(key, { slots, caps: defaultCaps(slots) }, policy, clock, mono) };
  };
  const pick = (list: readonly Candidate[], exclude: ReadonlySet<string> = NONE): Choice | null => router.choose(list, 'interactive', resolver, exclude);
  const pickKey = (list: readonly Candidate[], exclude: ReadonlySet<string> = NONE): string => {
    const c = pick(list, exclude);
    if (!c?.ok) throw new Error(`expected a replica, got ${JSON.stringify(c && { why: c.why })}`);
    return c.spec.key;
  };
  const fill = (c: Candidate, n: number): Lease[] => Array.from({ length: n }, () => c.pool.tryAcquire('interactive')!);
  /** chooseNow over a route of models (each a list of replicas), first model first. */
  const route = (...models: Candidate[][]) => {
    const r: ModelPlacement = { name: 'g', chain: models.map((m) => m[0]!.spec.model), replicas: models.map((m) => m.map((c) => c.spec)) };
    const ctx: ChooseContext = {
      pools: new Map(models.flat().map((c) => [c.spec.key, c.pool])),
      router,
      resolver,
      env: { clock, mono, settings: ProxyConfigSchema.parse({}), closing: false },
    };
    return (exclude: ReadonlySet<string> = NONE) => chooseNow(r, 'interactive', ctx, exclude);
  };
  return { router, avail, clock, replica, pick, pickKey, fill, route, advance: (ms: number) => (t += ms) };
}

const down = (code: 'tunnel_down' | 'model_sleeping', recoveryMs: number | null): UpstreamAvailability => ({
  ok: false,
  code,
  message: code,
  retryAfterS: 5,
  recovery: recoveryMs === null ? null : { reason: code === 'tunnel_down' ? 'reconnecting' : 'waking', expectedMs: recoveryMs },
});

const tally = (keys: string[]) => keys.reduce<Record<string, number>>((acc, k) => ({ ...acc, [k]: (acc[k] ?? 0) + 1 }), {});

describe('ReplicaRouter: free slots', () => {
  it('picks the replica with the most free slots by the pool accounting', () => {
    const w = world();
    const a = w.replica('a/s');
    const b = w.replica('b/s');
    const c = w.replica('c/s', { slots: 8 });
    w.fill(a, 1);
    w.fill(b, 3);
    w.fill(c, 6); // 2 free
    expect(w.pickKey([a, b, c])).toBe('a/s');
    expect(w.pickKey([a, b, c])).toBe('a/s'); // choosing alone takes no slot
    w.fill(a, 2); // a: 1 free, c: 2 free
    expect(w.pickKey([a, b, c])).toBe('c/s');
  });

  it('counts the class caps and the interactive reserve, not just the slots', () => {
    const w = world();
    const a = w.replica('a/s'); // batch may use 3 of 4
    const b = w.replica('b/s');
    a.pool.tryAcquire('batch');
    a.pool.tryAcquire('batch');
    b.pool.tryAcquire('interactive');
    // For interactive both have two free; for batch a has one (3 − 2), b three.
    expect(w.router.choose([a, b], 'batch', { resolve: () => ({ ok: true, url: 'http://x' }) }, NONE)).toMatchObject({ ok: true, spec: { key: 'b/s' } });
  });

  it('breaks ties in turn, even with picks for other models in between', () => {
    const w = world();
    const a = w.replica('a/s');
    const b = w.replica('b/s');
    const c = w.replica('c/s');
    const x = w.replica('x/s', { model: 'X' });
    const y = w.replica('y/s', { model: 'X' });
    expect(Array.from({ length: 6 }, () => w.pickKey([a, b, c]))).toEqual(['a/s', 'b/s', 'c/s', 'a/s', 'b/s', 'c/s']);
    const picks: string[] = [];
    for (let i = 0; i < 4; i++) {
      picks.push(w.pickKey([a, b]));
      w.pickKey([x, y]); // another model's choice must not skew this one's turn (a shared counter gave a, a, a, a)
    }
    expect(picks).toEqual(['a/s', 'b/s', 'a/s', 'b/s']);
  });

  it('all full: queues where (queued + 1) / slots is smallest', () => {
    const w = world();
    const a = w.replica('a/s', { slots: 2 });
    const b = w.replica('b/s', { slots: 4 });
    w.fill(a, 2);
    w.fill(b, 4);
    a.pool.enqueue('interactive');
    b.pool.enqueue('interactive');
    // a: (1 + 1) / 2 = 1, b: (1 + 1) / 4 = 0.5
    expect(w.pickKey([a, b])).toBe('b/s');
    b.pool.enqueue('interactive');
    b.pool.enqueue('interactive');
    // b: (3 + 1) / 4 = 1 — a tie with a; a was picked longer ago (never).
    expect(w.pickKey([a, b])).toBe('a/s');
  });
});

describe('ReplicaRouter: weights', () => {
  it('55 / 30 / 15 over 1,000 picks with free slots: each within ±2 % of its weight', () => {
    const w = world();
    const list = [w.replica('a/s', { weight: 55 }), w.replica('b/s', { weight: 30 }), w.replica('c/s', { weight: 15 })];
    const counts = tally(Array.from({ length: 1000 }, () => w.pickKey(list)));
    for (const [key, weight] of [['a/s', 55], ['b/s', 30], ['c/s', 15]] as const) {
      expect(Math.abs((counts[key] ?? 0) / 1000 - weight / 100), `${key}: ${counts[key]} of 1000`).toBeLessThanOrEqual(0.02);
    }
  });

  it('spreads smoothly: no replica gets a long burst', () => {
    const w = world();
    const list = [w.replica('a/s', { weight: 3 }), w.replica('b/s', { weight: 1 })];
    const picks = Array.from({ length: 8 }, () => w.pickKey(list));
    expect(picks.join(' ')).not.toMatch(/(a\/s ){4}/);
    expect(tally(picks)).toEqual({ 'a/s': 6, 'b/s': 2 });
  });

  it('a full replica is left out of the weighted turn; all full → the shortest queue per unit of weight', () => {
    const w = world();
    const a = w.replica('a/s', { weight: 3, slots: 2 });
    const b = w.replica('b/s', { weight: 1, slots: 2 });
    w.fill(a, 2);
    expect(Array.from({ length: 5 }, () => w.pickKey([a, b]))).toEqual(Array(5).fill('b/s'));
    w.fill(b, 2);
    b.pool.enqueue('interactive');
    // a: (0 + 1) / (2 × 3) ≈ 0.17, b: (1 + 1) / (2 × 1) = 1
    expect(w.pickKey([a, b])).toBe('a/s');
    for (let i = 0; i < 3; i++) a.pool.enqueue('interactive');
    // a: (3 + 1) / 6 ≈ 0.67 — still shorter than b per unit of weight
    expect(w.pickKey([a, b])).toBe('a/s');
    for (let i = 0; i < 3; i++) a.pool.enqueue('interactive');
    // a: (6 + 1) / 6 ≈ 1.17 > b: 1
    expect(w.pickKey([a, b])).toBe('b/s');
  });
});

describe('ReplicaRouter: who is skipped', () => {
  it('skips draining, down and asleep replicas', () => {
    const w = world();
    const a = w.replica('a/s');
    const b = w.replica('b/s');
    const c = w.replica('c/s');
    const d = w.replica('d/s');
    void a.pool.drain();
    w.avail.set('b/s', down('tunnel_down', 2_000));
    w.avail.set('c/s', down('model_sleeping', null));
    w.fill(d, 4); // full, yet the only one that can take it
    expect(Array.from({ length: 4 }, () => w.pickKey([a, b, c, d]))).toEqual(Array(4).fill('d/s'));
  });

  it('nobody can take it: the most hopeful refusal (soonest back), draining after any recovery', () => {
    const w = world();
    const a = w.replica('a/s');
    const b = w.replica('b/s');
    const c = w.replica('c/s');
    void a.pool.drain();
    w.avail.set('b/s', down('model_sleeping', 60_000));
    w.avail.set('c/s', down('tunnel_down', 3_000));
    expect(w.pick([a, b, c])).toMatchObject({ ok: false, spec: { key: 'c/s' }, why: { code: 'tunnel_down' } });
    w.avail.set('c/s', down('tunnel_down', null));
    expect(w.pick([a, b, c])).toMatchObject({ ok: false, spec: { key: 'b/s' }, why: { code: 'model_sleeping' } });
    w.avail.set('b/s', down('model_sleeping', null));
    expect(w.pick([a, b, c])).toMatchObject({ ok: false, spec: { key: 'a/s' }, why: 'draining' });
    // A caller's rank decides instead when given (a restart behind a drain is expected back).
    expect(w.router.choose([a, b, c], 'interactive', { resolve: (s) => w.avail.get(s.key) ?? { ok: true, url: '' } }, NONE, (r) => (r.why === 'draining' ? 10 : 1e13)))
      .toMatchObject({ ok: false, spec: { key: 'a/s' } });
  });

  it('a single replica: refused as it is, and every replica excluded → null', () => {
    const w = world();
    const a = w.replica('a/s');
    const b = w.replica('b/s');
    w.avail.set('a/s', down('tunnel_down', 1_000));
    expect(w.pick([a])).toMatchObject({ ok: false, spec: { key: 'a/s' }, why: { code: 'tunnel_down' } });
    expect(w.pick([a, b], new Set(['a/s', 'b/s']))).toBeNull();
    expect(w.pick([a, b], new Set(['b/s']))).toMatchObject({ ok: false, spec: { key: 'a/s' } });
    w.avail.delete('a/s');
    expect(w.pickKey([a, b], new Set(['a/s']))).toBe('b/s');
  });

  it('a degraded replica is used only when no other is ready', () => {
    const w = world();
    const a = w.replica('a/s');
    const b = w.replica('b/s');
    w.avail.set('a/s', { ok: true, url: 'http://a', degraded: true });
    w.fill(b, 4); // b full: still preferred (the request queues there)
    expect(w.pick([a, b])).toMatchObject({ ok: true, spec: { key: 'b/s' }, lastResort: false });
    w.avail.set('b/s', down('tunnel_down', 1_000));
    expect(w.pick([a, b])).toMatchObject({ ok: true, spec: { key: 'a/s' }, url: 'http://a', lastResort: true });
    // A model with one replica, degraded: it is used, and said to be a last resort.
    expect(w.pick([a])).toMatchObject({ ok: true, spec: { key: 'a/s' }, lastResort: true });
  });

  it('a failing replica is skipped for FAILING_FOR_MS while another is ready, then back in turn', () => {
    const w = world();
    const a = w.replica('a/s');
    const b = w.replica('b/s');
    w.router.markFailing('a/s');
    expect(w.router.isFailing('a/s')).toBe(true);
    expect(Array.from({ length: 4 }, () => w.pickKey([a, b]))).toEqual(Array(4).fill('b/s'));
    // b goes down: a failing replica is better than none.
    w.avail.set('b/s', down('tunnel_down', 1_000));
    expect(w.pick([a, b])).toMatchObject({ ok: true, spec: { key: 'a/s' }, lastResort: true });
    w.avail.delete('b/s');
    w.advance(FAILING_FOR_MS - 1);
    expect(w.router.isFailing('a/s')).toBe(true);
    expect(w.pickKey([a, b])).toBe('b/s');
    w.advance(1);
    expect(w.router.isFailing('a/s')).toBe(false);
    expect(tally(Array.from({ length: 4 }, () => w.pickKey([a, b])))).toEqual({ 'a/s': 2, 'b/s': 2 });
  });

  it('markHealthy ends the failing period at once; routed counts what was sent', () => {
    const w = world();
    const a = w.replica('a/s');
    const b = w.replica('b/s');
    w.router.markFailing('a/s');
    w.router.markHealthy('a/s');
    expect(w.router.isFailing('a/s')).toBe(false);
    w.router.count('a/s');
    w.router.count('a/s');
    w.router.count('b/s');
    expect([w.router.routed('a/s'), w.router.routed('b/s'), w.router.routed('c/s')]).toEqual([2, 1, 0]);
    expect(w.pick([a, b])).toMatchObject({ ok: true, lastResort: false });
  });
});

describe('chooseNow: a route of models (a group)', () => {
  it('the first model with a ready replica; a later model only when the earlier cannot take it', () => {
    const w = world();
    const big = w.replica('c/s', { model: 'Big', slots: 1 });
    const m1 = w.replica('a/s');
    const m2 = w.replica('b/s');
    const choose = w.route([big], [m1, m2]);
    expect(choose()).toMatchObject({ ok: true, spec: { key: 'c/s' } });
    w.fill(big, 1); // full but ready: the request queues on the first model
    expect(choose()).toMatchObject({ ok: true, spec: { key: 'c/s' } });
    w.avail.set('c/s', down('tunnel_down', 1_000)); // expected back soon, yet the next model is ready now
    expect(choose()).toMatchObject({ ok: true, spec: { model: 'M' } });
    w.avail.delete('c/s');
    expect(choose(new Set(['c/s']))).toMatchObject({ ok: true, spec: { model: 'M' } });
  });

  it('a failing or degraded replica of the first model yields to a ready one of the next, and is the last resort', () => {
    const w = world();
    const big = w.replica('c/s', { model: 'Big' });
    const m = w.replica('a/s');
    const choose = w.route([big], [m]);
    w.router.markFailing('c/s');
    expect(choose()).toMatchObject({ ok: true, spec: { key: 'a/s' }, lastResort: false });
    w.avail.set('a/s', down('tunnel_down', null));
    expect(choose()).toMatchObject({ ok: true, spec: { key: 'c/s' }, lastResort: true });
    w.avail.delete('a/s');
    w.advance(FAILING_FOR_MS);
    expect(choose()).toMatchObject({ ok: true, spec: { key: 'c/s' }, lastResort: false });
    w.avail.set('c/s', { ok: true, url: 'http://c', degraded: true });
    expect(choose()).toMatchObject({ ok: true, spec: { key: 'a/s' } });
  });

  it('nobody can take it: the refusal expected back soonest, a restart behind a drain by its deadline', () => {
    const w = world();
    const a = w.replica('a/s');
    const b = w.replica('b/s');
    const choose = w.route([a, b]);
    w.avail.set('b/s', down('tunnel_down', 60_000));
    void a.pool.drain();
    a.pool.drainInfo = { deadlineAt: w.clock.now() + 2_000, purpose: 'restart', expectedActionMs: 3_000 };
    // The restart is back in about 5 s, the tunnel in 60 s: hold for the restart.
    expect(choose()).toMatchObject({ ok: false, spec: { key: 'a/s' }, why: 'draining' });
    a.pool.drainInfo = { deadlineAt: w.clock.now() + 2_000, purpose: 'sleep', expectedActionMs: null };
    expect(choose()).toMatchObject({ ok: false, spec: { key: 'b/s' }, why: { code: 'tunnel_down' } });
    expect(choose(new Set(['a/s', 'b/s']))).toBeNull();
  });
});
