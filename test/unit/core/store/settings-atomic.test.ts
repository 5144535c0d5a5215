import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Emitter, FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { SilenceBook } from '../../../../src-main/core/alerts/index.js';
import { BudgetService } from '../../../../src-main/core/budget/index.js';
import { ConfigSchema } from '../../../../src-main/core/config/index.js';
import { openStore, type Store } from '../../../../src-main/core/store/index.js';

// A settings save is all or nothing (issue #33 item 2): the setting and its
// audit row land in one transaction, so a write that fails half-way (or a
// console killed between the two) leaves neither an audit row for a change
// that was not stored nor a stored change without its row.

let store: Store;
beforeEach(() => {
  store = openStore({ file: join(mkdtempSync(join(tmpdir(), 'gc-settings-')), 'db.sqlite'), clock: new FakeClock(), logger: silentLogger });
});
afterEach(() => store.close());

/** Makes every later write to `settings` fail, as a full disk or an I/O error would at that statement. */
const refuseSettingsWrites = () => {
  store.db.exec("CREATE TRIGGER no_settings BEFORE INSERT ON settings BEGIN SELECT RAISE(ABORT, 'disk I/O error (test)'); END");
  store.db.exec("CREATE TRIGGER no_settings_u BEFORE UPDATE ON settings BEGIN SELECT RAISE(ABORT, 'disk I/O error (test)'); END");
};

describe('settings saves are atomic', () => {
  it('atomically: several settings and an audit row land together, or none of them does', () => {
    store.settings.atomically(() => {
      store.settings.set('a', 1);
      store.settings.set('b', 2);
      store.audit.append({ type: 'budget.set', actor: 'test', payload: { new: 2 } });
    });
    expect(store.settings.all()).toEqual({ a: 1, b: 2 });
    const before = store.audit.list({ limit: 10 }).length;
    expect(() =>
      store.settings.atomically(() => {
        store.settings.set('a', 10);
        store.audit.append({ type: 'budget.set', actor: 'test', payload: { new: 10 } });
        throw new Error('the second write failed');
      }),
    ).toThrow('the second write failed');
    expect(store.settings.all()).toEqual({ a: 1, b: 2 });
    expect(store.audit.list({ limit: 10 })).toHaveLength(before);
    expect(store.audit.verify().ok).toBe(true);
  });

  it('budget.set whose setting cannot be written leaves no audit row claiming it, and the budget as it was', () => {
    const config = { current: ConfigSchema.parse({ hosts: [{ label: 'l20', ssh: { host: '127.0.0.1', user: 'u', agent: true }, pricePerHourUsd: 2, monthlyBudgetUsd: 10 }] }) };
    const svc = new BudgetService({
      settings: store.settings,
      audit: store.audit,
      config,
      fleet: { onDidRound: (l) => new Emitter<never>().on(l) },
      notices: { notify: () => undefined },
      clock: new FakeClock(),
      logger: silentLogger,
    });
    svc.set({ monthlyUsd: 500 }, 'operator:dana@web');
    expect(svc.status().fleet.monthlyUsd).toBe(500);
    refuseSettingsWrites();
    expect(() => svc.set({ monthlyUsd: 900 }, 'operator:dana@web')).toThrow(/disk I\/O error/);
    const sets = store.audit.list({ limit: 50 }).filter((e) => e.type === 'budget.set');
    expect(sets.map((e) => e.payload.new)).toEqual([500]);
    expect(svc.status().fleet.monthlyUsd).toBe(500);
    svc.dispose();
  });

  it('a silence whose row cannot be stored is neither audited nor in force; ending one likewise', () => {
    const book = new SilenceBook({ settings: store.settings, audit: store.audit, clock: new FakeClock(), logger: silentLogger, checkScope: () => undefined });
    const kept = book.set({ rule: 'all', host: 'l20', forMs: 3_600_000, reason: 'maintenance' }, 'operator:dana@web');
    refuseSettingsWrites();
    expect(() => book.set({ rule: 'all', host: 'strix', forMs: 3_600_000, reason: 'again' }, 'operator:dana@web')).toThrow(/disk I\/O error/);
    expect(() => book.end(kept.id, 'operator:dana@web')).toThrow(/disk I\/O error/);
    expect(book.inForce().map((x) => x.id)).toEqual([kept.id]);
    expect(store.audit.list({ limit: 50 }).map((e) => e.type)).toEqual(['alerts.silence.set']);
    book.dispose();
  });
});
