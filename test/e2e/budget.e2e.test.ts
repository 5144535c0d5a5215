import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import { bridgeCall, type RunningConsole } from '../helpers/console-process.js';

// The host view's budget: the demo fleet's own (l20-poc's USD 500 gate from
// the config, a fleet budget in the summary), then an override set inline
// that moves hours to the gate, audited as budget.set; bad input is refused
// with a message.

describe('budget in the host view', () => {
  let ui: ConsoleInBrowser;
  let consoleProc: RunningConsole;
  let page: Page;
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-budget-'));

  beforeAll(async () => {
    ui = await startConsoleInBrowser(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir], { readyTestId: 'nav-host' });
    consoleProc = ui.console;
    page = ui.page;
  }, 60_000);

  afterAll(async () => {
    await ui?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("shows the demo's configured budget, sets an override, moves hours to the gate, and audits budget.set", async () => {
    await page.getByTestId('nav-host').click();
    // The demo's config gives l20-poc (the first host) the proof of concept's USD 500 gate.
    await expect.poll(() => page.getByTestId('budget-monthly').textContent(), { timeout: 15_000 }).toMatch(/\(config\).*\$500\.00/);
    const hours = async () => Number(await page.getByTestId('budget-hours-to-gate').getAttribute('data-value'));
    // 500 USD at 2.641736 USD an hour: about 189 h, less what this month's running time already spent.
    await expect.poll(hours, { timeout: 15_000 }).toBeGreaterThan(150);
    expect(await hours()).toBeLessThanOrEqual(500 / 2.641736 + 0.01);
    await page.getByTestId('budget-edit').click({ timeout: 15_000 });
    await page.getByTestId('budget-input').fill('-3');
    await page.getByTestId('budget-save').click();
    await expect.poll(() => page.getByTestId('budget-error').textContent()).toContain('more than 0');
    await page.getByTestId('budget-input').fill('750');
    await page.getByTestId('budget-save').click();
    await expect.poll(() => page.getByTestId('budget-monthly').textContent(), { timeout: 10_000 }).toMatch(/\(set here\).*\$750\.00/);
    await expect.poll(hours, { timeout: 10_000 }).toBeGreaterThan(500 / 2.641736 + 1);
    // The cost row's "Budget buys" divides the new budget at once (not at its next refresh), and the view
    // shows one hours-to-gate figure, the budget's.
    await expect.poll(async () => Number(await page.getByTestId('cost-budget-compute-hours').getAttribute('data-value')), { timeout: 3_000 }).toBeCloseTo(750 / 2.641736, 1);
    expect(await page.getByText(/hours to budget gate/i).count()).toBe(1);
    const audit = await bridgeCall<{ events: { type: string; payload: { new: number } }[] }>(consoleProc.ui, 'audit.list', { limit: 200 });
    expect(audit.ok && audit.data.events.find((e) => e.type === 'budget.set')?.payload.new).toBe(750);
    mkdirSync('/tmp/shots-18', { recursive: true });
    await page.getByTestId('budget-figures').scrollIntoViewIfNeeded();
    await page.screenshot({ path: '/tmp/shots-18/budget.png' });
  }, 60_000);

  it('the bridge refuses bad budgets and unknown hosts; the fleet budget shows in the fleet summary', async () => {
    for (const monthlyUsd of [-1, 0, 1e12, 'x']) {
      const r = await bridgeCall(consoleProc.ui, 'budget.set', { host: 'l20-poc', monthlyUsd });
      expect(r.ok).toBe(false);
    }
    const ghost = await bridgeCall(consoleProc.ui, 'budget.set', { host: 'ghost', monthlyUsd: 5 });
    expect(ghost.ok === false && ghost.error.message).toContain('no host "ghost"');
    const after = await bridgeCall<{ hosts: { host: string; monthlyUsd: number | null }[] }>(consoleProc.ui, 'budget.get', {});
    expect(after.ok && after.data.hosts.find((h) => h.host === 'l20-poc')?.monthlyUsd).toBe(750);
    await page.getByTestId('nav-fleet').click();
    // The demo config's fleet budget, until an override replaces it.
    await expect.poll(() => page.getByTestId('fleet-budget').textContent(), { timeout: 15_000 }).toContain('$4000.00');
    expect((await bridgeCall(consoleProc.ui, 'budget.set', { monthlyUsd: 2000 })).ok).toBe(true);
    await page.reload();
    await expect.poll(() => page.getByTestId('fleet-budget').textContent(), { timeout: 15_000 }).toContain('$2000.00');
  }, 60_000);
});
