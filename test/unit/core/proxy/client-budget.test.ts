import { describe, expect, it } from 'vitest';
import { FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { ConfigSchema } from '../../../../src-main/core/config/index.js';
import { costShares, spanFromRequestRow, type RequestSpan, type RequestSpanRow } from '../../../../src-main/core/cost/index.js';
import { ClientBudget } from '../../../../src-main/core/proxy/index.js';
import { openStore } from '../../../../src-main/core/store/index.js';
import { DEFAULT_TOKEN_LIMITS, type TokenLimits } from '../../../../src-preload/contract/index.js';

// A token's month spend is cost.summary byClient's figure (costShares over the month's answered rows), and
// 50 / 80 / 100 % are announced once per token per month, kept across a restart.

const START = Date.parse('2026-12-05T00:00:00Z');
const HOUR = 3_600_000;

function setup() {
  const config = {
    current: ConfigSchema.parse({
      hosts: [{ label: 'h', pricePerHourUsd: 2, ssh: { host: '127.0.0.1', user: 'x', agent: true }, services: [{ id: 's', kind: 'vllm', remotePort: 8000, model: 'm' }] }],
    }),
  };
  const clock = new FakeClock(START + 10 * HOUR);
  const rows: RequestSpanRow[] = [];
  const notices: { key: string; severity: string; body: string }[] = [];
  const store = openStore({ file: ':memory:' });
  const budgets = new Map<string, TokenLimits>([['app', { ...DEFAULT_TOKEN_LIMITS, budgetUsd: 4 }]]);
  const make = () =>
    new ClientBudget({
      windows: { answered: (from, to) => rows.filter((r) => r.ts >= from && r.ts < to) },
      config,
      budgets: () => budgets,
      audit: store.audit,
      settings: store.settings,
      notices: { notify: (n) => notices.push(n) },
      clock,
      logger: silentLogger,
    });
  const hour = (client: string, at: number) => rows.push({ ts: at, total_ms: HOUR, model: 'm', client, tokens_out: 10, upstream: 'h/s' });
  return { config, clock, rows, notices, store, make, hour };
}

describe('ClientBudget', () => {
  it("spend equals cost.summary byClient's for the month; unknown before the first computation, 0 for a client with no rows", () => {
    const w = setup();
    w.hour('app', START + HOUR);
    w.hour('other', START + HOUR); // concurrent: each gets half of that hour
    const b = w.make();
    expect(b.spentUsd('app')).toBeNull();
    // The first figure 2 s after start, without waiting for the minute's refresh.
    w.clock.advance(2_000);
    const spans = w.rows.map(spanFromRequestRow).filter((s): s is RequestSpan => s !== null);
    const byClient = costShares(spans, (s) => s.client, () => 2, { fromMs: Date.parse('2026-12-01T00:00:00Z'), toMs: w.clock.now() });
    expect(b.spentUsd('app')).toBe(byClient.find((c) => c.key === 'app')!.cost.value);
    expect(b.spentUsd('app')).toBeCloseTo(1);
    expect(b.spentUsd('nobody')).toBe(0);
    b.dispose();
  });

  it('50 / 80 / 100 % each notify and audit once a month, not again after a restart', () => {
    const w = setup();
    w.hour('app', START + HOUR); // $2 of $4: 50 %
    const b = w.make();
    b.refresh();
    b.refresh();
    expect(w.notices.map((n) => n.key)).toEqual(['token-budget:app:2026-12:50']);
    w.hour('app', START + 3 * HOUR); // $4: 80 and 100 at once
    b.refresh();
    expect(w.notices.map((n) => n.key)).toEqual(['token-budget:app:2026-12:50', 'token-budget:app:2026-12:80', 'token-budget:app:2026-12:100']);
    expect(w.notices[2]).toMatchObject({ severity: 'critical' });
    expect(w.notices[2]!.body).toContain('refused (402 budget_exhausted)');
    b.dispose();
    const again = w.make();
    again.refresh();
    expect(w.notices).toHaveLength(3);
    const audited = w.store.audit.list({ limit: 10 }).filter((e) => e.type === 'proxy.token.budget');
    expect(audited.map((e) => (e.payload as { pct: number }).pct).sort((a, b) => a - b)).toEqual([50, 80, 100]);
    expect(again.useOf('app', { ...DEFAULT_TOKEN_LIMITS, budgetUsd: 4 })).toMatchObject({ month: '2026-12', spentUsd: 4, pctUsed: 100, crossed: [50, 80, 100] });
    again.dispose();
  });
});
