import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { navViewIds, setTheme, startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';

// Accessibility (#18 item 7): axe-core finds no serious or critical violation
// in any view, in either theme, and a waiting proposal can be approved and
// rejected with the keyboard alone (Tab, arrows, typing, Enter).

const AXE = readFileSync(join(process.cwd(), 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.addScriptTag({ content: AXE });
  const result = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: AxeViolation[] }> } }).axe;
    return axe.run((globalThis as unknown as { document: unknown }).document, { resultTypes: ['violations'] });
  });
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

const activeTestId = (page: Page) =>
  page.evaluate(() => (globalThis as unknown as { document: { activeElement: { getAttribute(n: string): string | null } | null } }).document.activeElement?.getAttribute('data-testid') ?? null);

/** Tab forward until the element with this test id has focus (fails after 80 presses). */
async function tabTo(page: Page, testId: string | RegExp): Promise<void> {
  for (let i = 0; i < 80; i += 1) {
    const id = await activeTestId(page);
    if (id !== null && (typeof testId === 'string' ? id === testId : testId.test(id))) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`Tab never reached ${String(testId)}`);
}

describe('accessibility', () => {
  let ui: ConsoleInBrowser;
  let page: Page;
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-a11y-'));

  beforeAll(async () => {
    // bypassCSP lets the test inject axe-core; the console's own CSP stays as it is.
    ui = await startConsoleInBrowser(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir], { bypassCSP: true, readyTestId: 'nav-fleet' });
    page = ui.page;
    await page.locator('td').nth(3).waitFor({ timeout: 20_000 });
  }, 60_000);

  afterAll(async () => {
    await ui?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('no serious or critical axe violations in any view, either theme', async () => {
    const navIds = await navViewIds(page);
    const found: string[] = [];
    for (const theme of ['dark', 'light'] as const) {
      await setTheme(page, theme);
      for (const nav of navIds) {
        await page.getByTestId(nav).click();
        await expect.poll(() => page.getByTestId(nav).getAttribute('aria-current')).toBe('page');
        await page.waitForTimeout(400);
        for (const v of await seriousViolations(page)) found.push(`${theme} ${nav}: ${v.impact} ${v.id} (${v.help}) at ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
      }
    }
    expect(found).toEqual([]);
  }, 180_000);

  it('approves and rejects waiting proposals with the keyboard alone', async () => {
    await page.getByTestId('nav-actions').click();
    // Two waiting proposals, made with the mouse: the decisions below use only keys.
    for (const [button, reason] of [
      ['propose-sleep-l20-poc/qwen', 'idle overnight'],
      ['propose-restart-tri-gpu/gemma', 'slow answers'],
    ] as const) {
      await page.getByTestId(button).click({ timeout: 15_000 });
      await expect.poll(() => page.getByTestId('action-dialog').count(), { timeout: 5_000 }).toBe(1);
      await page.getByTestId('decision-propose').check();
      await page.getByTestId('action-reason').fill(reason);
      await page.getByTestId('action-submit').click();
      await expect.poll(() => page.getByTestId('action-dialog').count()).toBe(0);
    }
    await expect.poll(() => page.getByTestId('proposal').count()).toBe(2);
    const sleepId = await page.locator('[data-testid="proposal"][data-kind="sleep"]').getAttribute('data-action-id');
    const restartId = await page.locator('[data-testid="proposal"][data-kind="restart"]').getAttribute('data-action-id');

    // Reject the restart: Tab to its Review button, Enter, arrow to "reject", type a reason, Tab to submit, Enter.
    await page.getByTestId('nav-actions').focus();
    await tabTo(page, `review-${restartId}`);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('action-dialog').count()).toBe(1);
    await tabTo(page, /^decision-/);
    for (let i = 0; i < 4 && !(await page.getByTestId('decision-reject').isChecked()); i += 1) await page.keyboard.press('ArrowDown');
    expect(await page.getByTestId('decision-reject').isChecked()).toBe(true);
    await tabTo(page, 'action-reason');
    await page.keyboard.type('not now, keyboard only');
    await tabTo(page, 'action-submit');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('action-dialog').count()).toBe(0);
    await expect.poll(() => page.locator(`[data-testid="proposal"][data-action-id="${restartId}"]`).count()).toBe(0);

    // Approve the sleep the same way.
    await page.getByTestId('nav-actions').focus();
    await tabTo(page, `review-${sleepId}`);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('action-dialog').count()).toBe(1);
    await tabTo(page, /^decision-/);
    for (let i = 0; i < 4 && !(await page.getByTestId('decision-approve').isChecked()); i += 1) await page.keyboard.press('ArrowDown');
    expect(await page.getByTestId('decision-approve').isChecked()).toBe(true);
    await tabTo(page, 'action-approver-name');
    await page.keyboard.type('Kim Keyboard');
    await tabTo(page, 'action-submit');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('action-dialog').count()).toBe(0);
    await expect.poll(() => page.getByTestId('proposal').count()).toBe(0);
  }, 120_000);
});
