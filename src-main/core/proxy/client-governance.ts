// The per-client governance parts the proxy service wires together: the token
// repository (whose views show the limits in force and the budget's use), the
// monthly budget tracker and the request path's limits. Built as one because
// each reads the others: views read the budget, the budget reads which tokens
// have one, and the limits read the budget's spend.
import { performance } from 'node:perf_hooks';
import type { TokenLimits } from '../../../src-preload/contract/index.js';
import type { Clock, Logger } from '../base/index.js';
import type { ConfigService } from '../config/index.js';
import type { Notices } from '../notify/index.js';
import type { Store } from '../store/index.js';
import { ClientBudget } from './client-budget.js';
import { ClientLimits } from './client-limits.js';
import { mergeLimits } from './client-policy.js';
import { requestWindows } from './request-window.js';
import { createTokenRepository, type TokenRepository } from './tokens.js';

export interface Governance {
  tokens: TokenRepository;
  budget: ClientBudget;
  limits: ClientLimits;
}

export function buildGovernance(d: { store: Store; config: ConfigService; clock: Clock; logger: Logger; notices: Notices | null }): Governance {
  const { store, config, clock, logger } = d;
  // Views show the limits in force: config `proxy.clients` merged over the stored ones, and the month's spend.
  const tokens = createTokenRepository(store.db, clock, {
    view: (name, stored) => {
      const merged = mergeLimits(stored, config.current.proxy.clients[name]);
      return { ...merged, budget: budget.useOf(name, merged.limits) };
    },
  });
  const budget: ClientBudget = new ClientBudget({
    windows: requestWindows(store.db),
    config,
    budgets: () => {
      const out = new Map<string, TokenLimits>();
      for (const t of tokens.list()) if (t.revokedAt === null && t.limits.budgetUsd !== null) out.set(t.name, t.limits);
      return out;
    },
    audit: store.audit,
    settings: store.settings,
    notices: d.notices,
    clock,
    logger: logger.child('client-budget'),
  });
  const env = {
    clock,
    mono: () => performance.now(),
    // Read per request: a config reload applies from the next one.
    get settings() {
      return config.current.proxy;
    },
  };
  return { tokens, budget, limits: new ClientLimits(env, budget) };
}
