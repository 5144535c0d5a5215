import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionView, CostSummary, Evidence, FleetSnapshot } from '../../src-preload/contract/index.js';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import { bridgeCall, type RunningConsole } from '../helpers/console-process.js';

// Issue #27, done when: "a report built on the demo after one approval, one
// rejection and one withdrawal reads 'approved 1 · rejected 1 · withdrawn 1'
// and its cost matches the host view's". Through the built console's web
// bridge (actions.propose / approve / reject / withdraw, reports.preview,
// cost.summary) on the demo fleet, then the Actions view and the Reports
// view's preview in headless Chromium at 1440×900 (screenshots in
// REPORT_DECISION_SHOTS_DIR when set, e.g. /tmp/shots: actions-decisions.png,
// report-decisions.png, report-cost.png).

const HOUR = 3_600_000;

describe('decisions and cost in a report on the demo fleet', () => {
  let ui: ConsoleInBrowser;
  let consoleProc: RunningConsole;
  let page: Page;
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-decisions-'));
  const shots = process.env.REPORT_DECISION_SHOTS_DIR ?? null;

  async function call<T>(channel: string, input: unknown): Promise<T> {
    const r = await bridgeCall<T>(consoleProc.ui, channel, input);
    if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
    return r.data;
  }
  const action = async (id: string) => (await call<{ actions: ActionView[] }>('actions.list', { limit: 50 })).actions.find((a) => a.id === id)!;

  beforeAll(async () => {
    ui = await startConsoleInBrowser(['--demo', '--demo-time-scale', '200', '--data-dir', dataDir, '--ui-port', '0', '--proxy-port', '0'], { load: false });
    consoleProc = ui.console;
    page = ui.page;
    if (shots) mkdirSync(shots, { recursive: true });
  }, 60_000);

  afterAll(async () => {
    expect(await ui?.stop()).toBe(0);
  });

  it('one approval, one rejection, one withdrawal: the report reads approved 1 · rejected 1 · withdrawn 1, its cost equals cost.summary', async () => {
    // The fleet must have seen qwen awake (and generating, with the demo traffic) before a sleep can be verified.
    const qwen = async () => (await call<FleetSnapshot>('fleet.snapshot', {})).hosts.find((h) => h.label === 'l20-poc')?.services.find((s) => s.id === 'qwen');
    await expect.poll(async () => (await qwen())?.sleep, { timeout: 30_000 }).toBe('awake');
    const startedAt = Date.now();

    const sleep = (await call<{ action: ActionView }>('actions.propose', { upstream: 'l20-poc/qwen', kind: 'sleep', reason: 'end of shift' })).action;
    await call('actions.approve', { id: sleep.id, nonce: sleep.nonce, displayName: 'Dana Night-Shift' });
    await expect.poll(async () => (await action(sleep.id)).state, { timeout: 30_000 }).toBe('verified');
    const restart = (await call<{ action: ActionView }>('actions.propose', { upstream: 'tri-gpu/gemma', kind: 'restart', reason: 'gemma answers slowly' })).action;
    await call('actions.reject', { id: restart.id, nonce: restart.nonce, reason: 'not during the demo' });
    const wake = (await call<{ action: ActionView }>('actions.propose', { upstream: 'l20-poc/qwen', kind: 'wake', reason: 'bench window' })).action;
    await call('actions.withdraw', { id: wake.id, nonce: wake.nonce });

    // One window for both, ended a moment ago so nothing moves while they are read.
    await new Promise((r) => setTimeout(r, 1_500));
    const toMs = Date.now() - 1_000;
    const fromMs = toMs - HOUR;
    expect(fromMs).toBeLessThan(startedAt);
    const { evidence, html } = await call<{ evidence: Evidence; html: string }>('reports.preview', { request: { fromMs, toMs, sections: ['cost', 'lifecycle'], live: false } });
    // (The demo's traffic may also make the wake-on-demand policy propose a wake: it waits, undecided.)
    expect(evidence.lifecycle).toMatchObject({ approved: 1, rejected: 1, withdrawn: 1, expired: 0, verified: 1 });
    expect(evidence.lifecycle!.proposed).toBe(3 + evidence.lifecycle!.pending);
    expect(html).toContain('approved 1 · rejected 1 · withdrawn 1');
    const rows = new Map(evidence.lifecycle!.actions.map((a) => [a.id, a]));
    expect(rows.get(sleep.id)).toMatchObject({ decision: 'approved', approvedBy: expect.stringMatching(/^Dana Night-Shift \(/) as string, rejectedBy: null });
    expect(rows.get(restart.id)).toMatchObject({ decision: 'rejected', approvedBy: null, rejectedBy: expect.stringContaining('via web') as string, decisionReason: 'not during the demo' });
    expect(rows.get(wake.id)).toMatchObject({ decision: 'withdrawn', approvedBy: null, withdrawnBy: expect.stringContaining('via web') as string });

    // The host view's figures for the same window (cost.summary is what the host view shows).
    const summary = await call<CostSummary>('cost.summary', { window: '1h', endMs: toMs });
    for (const row of evidence.cost!) {
      const ui = summary.hosts.find((h) => h.host === row.host)!;
      const { host: _h, pricePerHourUsd: _p, perMillionOutputUsageBased, perMillionOutputReservationBased, ...figures } = row;
      expect(figures, row.host).toEqual(ui.window);
      expect(perMillionOutputUsageBased, row.host).toEqual(ui.perMillionOutputUsageBased);
      expect(perMillionOutputReservationBased, row.host).toEqual(ui.perMillionOutputReservationBased);
    }
    const l20 = evidence.cost!.find((c) => c.host === 'l20-poc')!;
    expect(l20.observedSeconds).toBeGreaterThan(0);
    expect(l20.coveragePct).toBeLessThan(100);
    expect(l20.observedUsd.value).not.toBeNull();
  }, 120_000);

  it('shows each decision in words in the Actions view and in the report preview', async () => {
    await page.goto(consoleProc.ui);
    await page.getByTestId('nav-actions').click();
    const decision = (state: string) => page.locator(`[data-testid="history-row"][data-state="${state}"] [data-testid="history-decision"]`);
    await expect.poll(() => decision('verified').textContent(), { timeout: 10_000 }).toMatch(/^approved by Dana Night-Shift \(/);
    expect(await decision('rejected').textContent()).toMatch(/^rejected by \S+ \(\S+, via web\) because not during the demo/);
    expect(await decision('withdrawn').textContent()).toMatch(/^withdrawn by \S+ \(\S+, via web\)proposed by/);
    for (const state of ['rejected', 'withdrawn']) expect(await decision(state).textContent()).not.toContain('approved by');
    if (shots) {
      await page.locator('#history-title').scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(shots, 'actions-decisions.png') });
    }

    await page.getByTestId('nav-reports').click();
    await page.getByTestId('reports-view').waitFor();
    await page.getByTestId('reports-preset-1h').check();
    for (const h of ['l20-poc', 'tri-gpu']) await page.getByTestId(`reports-host-${h}`).check();
    for (const s of ['inventory', 'security', 'health', 'benchmarks', 'alerts', 'gates']) {
      const box = page.getByTestId(`reports-section-${s}`);
      if (await box.isChecked()) await box.uncheck();
    }
    for (const s of ['cost', 'lifecycle']) await page.getByTestId(`reports-section-${s}`).check();
    await page.getByTestId('reports-preview-button').click();
    await page.locator('[data-testid="reports-preview"][data-state="shown"]').waitFor({ timeout: 60_000 });
    const frame = page.frameLocator('[data-testid="reports-preview-frame"]');
    await expect.poll(() => frame.locator('#lifecycle').textContent(), { timeout: 10_000 }).toContain('approved 1 · rejected 1 · withdrawn 1');
    expect(await frame.locator('#lifecycle').textContent()).toMatch(/rejected by .*because not during the demo/);
    expect(await frame.locator('#cost').textContent()).toMatch(/l20-poc.* of 1 h 0 min \(\d+(\.\d)? %\)/);
    if (shots) {
      // The preview frame holds one section at this size: the decisions, then the cost.
      const show = (id: string) => frame.locator(id).evaluate((el) => (el as unknown as { scrollIntoView(o: object): void }).scrollIntoView({ block: 'start' }));
      await show('#lifecycle');
      await page.screenshot({ path: join(shots, 'report-decisions.png') });
      await show('#cost');
      await page.screenshot({ path: join(shots, 'report-cost.png') });
    }
  }, 120_000);
});
