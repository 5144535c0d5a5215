import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeViolations, seriousViolations } from '../helpers/axe.js';
import { setTheme, startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';

// The playground answers (issue #32, "Done when"): the built console on the
// demo fleet in headless Chromium; a model is asked with the keyboard alone
// (Ctrl+Enter) and the answer shows with its TTFT, tok/s and the replica that
// answered; its request link opens the Proxy view's log on that request;
// axe finds nothing serious in either theme.

const SHOTS = process.env.PLAYGROUND_SHOTS_DIR ?? '/tmp/shots';

describe('playground', () => {
  let ui: ConsoleInBrowser;
  let page: Page;
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-playground-'));

  beforeAll(async () => {
    ui = await startConsoleInBrowser(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir, '--ui-port', '0', '--proxy-port', '0'], { bypassCSP: true, readyTestId: 'nav-fleet' });
    page = ui.page;
    mkdirSync(SHOTS, { recursive: true });
  }, 90_000);

  afterAll(async () => {
    const code = await ui?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    expect(code).toBe(0);
  });

  it('asks a demo model and shows the answer with TTFT, tok/s and the upstream', async () => {
    await page.getByTestId('nav-playground').click();
    const model = page.getByTestId('playground-model');
    await expect.poll(() => model.locator('option').allTextContents(), { timeout: 30_000 }).toEqual(expect.arrayContaining(['Qwen3.6-27B-FP8', 'chat (group)']));
    await model.selectOption('Qwen3.6-27B-FP8');
    await page.getByTestId('playground-max-tokens').fill('40');
    await page.getByTestId('playground-system').fill('Answer in one sentence.');
    const prompt = page.getByLabel('Message');
    await prompt.fill('Say hello to the on-call operator.');
    await prompt.press('Control+Enter');
    const exchange = page.getByTestId('playground-exchange').last();
    await expect.poll(() => exchange.getAttribute('data-status'), { timeout: 60_000 }).toBe('done');
    expect((await exchange.getByTestId('playground-answer').textContent())?.length).toBeGreaterThan(0);
    expect(await exchange.getByTestId('playground-ttft').textContent()).toMatch(/^\d+(\.\d)? (ms|s)$/);
    expect(await exchange.getByTestId('playground-tok-s').textContent()).toMatch(/^\d+(\.\d)?k?$/);
    expect(await exchange.getByTestId('playground-upstream').textContent()).toBe('l20-poc/qwen');
    expect(await exchange.getByTestId('playground-request-link').textContent()).toMatch(/^req_[0-9a-f]{24}$/);
    // The composer is empty again for the next question.
    expect(await prompt.inputValue()).toBe('');
    await page.setViewportSize({ width: 1440, height: 900 });
    for (const theme of ['dark', 'light'] as const) {
      await setTheme(page, theme);
      await page.screenshot({ path: join(SHOTS, `playground-${theme}.png`) });
      const found = await seriousViolations(page, '[data-testid="playground-view"]');
      expect(describeViolations(`playground (${theme})`, found)).toEqual([]);
    }
  });

  it('Stop closes a streaming request: the answer so far stays, and the log records the client gone', async () => {
    await page.getByTestId('playground-max-tokens').fill('2000');
    await page.getByLabel('Message').fill('Tell me a long story.');
    await page.getByTestId('playground-send').click();
    const exchange = page.getByTestId('playground-exchange').last();
    // Streamed text shows before the answer is complete.
    await exchange.getByTestId('playground-answer').waitFor({ state: 'visible', timeout: 30_000 });
    expect(await exchange.getAttribute('data-status')).toBe('running');
    await page.getByTestId('playground-stop').click();
    await expect.poll(() => exchange.getAttribute('data-status'), { timeout: 10_000 }).toBe('stopped');
    expect((await exchange.getByTestId('playground-answer').textContent())?.length).toBeGreaterThan(0);
    const link = exchange.getByTestId('playground-request-link');
    const id = (await link.textContent())!;
    await link.click();
    const row = page.locator(`[data-testid="request-row"][data-request-id="${id}"]`);
    await row.waitFor({ state: 'visible', timeout: 10_000 });
    expect(await row.textContent()).toContain('499');
    // Back in the playground, the conversation is still there.
    await page.getByTestId('nav-playground').click();
    expect(await page.getByTestId('playground-exchange').count()).toBe(2);
  });

  it("the request link opens the Proxy view's log on that request", async () => {
    const link = page.getByTestId('playground-request-link').last();
    const id = (await link.textContent())!;
    await link.click();
    await page.getByTestId('proxy-view').waitFor({ state: 'visible' });
    await expect.poll(() => page.getByTestId('filter-trace').inputValue(), { timeout: 10_000 }).toBe(id);
    const rows = page.getByTestId('request-row');
    await expect.poll(() => rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-request-id'))), { timeout: 10_000 }).toEqual([id]);
    expect(await rows.first().textContent()).toContain('console:playground');
  });
});
