import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import type { RunningConsole } from '../helpers/console-process.js';

// The host charts on a fresh start (#18): 1-2-5 y ticks, a legend that never
// pages, an empty panel that says why, and a time axis that starts no earlier
// than the console did. Set HOST_SHOTS_DIR to also write screenshots.

describe('host charts on a fresh start', () => {
  let ui: ConsoleInBrowser;
  let consoleProc: RunningConsole;
  let page: Page;
  let startedAt = 0;
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-hostcharts-'));

  beforeAll(async () => {
    startedAt = Date.now();
    ui = await startConsoleInBrowser(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir, '--ui-port', '0', '--proxy-port', '0'], { load: false });
    consoleProc = ui.console;
    page = ui.page;
  }, 60_000);

  afterAll(async () => {
    await ui?.stop();
  });

  it('VRAM ticks are 1-2-5 steps, the legend has no page arrows, queue wait says why it is empty, the x axis starts at the data', async () => {
    await page.goto(consoleProc.ui);
    await page.getByTestId('nav-host').click();
    await expect.poll(() => page.getByTestId('host-picker').inputValue(), { timeout: 10_000 }).toBeTruthy();
    await page.getByTestId('range-1h').click();
    const vram = page.getByTestId('host-chart-vram');
    await expect.poll(() => vram.getAttribute('data-points').then((v) => Number(v || 0)), { timeout: 20_000 }).toBeGreaterThan(0);

    // y ticks (stored in MiB) are a 1-2-5 step in GiB, evenly spaced from 0
    const ticks = (await vram.getAttribute('data-y-ticks'))!.split(',').map(Number).map((t) => t / 1024);
    expect(ticks[0]).toBe(0);
    const step = ticks[1]! - ticks[0]!;
    const mant = step / 10 ** Math.floor(Math.log10(step));
    expect([1, 2, 5].some((f) => Math.abs(mant - f) < 1e-9)).toBe(true);
    ticks.forEach((t, i) => expect(t).toBeCloseTo(i * step, 9));
    expect(await vram.getAttribute('data-y-labels')).not.toMatch(/\d\.\d\d|9\.8|19\.5/);

    // legends: an HTML list per chart, no echarts scroll legend (no page arrows)
    await expect.poll(() => vram.getByTestId('chart-legend').locator('li').count()).toBeGreaterThan(0);
    // the legend wraps inside its panel: nothing cut off
    const clipped = await page.$$eval('[data-testid="chart-legend"]', (uls) => uls.filter((ul) => ul.scrollWidth > ul.clientWidth + 1).length);
    expect(clipped).toBe(0);

    // the proxy has queued nothing (traffic off): the queue-wait panel says why
    const wait = page.getByTestId('host-chart-proxy-wait');
    await expect.poll(() => wait.getByTestId('chart-empty').textContent(), { timeout: 10_000 }).toMatch(/proxy has not queued a request/);

    // fresh start: the 1 h axis starts at the first sample, not an hour before the console started
    const xMin = Number(await vram.getAttribute('data-x-min'));
    // (series buckets start on 10 s boundaries: one bucket of slack)
    expect(xMin).toBeGreaterThanOrEqual(startedAt - 10_000);
    await expect.poll(() => vram.getByTestId('chart-since').count()).toBe(1);

    const dir = process.env['HOST_SHOTS_DIR'];
    if (dir) {
      mkdirSync(dir, { recursive: true });
      await page.waitForTimeout(3000);
      for (let round = 0; round < 2; round++) {
        const theme = await page.locator('html').getAttribute('data-theme');
        for (const [w, h] of [[1440, 900], [1280, 720]] as const) {
          await page.setViewportSize({ width: w, height: h });
          await page.waitForTimeout(500);
          await page.screenshot({ path: join(dir, `host-${theme}-${w}x${h}.png`), fullPage: true });
          await page.locator(".host-chart").last().scrollIntoViewIfNeeded();
          await page.screenshot({ path: join(dir, `host-${theme}-${w}x${h}-bottom.png`) });
        }
        await page.getByTestId('theme-toggle').click().catch(() => undefined);
        await page.waitForTimeout(500);
      }
    }
  }, 60_000);
});
