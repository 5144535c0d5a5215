import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { assertBuilt, bridgeCall, startConsole, type RunningConsole } from '../helpers/console-process.js';

// The host view's budget: set it inline, hours to the gate becomes a number,
// the audit log has budget.set; bad input is refused with a message.

describe('budget in the host view', () => {
  let consoleProc: RunningConsole;
  let browser: Browser;
  let page: Page;
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-budget-'));

  beforeAll(async () => {
    assertBuilt();
    consoleProc = await startConsole(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir]);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(consoleProc.ui);
    await page.getByTestId('nav-host').waitFor({ timeout: 15_000 });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await consoleProc?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('sets a budget, shows hours to the gate, and audits budget.set', async () => {
    await page.getByTestId('nav-host').click();
    await page.getByTestId('budget-edit').click({ timeout: 15_000 });
    await page.getByTestId('budget-input').fill('-3');
    await page.getByTestId('budget-save').click();
    await expect.poll(() => page.getByTestId('budget-error').textContent()).toContain('more than 0');
    await page.getByTestId('budget-input').fill('500');
    await page.getByTestId('budget-save').click();
    await expect.poll(() => page.getByTestId('budget-hours-to-gate').getAttribute('data-value'), { timeout: 10_000 }).toMatch(/^\d/);
    await expect.poll(() => page.getByTestId('cost-budget-hours').getAttribute('data-value'), { timeout: 20_000 }).toMatch(/^\d/);
    const audit = await bridgeCall<{ events: { type: string; payload: { new: number } }[] }>(consoleProc.ui, 'audit.list', { limit: 200 });
    expect(audit.ok && audit.data.events.find((e) => e.type === 'budget.set')?.payload.new).toBe(500);
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
    expect(after.ok && after.data.hosts.find((h) => h.host === 'l20-poc')?.monthlyUsd).toBe(500);
    expect((await bridgeCall(consoleProc.ui, 'budget.set', { monthlyUsd: 2000 })).ok).toBe(true);
    await page.getByTestId('nav-fleet').click();
    await page.reload();
    await expect.poll(() => page.getByTestId('fleet-budget').textContent(), { timeout: 15_000 }).toContain('$2000.00');
  }, 60_000);
});
