import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { invokeChannels, type FleetSnapshot, type HostView } from '../../../src-preload/contract/index.js';
import { Emitter, silentLogger, type Clock } from '../../../src-main/core/base/index.js';
import { BudgetService, budgetChannels } from '../../../src-main/core/budget/index.js';
import { ConfigSchema } from '../../../src-main/core/config/index.js';
import { NotificationService } from '../../../src-main/core/notify/index.js';
import { openStore, type Store } from '../../../src-main/core/store/index.js';
import { fleetStateOf } from '../../helpers/fleet-state.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function start(dir: string, t: { now: number }) {
  const clock = { now: () => t.now, setTimeout: () => ({ dispose() {} }), setInterval: () => ({ dispose() {} }) } as unknown as Clock;
  const store: Store = openStore({ file: join(dir, 'db.sqlite'), clock });
  const ticks = new Emitter<FleetSnapshot>();
  const notices = new NotificationService({ clock, audit: store.audit, emit: () => undefined });
  const config = { current: ConfigSchema.parse({ hosts: [{ label: 'l20', ssh: { host: '127.0.0.1', user: 'u', agent: true }, pricePerHourUsd: 2.641736 }] }) };
  const budget = new BudgetService({ settings: store.settings, audit: store.audit, config, fleet: { onDidRound: (l) => ticks.on((s) => l(fleetStateOf(s))) }, notices, clock, logger: silentLogger });
  const handlers = budgetChannels(budget);
  const ctx = { requestId: 'r', caller: 'web' as const };
  const call = (input: unknown) => {
    const parsed = invokeChannels['budget.set'].input.safeParse(input);
    if (!parsed.success) return { ok: false as const, message: parsed.error.issues.map((i) => i.message).join('; ') };
    try {
      return { ok: true as const, data: handlers['budget.set'](parsed.data, ctx) };
    } catch (err) {
      return { ok: false as const, message: (err as Error).message };
    }
  };
  const tick = (ms: number) => {
    t.now += ms;
    ticks.fire({ at: t.now, hosts: [{ label: 'l20', state: 'connected', pricePerHourUsd: 2.641736 } as unknown as HostView] } as FleetSnapshot);
  };
  return { store, budget, notices, handlers, call, tick, close: async () => (await budget.dispose(), store.close()) };
}

describe('budget through the real store and notices', () => {
  it('set via the contract handler → audited → alert at crossing → notice budget.threshold; restart keeps spend and does not re-fire', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'budget-'));
    dirs.push(dir);
    const t = { now: Date.UTC(2026, 11, 2, 8) };
    const a = start(dir, t);
    for (const bad of [-5, 0, Number.NaN, 1e12]) expect(a.call({ host: 'l20', monthlyUsd: bad })).toMatchObject({ ok: false, message: expect.stringMatching(/monthlyUsd/) });
    expect(a.call({ host: 'ghost', monthlyUsd: 5 })).toMatchObject({ ok: false, message: 'no host "ghost" in the inventory' });
    expect(a.budget.monthlyUsdFor('l20')).toBeNull();

    const set = a.call({ host: 'l20', monthlyUsd: 5 });
    expect(set.ok).toBe(true);
    const audit = a.store.audit.list({});
    expect(audit.find((e) => e.type === 'budget.set')).toMatchObject({ target: 'l20', payload: { old: null, new: 5 } });

    a.tick(0);
    for (let i = 0; i < 60; i++) a.tick(60_000); // 1 h → $2.64 ≥ 50 % of $5
    const n = a.notices.recent(50).filter((x) => x.event === 'budget.threshold');
    expect(n.map((x) => x.title)).toEqual(['l20: 50% of monthly budget']);
    expect(a.store.audit.list({}).filter((e) => e.type === 'budget.threshold')).toHaveLength(1);
    const spent = a.budget.spentThisMonthUsd('l20');
    await a.close();

    const b = start(dir, t);
    expect(b.budget.spentThisMonthUsd('l20')).toBeCloseTo(spent, 6);
    expect(b.budget.status().hosts[0]).toMatchObject({ monthlyUsd: 5, source: 'override', crossed: [50] });
    b.tick(0);
    b.tick(60_000);
    expect(b.store.audit.list({}).filter((e) => e.type === 'budget.threshold')).toHaveLength(1);
    await b.close();
  });
});
