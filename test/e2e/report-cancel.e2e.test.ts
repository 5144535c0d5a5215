import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import { bridgeCall, type RunningConsole } from '../helpers/console-process.js';

// Cancelling an export from the Reports view crosses every boundary: the
// button aborts the page's fetch, the web bridge sees the connection close and
// aborts the core's call, and the core stops at its next step with no folder
// left behind. The export prints a PDF through headless Chromium (seconds), and
// Cancel is pressed once its progress says the PDF is being written, so an
// export that ignored the cancel would finish and keep its folder.

interface AuditRow {
  type: string;
  target: string | null;
  payload: unknown;
}

describe('cancelling an export in the Reports view', () => {
  let ui: ConsoleInBrowser;
  let consoleProc: RunningConsole;
  let page: Page;
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-report-cancel-'));
  const reportsDir = join(dataDir, 'reports');
  const pageErrors: string[] = [];

  /** A call straight to the web bridge; it must succeed. */
  async function call<T>(channel: string, input: unknown): Promise<T> {
    const body = await bridgeCall<T>(consoleProc.ui, channel, input);
    expect(body.ok, `${channel}: ${JSON.stringify(body)}`).toBe(true);
    return (body as { data: T }).data;
  }
  const exportRows = async (): Promise<AuditRow[]> =>
    (await call<{ events: AuditRow[] }>('audit.list', { limit: 1000 })).events.filter((e) => e.type.startsWith('report.export'));

  beforeAll(async () => {
    ui = await startConsoleInBrowser(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir, '--ui-port', '0'], { load: false });
    consoleProc = ui.console;
    page = ui.page;
    page.on('pageerror', (err) => pageErrors.push(err.message));
  }, 60_000);

  afterAll(async () => {
    expect(await ui?.stop()).toBe(0);
  });

  it('stops a running export: "nothing was written", no folder, nothing listed, a cancelled audit row', async () => {
    await page.goto(consoleProc.ui);
    await page.getByTestId('nav-reports').click();
    await page.getByTestId('reports-view').waitFor();
    await page.getByTestId('reports-preset-1h').check();
    await page.getByTestId('reports-format-pdf').check();
    expect(await page.getByTestId('report-cancel').count()).toBe(0);

    await page.getByTestId('reports-export-button').click();
    // The PDF is printing (the slow step): the core checks the signal right after it.
    await page.getByTestId('reports-progress').getByText('writing report.pdf').waitFor({ timeout: 60_000 });
    const cancel = page.getByTestId('report-cancel');
    expect(await cancel.textContent()).toBe('Cancel export');
    await cancel.click();

    // "Cancelled" is shown once the core reports where the export stopped; had the
    // export ignored the cancel, the panel would say it finished and kept it.
    const cancelled = page.getByTestId('report-cancelled');
    await cancelled.or(page.getByTestId('report-cancel-late')).waitFor({ timeout: 90_000 });
    expect(await page.getByTestId('report-cancel-late').count()).toBe(0);
    expect(await cancelled.textContent()).toBe('Export cancelled — nothing was written.');
    expect(await page.getByTestId('reports-export-error').count()).toBe(0);
    expect(await page.getByTestId('reports-result').count()).toBe(0);
    expect(await page.getByTestId('report-cancel').count()).toBe(0);
    expect(await page.getByTestId('reports-export-button').isEnabled()).toBe(true);
    if (process.env.REPORT_SHOTS_DIR) await page.screenshot({ path: `${process.env.REPORT_SHOTS_DIR}/report-cancelled.png` });

    // Nothing on disk: neither an export folder nor its hidden staging folder.
    expect(existsSync(reportsDir) ? readdirSync(reportsDir) : []).toEqual([]);
    // Nothing listed, and the core's own account says it was cancelled.
    expect((await call<{ exports: unknown[] }>('reports.list', { limit: 50 })).exports).toEqual([]);
    const rows = await exportRows();
    expect(rows.map((r) => r.type)).toEqual(['report.export.failed']);
    expect(rows[0]!.payload).toMatchObject({ code: 'REPORT_CANCELLED' });

    // The console is free again: the next export runs to the end and is the only folder.
    await page.getByTestId('reports-format-pdf').uncheck();
    await page.getByTestId('reports-export-button').click();
    await page.getByTestId('reports-result').waitFor({ timeout: 60_000 });
    expect(await page.getByTestId('report-cancelled').count()).toBe(0);
    const dir = (await page.getByTestId('reports-result-dir').textContent())!;
    expect(readdirSync(reportsDir).map((n) => join(reportsDir, n))).toEqual([dir]);
    expect((await call<{ exports: Array<{ dir: string }> }>('reports.list', { limit: 50 })).exports.map((e) => e.dir)).toEqual([dir]);
    expect(pageErrors).toEqual([]);
  }, 180_000);
});
