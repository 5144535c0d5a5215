import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';

// The bell's panel behaves as a popover: Escape closes it (focus back on the
// bell), a click outside closes it and still reaches what was clicked, and
// another view closes it.

describe('notifications popover', () => {
  let ui: ConsoleInBrowser;
  let page: Page;
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-notify-'));
  const panel = () => page.getByTestId('notifications-panel');
  const openPanel = async () => {
    await page.getByTestId('notifications-button').click();
    await expect.poll(() => panel().count()).toBe(1);
  };

  beforeAll(async () => {
    ui = await startConsoleInBrowser(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir], { readyTestId: 'nav-proxy' });
    page = ui.page;
  }, 60_000);

  afterAll(async () => {
    await ui?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('Escape closes it and gives focus back to the bell', async () => {
    await openPanel();
    expect(await page.getByTestId('notifications-button').getAttribute('aria-expanded')).toBe('true');
    await page.keyboard.press('Escape');
    await expect.poll(() => panel().count()).toBe(0);
    expect(await page.getByTestId('notifications-button').getAttribute('aria-expanded')).toBe('false');
    expect(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { getAttribute(n: string): string | null } } }).document.activeElement.getAttribute('data-testid'))).toBe(
      'notifications-button',
    );
  });

  it('a click outside closes it, and the click still reaches the button under it', async () => {
    await openPanel();
    await page.getByTestId('nav-proxy').click();
    await expect.poll(() => panel().count()).toBe(0);
    await expect.poll(() => page.getByTestId('nav-proxy').getAttribute('aria-current')).toBe('page');
  });

  it('a click inside keeps it open; switching views by keyboard closes it', async () => {
    await openPanel();
    await panel().click({ position: { x: 10, y: 10 } });
    expect(await panel().count()).toBe(1);
    await page.keyboard.press('Alt+1');
    await expect.poll(() => panel().count()).toBe(0);
  });
});
