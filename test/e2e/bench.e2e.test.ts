import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { assertBuilt, startConsole, type RunningConsole } from '../helpers/console-process.js';

// The built console end to end: a small sweep started from the Benchmarks view
// in headless Chromium (through the proxy, class batch), progress seen, the
// result table and the comparison of two runs shown.

describe('benchmarks through the built console', () => {
  let consoleProc: RunningConsole;
  let browser: Browser;
  let page: Page;
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-bench-'));

  beforeAll(async () => {
    assertBuilt();
    consoleProc = await startConsole(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir, '--ui-port', '0', '--proxy-port', '0']);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    expect(await consoleProc?.stop()).toBe(0);
  });

  async function startRun(name: string): Promise<void> {
    await page.getByTestId('bench-name').fill(name);
    // Until the demo tunnels are up the run is refused before it starts (BENCH_TARGET_UNREACHABLE); try again then.
    for (let i = 0; i < 40; i++) {
      await page.getByTestId('bench-start').click();
      const outcome = await Promise.race([
        page.getByTestId('bench-progress').filter({ hasText: name }).waitFor({ timeout: 3_000 }).then(() => 'started'),
        page.getByTestId('bench-error').waitFor({ timeout: 3_000 }).then(() => 'refused'),
      ]).catch(() => 'refused');
      if (outcome === 'started') return;
      await page.waitForTimeout(500);
    }
    throw new Error('the run never started');
  }

  it('starts a run from the Benchmarks view, shows progress, the result table, and a comparison', async () => {
    await page.goto(consoleProc.ui);
    await page.getByTestId('nav-bench').click();
    await page.getByTestId('bench-levels').fill('1,2');
    await page.getByTestId('bench-count').fill('2');
    await page.getByTestId('bench-max-tokens').fill('8');
    await startRun('first');
    await page.locator('[data-testid="bench-progress"][data-state="completed"]').waitFor({ timeout: 30_000 });
    await expect.poll(() => page.getByTestId('bench-level-row').count(), { timeout: 10_000 }).toBe(2);
    expect(await page.getByTestId('bench-result-table').textContent()).toContain('concurrency 2');
    await page.getByTestId('bench-max-tokens').fill('16');
    await startRun('second');
    await page.locator('[data-testid="bench-progress"][data-state="completed"]').filter({ hasText: 'second' }).waitFor({ timeout: 30_000 });
    await page.getByTestId('bench-compare-with').last().check();
    await page.getByTestId('bench-compare').waitFor({ timeout: 10_000 });
    expect(await page.getByTestId('bench-compare').textContent()).toContain('output tok/s');
    expect(await page.getByTestId('bench-eval').textContent()).toContain('P95 end-to-end');
    mkdirSync('/tmp/shots', { recursive: true });
    await page.screenshot({ path: '/tmp/shots/bench-view.png', fullPage: false });
    await page.screenshot({ path: '/tmp/shots/bench-full.png', fullPage: true });
  }, 90_000);
});
