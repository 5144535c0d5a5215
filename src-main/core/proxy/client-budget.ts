// Monthly budgets of client tokens: each token's estimated spend this UTC month
// by the one cost split the UI uses (cost.summary byClient: costShares over the
// month's answered request rows, GPU time shared among concurrent requests ×
// host price), recomputed off the request path every `intervalMs` while any
// token has a budget. The request path reads the last figure (a map lookup),
// so a budget can be passed by what the client spends within one interval plus
// the request log's flush delay (after a start, the first figure comes 2 s in).
// 50 / 80 / 100 % notify and audit once per token per month (persisted, so a
// restart does not repeat them).
import type { TokenBudgetUse, TokenLimits } from '../../../src-preload/contract/index.js';
import { toAppError, type Clock, type Disposable, type Logger } from '../base/index.js';
import { monthKeyUtc, monthStartUtc, newlyCrossed, crossedThresholds } from '../budget/index.js';
import type { Config } from '../config/index.js';
import { costShares, spanFromRequestRow, type RequestSpan } from '../cost/index.js';
import type { Notices } from '../notify/index.js';
import type { AuditLog, SettingsRepository } from '../store/index.js';
import type { ClientSpend } from './client-limits.js';
import type { RequestWindows } from './request-window.js';

const FIRED_KEY = 'proxy.clientBudget.fired';
export const CLIENT_BUDGET_INTERVAL_MS = 60_000;
const FIRST_REFRESH_MS = 2_000;

export interface ClientBudgetDeps {
  windows: Pick<RequestWindows, 'answered'>;
  config: { readonly current: Config };
  /** Live tokens with a budget in force (config merged), by name. */
  budgets: () => ReadonlyMap<string, TokenLimits>;
  audit: Pick<AuditLog, 'append'>;
  settings: SettingsRepository;
  notices: Notices | null;
  clock: Clock;
  logger: Logger;
  intervalMs?: number;
}

interface Fired {
  month: string;
  fired: Record<string, number[]>;
}

export class ClientBudget implements ClientSpend, Disposable {
  private spent = new Map<string, number | null>();
  private month: string;
  private computedAt: number | null = null;
  private fired: Fired;
  private readonly timers: Disposable[];

  constructor(private readonly deps: ClientBudgetDeps) {
    const now = deps.clock.now();
    this.month = monthKeyUtc(now);
    const stored = readFired(deps.settings, deps.logger);
    this.fired = stored?.month === this.month ? stored : { month: this.month, fired: {} };
    // The first figure soon after start (a restart must not leave budgets unchecked for a whole interval),
    // yet not inside start-up itself: the month's rows can take a while to read.
    this.timers = [deps.clock.setTimeout(() => this.refresh(), FIRST_REFRESH_MS), deps.clock.setInterval(() => this.refresh(), deps.intervalMs ?? CLIENT_BUDGET_INTERVAL_MS)];
  }

  /** The month's spend of `client`; null before the first computation or when a host that served it has no price. */
  spentUsd(client: string): number | null {
    if (this.computedAt === null || monthKeyUtc(this.deps.clock.now()) !== this.month) return null;
    // Computed, and no answered request this month: nothing spent (known, not unknown).
    return this.spent.has(client) ? this.spent.get(client)! : 0;
  }

  /** What a token view shows; null without a budget. */
  useOf(client: string, limits: TokenLimits): TokenBudgetUse | null {
    if (limits.budgetUsd === null) return null;
    const spentUsd = this.spentUsd(client);
    return {
      month: monthKeyUtc(this.deps.clock.now()),
      spentUsd,
      pctUsed: spentUsd === null ? null : (spentUsd / limits.budgetUsd) * 100,
      crossed: spentUsd === null ? [] : crossedThresholds(spentUsd, limits.budgetUsd),
      computedAt: this.computedAt,
    };
  }

  /** Recomputes the month's spend per client and fires thresholds newly crossed; skipped while no token has a budget. */
  refresh(): void {
    try {
      const budgets = this.deps.budgets();
      if (budgets.size === 0) return;
      const now = this.deps.clock.now();
      this.rollMonth(now);
      const from = monthStartUtc(now);
      const spans = this.deps.windows.answered(from, now).map(spanFromRequestRow).filter((s): s is RequestSpan => s !== null);
      const priceOf = (label: string) => this.deps.config.current.hosts.find((h) => h.label === label)?.pricePerHourUsd ?? null;
      const shares = costShares(spans, (s) => s.client, priceOf, { fromMs: from, toMs: now });
      this.spent = new Map(shares.map((s) => [s.key, s.cost.value]));
      this.computedAt = now;
      for (const [name, limits] of budgets) this.checkThresholds(name, limits, now);
    } catch (err) {
      this.deps.logger.warn('client budget spend not computed', { error: toAppError(err).message });
    }
  }

  private rollMonth(now: number): void {
    const month = monthKeyUtc(now);
    if (month === this.month) return;
    this.month = month;
    this.spent = new Map();
    this.computedAt = null;
    this.fired = { month, fired: {} };
  }

  private checkThresholds(name: string, limits: TokenLimits, now: number): void {
    const spent = this.spent.get(name) ?? 0;
    if (limits.budgetUsd === null || this.spent.get(name) === null) return;
    const done = this.fired.fired[name] ?? [];
    const fresh = newlyCrossed(spent, limits.budgetUsd, done);
    if (fresh.length === 0) return;
    this.fired.fired[name] = [...done, ...fresh];
    try {
      this.deps.settings.set(FIRED_KEY, this.fired);
    } catch (err) {
      this.deps.logger.warn('could not persist client budget thresholds', { error: toAppError(err).message });
    }
    for (const pct of fresh) this.fire(name, pct, spent, limits, now);
  }

  private fire(name: string, pct: number, spentUsd: number, limits: TokenLimits, now: number): void {
    const budgetUsd = limits.budgetUsd!;
    const severity = pct >= 100 ? 'critical' : 'warning';
    const then = pct >= 100 ? (limits.budgetAction === 'refuse' ? 'its requests are refused (402 budget_exhausted) until the next month' : 'it is only warned (budgetAction: warn)') : '';
    const body = `client token "${name}": estimated spend $${spentUsd.toFixed(2)} reached ${pct}% of its monthly budget $${budgetUsd.toFixed(2)} (${this.month} UTC)${then ? `; ${then}` : ''}`;
    this.deps.audit.append({
      type: 'proxy.token.budget',
      actor: 'system',
      target: name,
      payload: { month: this.month, pct, severity, spentUsd: Math.round(spentUsd * 100) / 100, budgetUsd, budgetAction: limits.budgetAction, at: now },
    });
    this.deps.notices?.notify({ key: `token-budget:${name}:${this.month}:${pct}`, severity, title: `token ${name}: ${pct}% of monthly budget`, body, route: 'proxy', event: 'budget.threshold' });
  }

  dispose(): void {
    for (const t of this.timers) void t.dispose();
  }
}

function readFired(settings: SettingsRepository, logger: Logger): Fired | null {
  try {
    return settings.get<Fired>(FIRED_KEY) ?? null;
  } catch (err) {
    logger.warn('ignoring unreadable client budget thresholds', { error: toAppError(err).message });
    return null;
  }
}
