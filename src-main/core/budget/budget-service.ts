import type { BudgetLine, BudgetSetInput, BudgetStatus, HostConnectionState } from '../../../src-preload/contract/index.js';
import { AppError, DisposableStore, type Clock, type Disposable, type Logger } from '../base/index.js';
import type { Config } from '../config/index.js';
import { hoursUntilBudgetGate } from '../cost/index.js';
import type { Notices } from '../notify/index.js';
import type { AuditLog, SettingsRepository } from '../store/index.js';
import { accrualMs, crossedThresholds, monthKeyUtc, monthStartUtc, newlyCrossed } from './budget-math.js';
import { BudgetErrorCode } from './errors.js';

const OVERRIDES_KEY = 'budget.overrides';
const MONTH_KEY = 'budget.month';
const PERSIST_EVERY_MS = 10_000;

export const BUDGET_BASIS =
  'estimate: price per hour × the time this console saw the host connected, this calendar month (UTC); time while the console was not running is not counted';

interface Overrides {
  fleet: number | null;
  hosts: Record<string, number>;
}

interface MonthState {
  month: string;
  hosts: Record<string, { runningMs: number; spentUsd: number }>;
  /** Thresholds already fired this month, by scope (`fleet` or `host:<label>`). */
  fired: Record<string, number[]>;
}

/** What the budget reads of one state of the fleet (its FleetState satisfies it): which hosts run, at what price. */
export interface BudgetFleetState {
  readonly at: number;
  readonly hosts: readonly { readonly label: string; readonly session: { readonly state: HostConnectionState }; readonly config: { readonly pricePerHourUsd?: number | null } }[];
}

export interface BudgetFleet {
  /** The fleet's state at the end of each poll round. */
  onDidRound(listener: (state: BudgetFleetState) => void): Disposable;
}

export interface BudgetServiceDeps {
  settings: SettingsRepository;
  audit: Pick<AuditLog, 'append'>;
  config: { readonly current: Config };
  fleet: BudgetFleet;
  notices: Notices;
  clock: Clock;
  logger: Logger;
  /** Longest gap between two ticks still counted as running (default 60 s). */
  maxGapMs?: number;
}

function validAmount(v: number | null): boolean {
  return v === null || (typeof v === 'number' && Number.isFinite(v) && v > 0 && v <= 1e9);
}

/**
 * Monthly budgets (config default, UI override, audited), the estimated spend
 * this UTC month from sampled host up time (persisted in settings so a restart
 * keeps it), and the 50 / 80 / 100 % alerts, each once per scope per month.
 */
export class BudgetService implements Disposable {
  private readonly disposables = new DisposableStore();
  private overrides: Overrides;
  private state: MonthState;
  private readonly lastSeen = new Map<string, { at: number; running: boolean; price: number | null }>();
  private lastPersistAt = 0;
  private readonly maxGapMs: number;

  constructor(private readonly deps: BudgetServiceDeps) {
    this.maxGapMs = deps.maxGapMs ?? 60_000;
    const o = deps.settings.get<Overrides>(OVERRIDES_KEY);
    this.overrides = { fleet: o?.fleet ?? null, hosts: { ...(o?.hosts ?? {}) } };
    const month = monthKeyUtc(deps.clock.now());
    const s = deps.settings.get<MonthState>(MONTH_KEY);
    this.state = s && s.month === month ? s : { month, hosts: {}, fired: {} };
    this.disposables.add(deps.fleet.onDidRound((state) => this.observe(state)));
  }

  /** The budget in force for a host (override, else config), or null. */
  monthlyUsdFor(host: string): number | null {
    return this.budgetIn(this.overrides, host);
  }

  fleetMonthlyUsd(): number | null {
    return this.budgetIn(this.overrides, undefined);
  }

  /** The budget of `host` (undefined: the fleet) under `overrides`: the override, else the config's, else null. */
  private budgetIn(overrides: Overrides, host: string | undefined): number | null {
    const cfg = this.deps.config.current;
    if (host === undefined) return overrides.fleet ?? cfg.budget?.monthlyUsd ?? null;
    return overrides.hosts[host] ?? cfg.hosts.find((h) => h.label === host)?.monthlyBudgetUsd ?? null;
  }

  /** Estimated spend of a host this month (0 when it has not been seen running). */
  spentThisMonthUsd(host: string): number {
    this.rollMonth(this.deps.clock.now());
    return this.state.hosts[host]?.spentUsd ?? 0;
  }

  /** One poll round: accrue running time of connected hosts, then check thresholds. */
  observe(state: BudgetFleetState): void {
    const now = state.at;
    this.rollMonth(now);
    for (const h of state.hosts) {
      const prev = this.lastSeen.get(h.label);
      const running = h.session.state === 'connected';
      if (prev?.running) {
        const ms = accrualMs(prev.at, now, this.maxGapMs);
        const e = (this.state.hosts[h.label] ??= { runningMs: 0, spentUsd: 0 });
        e.runningMs += ms;
        if (prev.price !== null && prev.price > 0) e.spentUsd += (prev.price * ms) / 3_600_000;
      }
      this.lastSeen.set(h.label, { at: now, running, price: h.config.pricePerHourUsd ?? null });
    }
    const fired = this.checkThresholds(now);
    if (fired || now - this.lastPersistAt >= PERSIST_EVERY_MS) this.persist(now);
  }

  status(): BudgetStatus {
    const now = this.deps.clock.now();
    this.rollMonth(now);
    const cfg = this.deps.config.current;
    const hosts = cfg.hosts.map((h) => this.line('host', h.label, this.overrides.hosts[h.label] ?? null, h.monthlyBudgetUsd ?? null, h.pricePerHourUsd ?? null));
    const runningPrice = cfg.hosts.reduce((sum, h) => sum + (this.lastSeen.get(h.label)?.running ? (h.pricePerHourUsd ?? 0) : 0), 0);
    const fleet = this.line('fleet', null, this.overrides.fleet, cfg.budget?.monthlyUsd ?? null, runningPrice > 0 ? runningPrice : null);
    return { month: this.state.month, monthStartMs: monthStartUtc(now), basis: BUDGET_BASIS, fleet, hosts };
  }

  /** Sets (or with null clears) the override of a host's or the fleet's budget; audited as `budget.set`. */
  set(input: BudgetSetInput, actor: string): BudgetStatus {
    const { host, monthlyUsd } = input;
    if (!validAmount(monthlyUsd)) {
      throw new AppError(BudgetErrorCode.INVALID_AMOUNT, `monthlyUsd must be a number more than 0 and at most 1,000,000,000 (got ${String(monthlyUsd)})`, {
        details: { field: 'monthlyUsd' },
      });
    }
    if (host !== undefined && !this.deps.config.current.hosts.some((h) => h.label === host)) {
      throw new AppError(BudgetErrorCode.UNKNOWN_HOST, `no host "${host}" in the inventory`, { details: { field: 'host', host } });
    }
    const oldUsd = host === undefined ? this.overrides.fleet : (this.overrides.hosts[host] ?? null);
    const next: Overrides = { fleet: this.overrides.fleet, hosts: { ...this.overrides.hosts } };
    if (host === undefined) next.fleet = monthlyUsd;
    else if (monthlyUsd === null) delete next.hosts[host];
    else next.hosts[host] = monthlyUsd;
    // Audited and stored in one transaction: a change the log cannot record is not made, and a kill in
    // between leaves neither an audit row for a change that was not stored nor a change without its row.
    this.deps.settings.atomically(() => {
      this.deps.audit.append({
        type: 'budget.set',
        actor,
        target: host ?? 'fleet',
        payload: { scope: host === undefined ? 'fleet' : 'host', old: oldUsd, new: monthlyUsd, effective: this.budgetIn(next, host) },
      });
      this.deps.settings.set(OVERRIDES_KEY, next);
    });
    this.overrides = next;
    const now = this.deps.clock.now();
    this.rollMonth(now);
    if (this.checkThresholds(now)) this.persist(now);
    return this.status();
  }

  private line(scope: 'host' | 'fleet', host: string | null, override: number | null, configUsd: number | null, pricePerHour: number | null): BudgetLine {
    const monthlyUsd = override ?? configUsd;
    const spentUsd = host === null ? this.fleetSpent() : (this.state.hosts[host]?.spentUsd ?? 0);
    const runningMs = host === null ? Object.values(this.state.hosts).reduce((n, e) => n + e.runningMs, 0) : (this.state.hosts[host]?.runningMs ?? 0);
    const gate = hoursUntilBudgetGate(monthlyUsd, spentUsd, pricePerHour);
    return {
      scope,
      host,
      monthlyUsd,
      source: override !== null ? 'override' : configUsd !== null ? 'config' : 'none',
      configUsd,
      spentUsd,
      runningHours: runningMs / 3_600_000,
      pctUsed: monthlyUsd === null || !(monthlyUsd > 0) ? null : Math.min(1e9, (spentUsd / monthlyUsd) * 100),
      hoursToGate: gate.value,
      crossed: crossedThresholds(spentUsd, monthlyUsd),
    };
  }

  private fleetSpent(): number {
    return Object.values(this.state.hosts).reduce((n, e) => n + e.spentUsd, 0);
  }

  private rollMonth(now: number): void {
    const month = monthKeyUtc(now);
    if (month === this.state.month) return;
    this.state = { month, hosts: {}, fired: {} };
    this.persist(now);
  }

  /** Fires each threshold newly crossed (per host and fleet); true when any fired. */
  private checkThresholds(now: number): boolean {
    let any = false;
    const scopes: { key: string; host: string | null; budget: number | null; spent: number }[] = [
      ...this.deps.config.current.hosts.map((h) => ({ key: `host:${h.label}`, host: h.label, budget: this.monthlyUsdFor(h.label), spent: this.state.hosts[h.label]?.spentUsd ?? 0 })),
      { key: 'fleet', host: null, budget: this.fleetMonthlyUsd(), spent: this.fleetSpent() },
    ];
    for (const s of scopes) {
      const fired = this.state.fired[s.key] ?? [];
      const fresh = newlyCrossed(s.spent, s.budget, fired);
      if (fresh.length === 0) continue;
      this.state.fired[s.key] = [...fired, ...fresh];
      any = true;
      for (const pct of fresh) this.fire(s.host, pct, s.spent, s.budget!, now);
    }
    return any;
  }

  private fire(host: string | null, pct: number, spentUsd: number, monthlyUsd: number, now: number): void {
    const who = host ?? 'fleet';
    const severity = pct >= 100 ? 'critical' : 'warning';
    const message = `${who}: estimated spend $${spentUsd.toFixed(2)} reached ${pct}% of the monthly budget $${monthlyUsd.toFixed(2)} (${this.state.month} UTC)`;
    this.deps.audit.append({
      type: 'budget.threshold',
      actor: 'system',
      target: who,
      payload: { month: this.state.month, pct, severity, spentUsd: Math.round(spentUsd * 100) / 100, monthlyUsd, at: now },
    });
    this.deps.notices.notify({
      key: `budget:${who}:${this.state.month}:${pct}`,
      severity,
      title: `${who}: ${pct}% of monthly budget`,
      body: message,
      route: host === null ? 'fleet' : `hosts/${host}`,
      event: 'budget.threshold',
    });
  }

  private persist(now: number): void {
    try {
      this.deps.settings.set(MONTH_KEY, this.state);
      this.lastPersistAt = now;
    } catch (err) {
      this.deps.logger.warn('could not persist budget spend', { error: err instanceof Error ? err.message : String(err) });
    }
  }

  dispose(): Promise<void> {
    this.persist(this.deps.clock.now());
    return this.disposables.dispose();
  }
}
