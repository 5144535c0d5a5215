import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';

// One time format in the UI (#18): every time the Audit and Actions views show
// is a local 24-hour clock with its zone ("14:03:07 UTC+1"), never a bare
// locale time or an ISO string. The browser runs in a fixed zone with DST.

const ZONED = /\b\d\d:\d\d:\d\d UTC([+−]\d+(:\d\d)?)?\b/;

describe('times carry their zone', () => {
  let ui: ConsoleInBrowser;
  let page: Page;
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-time-'));

  beforeAll(async () => {
    ui = await startConsoleInBrowser(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir], { timezoneId: 'Europe/Berlin', readyTestId: 'nav-actions' });
    page = ui.page;
  }, 60_000);

  afterAll(async () => {
    await ui?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a waiting proposal shows its expiry with the zone', async () => {
    await page.getByTestId('nav-actions').click();
    await page.getByTestId('propose-restart-tri-gpu/gemma').click({ timeout: 15_000 });
    await expect.poll(() => page.getByTestId('action-dialog').count(), { timeout: 5_000 }).toBe(1);
    await page.getByTestId('decision-propose').check();
    await page.getByTestId('action-reason').fill('zone check');
    await page.getByTestId('action-submit').click();
    await expect.poll(() => page.getByTestId('proposal').count()).toBe(1);
    const text = (await page.getByTestId('proposal').textContent()) ?? '';
    expect(text).toMatch(/expires \d\d:\d\d:\d\d UTC\+[12](?!\d)/);
  });

  it('every audit row time carries the date and the zone', async () => {
    await page.getByTestId('nav-audit').click();
    await page.getByTestId('audit-table').waitFor({ timeout: 10_000 });
    const times = await page.locator('[data-testid^="audit-row-"] td:nth-child(2)').allTextContents();
    expect(times.length).toBeGreaterThan(0);
    for (const t of times) expect(t.trim()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\+[12]$/);
    expect(times.join(' ')).not.toMatch(/\b(AM|PM)\b|T\d\d:\d\d|Z\b/);
    expect(times[0]).toMatch(ZONED);
  });
});
