import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { navViewIds, setTheme, startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';

// Layout check (#18 item 8): every view in the nav, at two window sizes and in
// both themes, with no table header or cell cutting its text (an element whose
// overflow is hidden or ellipsised while its content is wider than its box).
// GC_SHOTS_DIR=<folder> also writes a screenshot of each.

const SIZES = [
  { width: 1440, height: 900 },
  { width: 1280, height: 720 },
] as const;
const THEMES = ['light', 'dark'] as const;

interface Clip {
  tag: string;
  text: string;
  scrollWidth: number;
  clientWidth: number;
}

async function clippedCells(page: Page): Promise<Clip[]> {
  return page.evaluate(() => {
    const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<unknown> } }).document;
    const win = globalThis as unknown as { getComputedStyle(e: unknown): { overflowX: string; textOverflow: string; display: string } };
    const out: { tag: string; text: string; scrollWidth: number; clientWidth: number }[] = [];
    const cells = Array.from(doc.querySelectorAll('th, td, th *, td *, .requests-grid > span')) as {
      tagName: string;
      textContent: string | null;
      scrollWidth: number;
      clientWidth: number;
    }[];
    for (const el of cells) {
      const style = win.getComputedStyle(el);
      // Hidden or visually-hidden (screen-reader only, 1px) text is not cut for anyone reading the screen.
      if (style.display === 'none' || el.clientWidth <= 1) continue;
      const hides = style.overflowX === 'hidden' || style.overflowX === 'clip' || style.textOverflow === 'ellipsis';
      if (hides && el.scrollWidth > el.clientWidth + 1) {
        out.push({ tag: el.tagName.toLowerCase(), text: (el.textContent ?? '').trim().slice(0, 60), scrollWidth: el.scrollWidth, clientWidth: el.clientWidth });
      }
    }
    return out;
  });
}

describe('layout: no table cell cuts its text', () => {
  let ui: ConsoleInBrowser;
  let page: Page;
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-layout-'));
  const shots = process.env.GC_SHOTS_DIR;

  beforeAll(async () => {
    if (shots) mkdirSync(shots, { recursive: true });
    ui = await startConsoleInBrowser(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir], { viewport: SIZES[0], readyTestId: 'nav-fleet' });
    page = ui.page;
    // Give the demo fleet a moment to fill tables with real rows.
    await page.locator('td').nth(3).waitFor({ timeout: 20_000 });
  }, 60_000);

  afterAll(async () => {
    await ui?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('every view, both sizes, both themes', async () => {
    const navIds = await navViewIds(page);
    expect(navIds.length).toBeGreaterThanOrEqual(6);
    const problems: string[] = [];
    for (const size of SIZES) {
      await page.setViewportSize(size);
      for (const theme of THEMES) {
        await setTheme(page, theme);
        for (const nav of navIds) {
          await page.getByTestId(nav).click();
          await expect.poll(() => page.getByTestId(nav).getAttribute('aria-current')).toBe('page');
          await page.waitForTimeout(400); // let the view lay out its first data
          for (const c of await clippedCells(page)) problems.push(`${nav} ${size.width}x${size.height} ${theme}: <${c.tag}> "${c.text}" ${c.scrollWidth}>${c.clientWidth}`);
          if (shots) await page.screenshot({ path: join(shots, `${nav.replace(/^nav-/, '')}-${size.width}x${size.height}-${theme}.png`), fullPage: true });
        }
      }
    }
    expect(problems).toEqual([]);
  }, 240_000);
});
