import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { renderHtml } from '../../../src-main/core/report/render-html.js';
import { renderMarkdown } from '../../../src-main/core/report/render-markdown.js';
import type { ActionView, Evidence } from '../../../src-preload/contract/index.js';
import { WORLD_T0, startReportWorld, type ReportWorld } from '../../helpers/report-world.js';

// Issue #27 finding 1: a signed report said a rejected proposal was approved
// ("Proposed 4 · approved 4 · rejected 1"; the rejected row read "approved by
// root … rejected"). Through the real action queue on SQLite: one approval,
// one rejection, one withdrawal, one expiry and one still waiting; the report's
// counts, each row's wording and the audit log must tell the same story, in
// Markdown, HTML and JSON.

let world: ReportWorld;
beforeEach(async () => {
  world = await startReportWorld();
  world.rates.set('h1', 50);
  world.rates.set('h2', 20);
  world.tick();
});
afterEach(() => world.close());

const SHA = 'a'.repeat(64);
const rowOf = (md: string, id: string) => md.split('\n').find((l) => l.includes(id)) ?? '';

async function shift(): Promise<{ approved: ActionView; rejected: ActionView; withdrawn: ActionView; expired: ActionView; waiting: ActionView }> {
  const { lifecycle } = world;
  const propose = (upstream: string) => lifecycle.propose({ upstream, kind: 'restart', proposer: 'operator:root@cli' }).action;
  const first = propose('h3/llm');
  world.advance(16 * 60_000, 10_000); // no decision in 15 min: expires
  const a = propose('h1/qwen');
  lifecycle.approve({ id: a.id, nonce: a.nonce!, typedLabel: 'h1', displayName: 'Dana Night-Shift', caller: 'web' });
  const approved = await world.settle(a.id);
  const r = propose('h2/gemma');
  const rejected = lifecycle.reject({ id: r.id, nonce: r.nonce!, reason: 'not during the demo', caller: 'cli' });
  const w = propose('h3/llm');
  const withdrawn = lifecycle.withdraw({ id: w.id, nonce: w.nonce!, caller: 'cli' });
  const waiting = propose('h2/gemma');
  world.advance(60_000);
  return { approved, rejected, withdrawn, expired: lifecycle.get(first.id), waiting };
}

describe('a report after one approval, one rejection and one withdrawal', () => {
  it('counts each decision once, words each row by its final state, and agrees with the audit log', async () => {
    const { approved, rejected, withdrawn, expired, waiting } = await shift();
    expect(approved.state).toBe('verified');
    expect(rejected).toMatchObject({ state: 'rejected', decision: 'rejected', approver: null, rejectedBy: { osUser: 'root', via: 'cli' } });
    const e: Evidence = await world.preview({ fromMs: WORLD_T0, toMs: world.clock.now(), sections: ['lifecycle', 'cost'], live: false });
    expect(e.lifecycle).toMatchObject({ proposed: 5, approved: 1, rejected: 1, withdrawn: 1, expired: 1, pending: 1, verified: 1, failed: 0 });

    // The audit log says the same: one decision event per decided action, of the same kind.
    const decisions = world.store.audit.list({ limit: 500 }).filter((ev) => /^lifecycle\.(approved|rejected|withdrawn|expired)$/.test(ev.type));
    expect(decisions.map((ev) => [ev.payload.actionId, ev.type.slice('lifecycle.'.length)]).sort()).toEqual(
      [[approved.id, 'approved'], [rejected.id, 'rejected'], [withdrawn.id, 'withdrawn'], [expired.id, 'expired']].sort(),
    );
    expect(e.notes.filter((n) => n.includes('audit log records'))).toEqual([]);

    // JSON: only the approval names an approver.
    const byId = new Map(e.lifecycle!.actions.map((a) => [a.id, a]));
    expect(byId.get(approved.id)).toMatchObject({ decision: 'approved', approvedBy: 'Dana Night-Shift (root, via web)', rejectedBy: null, withdrawnBy: null });
    expect(byId.get(rejected.id)).toMatchObject({ decision: 'rejected', approvedBy: null, rejectedBy: 'root (root, via cli)', decisionReason: 'not during the demo', error: null });
    expect(byId.get(withdrawn.id)).toMatchObject({ decision: 'withdrawn', approvedBy: null, withdrawnBy: 'root (root, via cli)', decisionReason: null });
    expect(byId.get(expired.id)).toMatchObject({ decision: 'expired', approvedBy: null, rejectedBy: null, withdrawnBy: null });
    expect(byId.get(waiting.id)).toMatchObject({ decision: null, approvedBy: null, decidedAt: null });

    // Markdown and HTML: the counts line, and each row's wording.
    const md = renderMarkdown(e, { evidenceSha256: SHA });
    expect(md).toContain('Proposed 5 · approved 1 · rejected 1 · withdrawn 1 · expired 1 · waiting 1 · verified 1 · failed 0');
    expect(rowOf(md, approved.id)).toContain('approved by **Dana Night-Shift (root, via web)**');
    expect(rowOf(md, rejected.id)).toContain('rejected by **root (root, via cli)**');
    expect(rowOf(md, rejected.id)).toContain('because not during the demo');
    expect(rowOf(md, withdrawn.id)).toContain('withdrawn by **root (root, via cli)**');
    expect(rowOf(md, expired.id)).toContain('expired without a decision');
    expect(rowOf(md, waiting.id)).toContain('waiting for a decision');
    for (const id of [rejected.id, withdrawn.id, expired.id, waiting.id]) expect(rowOf(md, id)).not.toContain('approved by');
    const html = renderHtml(e, { evidenceSha256: SHA });
    const trOf = (id: string) => html.slice(html.lastIndexOf('<tr', html.indexOf(id)), html.indexOf('</tr>', html.indexOf(id)));
    expect(html).toContain('Proposed 5 · approved 1 · rejected 1 · withdrawn 1');
    expect(trOf(rejected.id)).toContain('rejected by <strong>root (root, via cli)</strong>');
    expect(trOf(rejected.id)).not.toContain('approved by');
    expect(trOf(withdrawn.id)).toContain('withdrawn by <strong>root (root, via cli)</strong>');
    expect(trOf(approved.id)).toContain('approved by <strong>Dana Night-Shift (root, via web)</strong>');
  }, 60_000);

  it('a standing approval is named as such, and counts as the approval it is', async () => {
    world.lifecycle.grantStanding({ upstream: 'h1/qwen', kind: 'restart', durationMinutes: 60, typedLabel: 'h1', caller: 'web' });
    const { action } = world.lifecycle.propose({ upstream: 'h1/qwen', kind: 'restart', proposer: 'policy:stuck-restart' });
    const done = await world.settle(action.id);
    const e = await world.preview({ fromMs: WORLD_T0, toMs: world.clock.now(), sections: ['lifecycle'], live: false });
    expect(e.lifecycle).toMatchObject({ proposed: 1, approved: 1, rejected: 0 });
    expect(e.lifecycle!.actions[0]!.approvedBy).toBe(`standing approval ${done.standingApprovalId} granted by operator:root@web`);
  }, 60_000);
});
