import { describe, expect, it } from 'vitest';
import type { FleetSnapshot, HostView } from '../../../../src-preload/contract/index.js';
import { Emitter, silentLogger, type Clock } from '../../../../src-main/core/base/index.js';
import { BudgetService } from '../../../../src-main/core/budget/index.js';
import { ConfigSchema } from '../../../../src-main/core/config/index.js';
import type { NotificationInput } from '../../../../src-main/core/notify/router.js';
import { fleetStateOf } from '../../../helpers/fleet-state.js';

function memSettings() {
  const m = new Map<string, string>();
  return {
    get: <T>(k: string) => (m.has(k) ? (JSON.parse(m.get(k)!) as T) : undefined),
    set: (k: string, v: unknown) => void m.set(k, JSON.stringify(v)),
    delete: (k: string) => m.delete(k),
    all: () => ({}),
    atomically: <T>(fn: () => T): T => fn(),
  };
}

function setup(settings = memSettings(), start = Date.UTC(2026, 11, 31, 20)) {
  let t = start;
  const clock = { now: () => t } as Clock;
  const ticks = new Emitter<FleetSnapshot>();
  const audit: { type: string; payload: unknown }[] = [];
  const notices: NotificationInput[] = [];
  const config = { current: ConfigSchema.parse({ hosts: [{ label: 'l20', ssh: { host: '127.0.0.1', user: 'u', agent: true }, pricePerHourUsd: 2.641736, monthlyBudgetUsd: 10 }] }) };
  const svc = new BudgetService({
    settings,
    audit: { append: (e) => (audit.push(e), {}) as never },
    config,
    fleet: { onDidRound: (l) => ticks.on((s) => l(fleetStateOf(s))) },
    notices: { notify: (n) => void notices.push(n) },
    clock,
    logger: silentLogger,
    maxGapMs: 3_600_000,
  });
  const tick = (advanceMs: number, state = 'connected') => {
    t += advanceMs;
    ticks.fire({ at: t, hosts: [{ label: 'l20', state, pricePerHourUsd: 2.641736 } as unknown as HostView] } as FleetSnapshot);
  };
  return { svc, tick, audit, notices, settings };
}

describe('BudgetService', () => {
  it('accrues spend, fires 50/80/100 once each, survives a restart, resets at month rollover', () => {
    const a = setup();
    a.tick(0);
    a.tick(1_900_000); // ~0.53 h → $1.39
    a.tick(3_600_000); // +1 h → $4.03
    expect(a.notices).toEqual([]);
    a.tick(1_800_000); // $5.35 → 50 %
    expect(a.notices.map((n) => n.event)).toEqual(['budget.threshold']);
    expect(a.notices[0]!.severity).toBe('warning');
    a.tick(60_000);
    expect(a.notices).toHaveLength(1); // no re-fire
    expect(a.svc.status().hosts[0]!.crossed).toEqual([50]);
    expect(a.svc.status().hosts[0]!.hoursToGate).toBeGreaterThan(0);
    void a.svc.dispose();

    // restart with the same settings: spend kept, 50 % not fired again
    const b = setup(a.settings, Date.UTC(2026, 11, 31, 22));
    expect(b.svc.spentThisMonthUsd('l20')).toBeGreaterThan(5);
    b.tick(0);
    b.tick(3_600_000 - 1); // still December: +$2.64 → 80 %
    expect(b.notices.map((n) => n.key)).toEqual(['budget:l20:2026-12:80']);
    b.tick(7_200_000); // crosses into January: only the January part counts
    expect(b.svc.status().month).toBe('2027-01');
    expect(b.svc.spentThisMonthUsd('l20')).toBeLessThan(3);
    expect(b.notices).toHaveLength(1);
    void b.svc.dispose();
  });

  it('a disconnected host does not accrue; 100 % is critical', () => {
    const a = setup();
    a.tick(0, 'disconnected');
    a.tick(3_600_000, 'disconnected');
    expect(a.svc.spentThisMonthUsd('l20')).toBe(0);
    a.svc.set({ host: 'l20', monthlyUsd: 1 }, 'tester');
    a.tick(0);
    a.tick(3_600_000);
    expect(a.notices.map((n) => n.severity)).toEqual(['warning', 'warning', 'critical']);
    void a.svc.dispose();
  });

  it('rejects bad amounts and unknown hosts, leaving the budget unchanged', () => {
    const a = setup();
    for (const v of [-1, 0, Number.NaN, 1e12, Number.POSITIVE_INFINITY]) {
      expect(() => a.svc.set({ host: 'l20', monthlyUsd: v }, 't')).toThrow(/monthlyUsd/);
    }
    expect(() => a.svc.set({ host: 'nope', monthlyUsd: 5 }, 't')).toThrow(/no host "nope"/);
    expect(a.svc.monthlyUsdFor('l20')).toBe(10);
    expect(a.audit).toEqual([]);
    a.svc.set({ host: 'l20', monthlyUsd: 20 }, 't');
    expect(a.svc.status().hosts[0]!.source).toBe('override');
    a.svc.set({ host: 'l20', monthlyUsd: null }, 't');
    expect(a.svc.status().hosts[0]!).toMatchObject({ source: 'config', monthlyUsd: 10 });
    expect(a.audit.map((e) => e.payload)).toEqual([
      { scope: 'host', old: null, new: 20, effective: 20 },
      { scope: 'host', old: 20, new: null, effective: 10 },
    ]);
    void a.svc.dispose();
  });
});
