import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { renderHtml } from '../../../src-main/core/report/render-html.js';
import { renderMarkdown } from '../../../src-main/core/report/render-markdown.js';
import type { ActionView, CostWindow, DecisionKind, Evidence } from '../../../src-preload/contract/index.js';
import { WORLD_UPSTREAMS, startReportWorld, type ReportWorld } from '../../helpers/report-world.js';

// Issue #27 item 5: over generated histories — proposals, approvals (each
// verified or failed), rejections, withdrawals, standing approvals, expiries,
// generation readings and proxy requests with and without usage — a report
// over a random window says what the console recorded: its decision counts
// equal the audit log's, each action's wording matches its final state, its
// cost rows equal cost.summary's for the same window, and no unknown token
// count is rendered as 0. Real services on a real SQLite file, one FakeClock;
// fixed seed, bounded runs.

type Op =
  | { t: 'propose'; u: number }
  | { t: 'approve'; pick: number; fail: boolean }
  | { t: 'reject'; pick: number }
  | { t: 'withdraw'; pick: number; reason: boolean }
  | { t: 'standing'; u: number; minutes: number }
  | { t: 'wait'; minutes: number }
  | { t: 'rate'; host: 'h1' | 'h2'; gen: number | null }
  | { t: 'request'; host: 'h1' | 'h2'; tokens: number | null };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ t: fc.constant('propose' as const), u: fc.nat(2) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('approve' as const), pick: fc.nat(5), fail: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('reject' as const), pick: fc.nat(5) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('withdraw' as const), pick: fc.nat(5), reason: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('standing' as const), u: fc.nat(2), minutes: fc.integer({ min: 1, max: 30 }) }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('wait' as const), minutes: fc.integer({ min: 1, max: 20 }) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('rate' as const), host: fc.constantFrom('h1' as const, 'h2' as const), gen: fc.option(fc.integer({ min: 0, max: 120 }), { nil: null }) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('request' as const), host: fc.constantFrom('h1' as const, 'h2' as const), tokens: fc.option(fc.integer({ min: 1, max: 900 }), { nil: null }) }) },
);

/** One history with every kind of event, run first: a verification, a failure, a rejection, a withdrawal, a standing approval, an expiry, unknown tokens. */
const EVERY_KIND: Op[] = [
  { t: 'propose', u: 0 }, { t: 'approve', pick: 0, fail: false },
  { t: 'propose', u: 1 }, { t: 'approve', pick: 0, fail: true },
  { t: 'propose', u: 2 }, { t: 'reject', pick: 0 },
  { t: 'propose', u: 0 }, { t: 'withdraw', pick: 0, reason: true },
  { t: 'standing', u: 1, minutes: 10 }, { t: 'propose', u: 1 },
  { t: 'rate', host: 'h2', gen: null }, { t: 'request', host: 'h2', tokens: null }, { t: 'request', host: 'h2', tokens: 120 },
  { t: 'propose', u: 2 }, { t: 'wait', minutes: 16 },
];

const WINDOW_MS: Record<'1h' | '24h', number> = { '1h': 3_600_000, '24h': 86_400_000 };
const DECIDED: Record<string, DecisionKind> = { 'lifecycle.approved': 'approved', 'lifecycle.rejected': 'rejected', 'lifecycle.withdrawn': 'withdrawn', 'lifecycle.expired': 'expired' };

async function play(world: ReportWorld, ops: readonly Op[]): Promise<void> {
  const { lifecycle, clock } = world;
  const waiting = () => lifecycle.list(500).actions.filter((a) => a.state === 'proposed');
  const settleIfApproved = async (a: ActionView) => {
    if (a.state === 'approved' || a.state === 'running') await world.settle(a.id);
  };
  for (const o of ops) {
    if (o.t === 'propose') {
      const upstream = WORLD_UPSTREAMS[o.u]!;
      world.exitCodes.set(upstream.split('/')[0]!, 0);
      await settleIfApproved(lifecycle.propose({ upstream, kind: 'restart', proposer: 'policy:stuck-restart' }).action);
    } else if (o.t === 'standing') {
      const upstream = WORLD_UPSTREAMS[o.u]!;
      lifecycle.grantStanding({ upstream, kind: 'restart', durationMinutes: o.minutes, typedLabel: upstream.split('/')[0], caller: 'web' });
    } else if (o.t === 'wait') {
      world.advance(o.minutes * 60_000, 30_000);
    } else if (o.t === 'rate') {
      world.rates.set(o.host, o.gen);
      world.tick();
    } else if (o.t === 'request') {
      const upstream = o.host === 'h1' ? 'h1/qwen' : 'h2/gemma';
      world.requests.add({
        id: randomUUID(), ts: clock.now() - 900, client: 'app', class: 'interactive', endpoint: '/v1/chat/completions', model: upstream, upstream,
        stream: false, status: 200, errorCode: null, queueMs: 0, ttftMs: 90, totalMs: 800, tokensIn: 30, tokensOut: o.tokens, bytesIn: 10, bytesOut: 10, replayed: false,
      });
    } else {
      const list = waiting();
      const a = list[o.pick % Math.max(1, list.length)];
      // With nothing waiting, a decision has nothing to decide.
      if (a && o.t === 'approve') {
        world.exitCodes.set(a.label, o.fail ? 1 : 0);
        await settleIfApproved(lifecycle.approve({ id: a.id, nonce: a.nonce!, typedLabel: a.label, caller: 'web' }));
      } else if (a && o.t === 'reject') lifecycle.reject({ id: a.id, nonce: a.nonce!, reason: 'not now', caller: 'cli' });
      else if (a && o.t === 'withdraw') lifecycle.withdraw({ id: a.id, nonce: a.nonce!, reason: o.reason ? 'wrong host' : undefined, caller: 'cli' });
    }
    clock.advance(1_000);
  }
}

/** What the audit log says about the actions proposed in [fromMs, toMs): each one's decision and outcome. */
function fromAudit(world: ReportWorld, fromMs: number, toMs: number) {
  const events = world.store.audit.list({ limit: 1000 });
  const proposed = new Set(events.filter((e) => e.type === 'lifecycle.proposed' && e.ts >= fromMs && e.ts < toMs).map((e) => String(e.payload.actionId)));
  const count = (pred: (type: string) => boolean) => new Set(events.filter((e) => pred(e.type) && proposed.has(String(e.payload.actionId))).map((e) => e.payload.actionId)).size;
  const decided = (kind: DecisionKind) => count((t) => DECIDED[t] === kind);
  const approved = decided('approved');
  const rejected = decided('rejected');
  const withdrawn = decided('withdrawn');
  const expired = decided('expired');
  return {
    proposed: proposed.size, approved, rejected, withdrawn, expired, pending: proposed.size - approved - rejected - withdrawn - expired,
    verified: count((t) => t === 'lifecycle.verified'), failed: count((t) => t === 'lifecycle.failed'),
  };
}

const STATE_DECISION: Record<string, DecisionKind | null> = {
  proposed: null, approved: 'approved', running: 'approved', verified: 'approved', failed: 'approved', rejected: 'rejected', withdrawn: 'withdrawn', expired: 'expired',
};
const WORDS: Record<DecisionKind | 'none', string> = { approved: 'approved by', rejected: 'rejected by', withdrawn: 'withdrawn by', expired: 'expired without a decision', none: 'waiting for a decision' };

function checkWording(e: Evidence, md: string, html: string): void {
  const rowOf = (id: string) => md.split('\n').find((l) => l.includes(id)) ?? '';
  const trOf = (id: string) => html.slice(html.lastIndexOf('<tr', html.indexOf(id)), html.indexOf('</tr>', html.indexOf(id)));
  for (const a of e.lifecycle!.actions) {
    expect(a.decision, `${a.id} ${a.state}`).toBe(STATE_DECISION[a.state]);
    expect(a.approvedBy !== null, a.id).toBe(a.decision === 'approved');
    expect(a.rejectedBy !== null, a.id).toBe(a.decision === 'rejected');
    expect(a.withdrawnBy !== null, a.id).toBe(a.decision === 'withdrawn');
    for (const [kind, words] of Object.entries(WORDS)) {
      const mine = kind === (a.decision ?? 'none');
      expect(rowOf(a.id).includes(words), `${a.id} (${a.state}) md "${words}"`).toBe(mine);
      expect(trOf(a.id).includes(words), `${a.id} (${a.state}) html "${words}"`).toBe(mine);
    }
  }
}

function checkCost(world: ReportWorld, e: Evidence, md: string, window: CostWindow, endMs: number): void {
  const summary = world.telemetry.costSummary({ window, endMs });
  for (const row of e.cost!) {
    const { host, pricePerHourUsd: _p, perMillionOutputUsageBased, perMillionOutputReservationBased, ...figures } = row;
    const ui = summary.hosts.find((h) => h.host === host)!;
    expect(figures, host).toEqual(ui.window);
    expect(perMillionOutputUsageBased, host).toEqual(ui.perMillionOutputUsageBased);
    expect(perMillionOutputReservationBased, host).toEqual(ui.perMillionOutputReservationBased);
    const cells = (md.split('\n').find((l) => l.startsWith(`| ${host} | `) && l.includes(row.outputTokensBasis.slice(0, 20))) ?? '').split(' | ');
    if (row.outputTokens === null) {
      expect(cells[3], `${host}: unknown tokens`).toBe('—');
      expect(row.perMillionOutputUsageBased.value, host).toBeNull();
    }
  }
  for (const c of summary.byModel) if (c.completionTokens === 0) expect(c.requestsWithoutTokens ?? 0, c.key).toBe(0);
}

describe('reports over generated histories', () => {
  it('count, word and cost what the console recorded', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 4, maxLength: 14 }), fc.constantFrom<'1h' | '24h'>('1h', '24h'), fc.oneof(fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true })), async (ops, window, back) => {
        const world = await startReportWorld();
        try {
          world.rates.set('h1', 40);
          world.tick();
          const start = world.clock.now();
          await play(world, ops);
          const now = world.clock.now();
          // A window that ends by now (cost.summary cuts a later end at now and counts its length back from there).
          const endMs = Math.min(now, Math.round(start + 1 + back * (now - start)));
          const fromMs = endMs - WINDOW_MS[window];
          const e = await world.preview({ fromMs, toMs: endMs, sections: ['lifecycle', 'cost'], live: false });
          const { actions: _a, drained: _d, aborted: _b, ...counts } = e.lifecycle!;
          expect(counts).toEqual(fromAudit(world, fromMs, endMs));
          expect(e.notes.filter((n) => n.includes('audit log records'))).toEqual([]);
          const md = renderMarkdown(e, { evidenceSha256: 'd'.repeat(64) });
          const html = renderHtml(e, { evidenceSha256: 'd'.repeat(64) });
          if (counts.proposed > 0) expect(md).toContain(`approved ${counts.approved} · rejected ${counts.rejected} · withdrawn ${counts.withdrawn}`);
          else expect(md).toContain('No lifecycle action was proposed in the window.');
          checkWording(e, md, html);
          checkCost(world, e, md, window, endMs);
          for (const text of [md, html, JSON.stringify(e)]) expect(text).not.toMatch(/NaN|Infinity/);
        } finally {
          await world.close();
        }
      }),
      { seed: 27, numRuns: 10, endOnFailure: true, examples: [[EVERY_KIND, '1h', 1]] },
    );
  }, 120_000);
});
