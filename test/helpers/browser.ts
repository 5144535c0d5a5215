// The e2e tier's browser: Debian's chromium, headless, and the one way a test
// opens the built console in it (issue #28 item 7: ~20 tests launched it,
// sized a page, loaded the console's URL and closed it each in their own words).
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { assertBuilt, startConsole, type RunningConsole } from './console-process.js';

/** Debian's chromium, headless, with no background traffic to the outside. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** The size the screenshots and layout checks assume unless a test says otherwise. */
export const DEFAULT_VIEWPORT = { width: 1440, height: 900 } as const;

export interface PageOptions {
  /** Default {@link DEFAULT_VIEWPORT}. */
  viewport?: { width: number; height: number };
  /** The console's own theme, set with its toggle once the page is loaded. */
  theme?: 'light' | 'dark';
  /** The page's `prefers-color-scheme`. */
  colorScheme?: BrowserContextOptions['colorScheme'];
  /** Lets a test inject a script (axe-core); the console's own CSP stays as it is. */
  bypassCSP?: boolean;
  timezoneId?: string;
  /** page.setDefaultTimeout: a locator that never matches fails with its name before the test's own timeout. */
  defaultTimeoutMs?: number;
  /** A test id to wait for after loading (15 s): the console has rendered, so a keypress or click is not lost. */
  readyTestId?: string;
}

export interface BrowserPage {
  browser: Browser;
  page: Page;
  /** Another page with the same options (not loaded). */
  newPage(): Promise<Page>;
  /** Closes the browser; harmless twice. */
  close(): Promise<void>;
}

/**
 * Launches Chromium with one page; with `url` (a console's ui URL, its token in
 * the fragment) the page loads it, waits for `readyTestId` and applies `theme`.
 */
export async function openPage(url: string | null, options: PageOptions = {}): Promise<BrowserPage> {
  const browser = await launchChromium();
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await browser.close();
  };
  const newPage = async () => {
    const p = await browser.newPage({ viewport: options.viewport ?? DEFAULT_VIEWPORT, bypassCSP: options.bypassCSP, timezoneId: options.timezoneId, colorScheme: options.colorScheme });
    if (options.defaultTimeoutMs !== undefined) p.setDefaultTimeout(options.defaultTimeoutMs);
    return p;
  };
  try {
    const page = await newPage();
    if (url !== null) await loadConsole(page, url, options);
    return { browser, page, newPage, close };
  } catch (err) {
    await close();
    throw err;
  }
}

async function loadConsole(page: Page, url: string, options: PageOptions): Promise<void> {
  await page.goto(url);
  if (options.readyTestId !== undefined) await page.getByTestId(options.readyTestId).waitFor({ timeout: 15_000 });
  if (options.theme !== undefined) await setTheme(page, options.theme);
}

export interface ConsoleInBrowser extends BrowserPage {
  console: RunningConsole;
  /** Closes the browser, then stops the console; its exit code. */
  stop(): Promise<number | null>;
}

export interface ConsoleInBrowserOptions extends PageOptions {
  /** Load the console's URL now (default); false leaves a blank page for the test to load. */
  load?: boolean;
  /** How long the console may take to print its ready line; default 30 s. */
  startTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/** The built console (`gpu-console serve …args`) and a browser page on it; neither is left running if either fails to start. */
export async function startConsoleInBrowser(args: string[], options: ConsoleInBrowserOptions = {}): Promise<ConsoleInBrowser> {
  assertBuilt();
  const running = await startConsole(args, options.startTimeoutMs, options.env);
  try {
    const opened = await openPage(options.load === false ? null : running.ui, options);
    const stop = async () => {
      // The console stops even when the browser fails to close; that failure is still the test's.
      const closing = await opened.close().then(() => null, (err: unknown) => ({ err }));
      const code = await running.stop();
      if (closing) throw closing.err;
      return code;
    };
    return { ...opened, console: running, stop };
  } catch (err) {
    await running.stop();
    throw err;
  }
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
