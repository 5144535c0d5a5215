import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';

/** Debian's chromium, headless, with no background traffic to the outside. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** The test ids of the nav's views (`nav-fleet`, `nav-proxy`, …), in nav order. */
export async function navViewIds(page: Page): Promise<string[]> {
  const ids = await page.locator('[data-testid^="nav-"]').evaluateAll((els) => els.map((e) => (e as unknown as { getAttribute(n: string): string | null }).getAttribute('data-testid') ?? ''));
  return ids.filter(Boolean);
}

/** Switches the console to `theme` with its toggle (no-op when already there) and waits until the page shows it. */
export async function setTheme(page: Page, theme: 'light' | 'dark'): Promise<void> {
  const current = () => page.evaluate(() => (globalThis as unknown as { document: { documentElement: { getAttribute(n: string): string | null } } }).document.documentElement.getAttribute('data-theme'));
  if ((await current()) !== theme) await page.getByTestId('theme-toggle').click();
  await expect.poll(current).toBe(theme);
}
