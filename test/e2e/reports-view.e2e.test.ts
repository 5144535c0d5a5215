import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import type { RunningConsole } from '../helpers/console-process.js';

// The Reports view of the built console in headless Chromium, as an operator
// at the end of a shift uses it: one host, the last hour, live checks over
// SSH; a preview showing the report and its gate table; a manual gate marked
// with a note (and seen in the next preview); an md + html + json export
// followed to "done"; its files with digests that match the bytes on disk;
// Verify all OK; the export in the list, verifiable from there too. Then
// the errors an operator meets: an unwritable folder, an encrypted key without
// (or with a wrong) passphrase, and finally a signed export that verifies.

const HOST = 'l20-poc';
const TITLE = 'E2E night shift handover';
const GATE = 'order.matches';
const NOTE = 'Checked against order #4711: 1× L20 48 GB, 16 vCPU, 128 GB RAM, eu-central.';

describe('the Reports view', () => {
  let ui: ConsoleInBrowser;
  let consoleProc: RunningConsole;
  let page: Page;
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-reports-'));
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ui = await startConsoleInBrowser(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir, '--ui-port', '0', '--proxy-port', '0'], { load: false });
    consoleProc = ui.console;
    page = ui.page;
    page.on('pageerror', (err) => pageErrors.push(err.message));
  }, 60_000);

  afterAll(async () => {
    expect(await ui?.stop()).toBe(0);
  });

  it('previews, marks a gate, exports, verifies and lists a report', async () => {
    // Reached like every view: its nav shortcut (Alt+N), the command palette, the nav button.
    await page.goto(consoleProc.ui);
    const shortcut = await page.getByTestId('nav-reports').getAttribute('aria-keyshortcuts');
    expect(shortcut).toMatch(/^Alt\+[1-9]$/);
    await page.keyboard.press(shortcut!);
    await page.getByTestId('reports-view').waitFor();
    await page.getByTestId('nav-fleet').click();
    await page.keyboard.press('Control+k');
    await page.getByRole('combobox').fill('reports');
    await page.keyboard.press('Enter');
    await page.getByTestId('reports-view').waitFor();
    expect(await page.getByTestId('nav-reports').getAttribute('aria-current')).toBe('page');

    // The request: a title, one host (from the fleet snapshot), the last hour, live checks on.
    await page.getByLabel('Title (optional)').fill(TITLE);
    await page.getByTestId(`reports-host-${HOST}`).check({ timeout: 15_000 });
    await page.getByTestId('reports-preset-1h').check();
    await page.getByTestId('reports-live').check();
    for (const s of ['inventory', 'security', 'health', 'gates']) expect(await page.getByTestId(`reports-section-${s}`).isChecked()).toBe(true);

    // Preview: the report page in a sandboxed frame, with the gate counts above it.
    await page.getByTestId('reports-preview-button').click();
    await page.locator('[data-testid="reports-preview"][data-state="shown"]').waitFor({ timeout: 60_000 });
    const iframe = page.getByTestId('reports-preview-frame');
    expect(await iframe.getAttribute('sandbox')).toBe('');
    const frame = page.frameLocator('[data-testid="reports-preview-frame"]');
    await expect.poll(() => frame.locator('h1').textContent(), { timeout: 10_000 }).toContain(TITLE);
    await frame.locator('#gates table').waitFor();
    expect(await frame.locator('#gates table').textContent()).toContain('Instance matches the order');
    expect(await page.getByTestId('reports-preview-facts').textContent()).toContain(HOST);
    const summary = await page.getByTestId('reports-gate-summary').textContent();
    expect(summary).toMatch(/\d+ pass.*\d+ fail.*\d+ pending.*\d+ unverified/);
    expect(Number(await page.getByTestId('reports-gate-summary-pending').getAttribute('data-value'))).toBeGreaterThan(0);
    await page.screenshot({ path: '/tmp/reports-form-preview.png' });

    // A manual gate marked with a note: who and when are shown; the next preview carries it.
    const gate = page.locator(`[data-testid="reports-gate"][data-gate-id="${GATE}"]`);
    await gate.getByLabel('Status').selectOption('pass');
    await gate.getByLabel(/^Note/).fill(NOTE);
    await gate.getByRole('button', { name: /^Save/ }).click();
    await expect.poll(() => page.getByTestId(`reports-gate-${GATE}-marked`).textContent()).toMatch(/^marked pass by .+ at /);
    expect(await gate.getAttribute('data-status')).toBe('pass');
    await page.getByTestId('reports-preview-stale').waitFor();
    await page.getByTestId('reports-preview-button').click();
    await page.getByTestId('reports-preview-stale').waitFor({ state: 'detached', timeout: 60_000 });
    await expect.poll(() => frame.locator('#gates').textContent(), { timeout: 10_000 }).toContain(NOTE);

    // Export md + html + json, unsigned: progress to done, then the folder and its digests.
    for (const f of ['md', 'html', 'json']) expect(await page.getByTestId(`reports-format-${f}`).isChecked()).toBe(true);
    expect(await page.getByTestId('reports-format-pdf').isChecked()).toBe(false);
    expect(await page.getByTestId('reports-sign').isChecked()).toBe(false);
    await page.getByTestId('reports-export-button').click();
    await page.locator('[data-testid="reports-progress"][data-state="done"]').waitFor({ timeout: 60_000 });
    const result = page.getByTestId('reports-result');
    await result.waitFor();
    const dir = (await page.getByTestId('reports-result-dir').textContent())!;
    expect(dir.startsWith(join(dataDir, 'reports'))).toBe(true);
    const rows = result.getByTestId('reports-file-row');
    const names = await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-name')));
    expect(names.sort()).toEqual(['evidence.json', 'manifest.json', 'report.html', 'report.md']);
    for (const name of names) {
      const sha = result.locator(`[data-testid="reports-file-row"][data-name="${name}"] [data-testid="reports-file-sha"]`);
      const full = (await sha.getAttribute('data-sha256'))!;
      expect(await sha.getAttribute('title')).toBe(full);
      expect(await sha.textContent()).toBe(`${full.slice(0, 12)}…`);
      // The digest shown is the digest of the file on disk.
      expect(createHash('sha256').update(readFileSync(join(dir, name!))).digest('hex'), name!).toBe(full);
    }
    expect(await page.getByTestId('reports-result-signer').textContent()).toBe('not signed');
    expect(existsSync(join(dir, 'manifest.json.sig'))).toBe(false);

    // Verify: every finding OK.
    await page.getByTestId('reports-verify-button').click();
    const verdict = page.locator('[data-testid="reports-verify-result"][data-state="done"]');
    await verdict.waitFor({ timeout: 15_000 });
    // Every finding is OK; the core counts an unsigned export's missing signature as the one
    // exception, which the headline words as such (and the finding still shows as FAIL).
    const findings = verdict.getByTestId('reports-finding');
    expect(await findings.count()).toBeGreaterThan(2);
    const failed = await findings.evaluateAll((els) => els.filter((e) => e.getAttribute('data-ok') !== 'true').map((e) => e.textContent));
    expect(failed.every((f) => /^FAIL signature .*missing/.test(f ?? ''))).toBe(true);
    expect(await verdict.textContent()).toContain('signature missing');
    const headline = await page.getByTestId('reports-verify-result-headline').textContent();
    expect(headline).toBe(failed.length === 0 ? 'all OK' : 'not signed — everything else OK');
    await result.scrollIntoViewIfNeeded();
    await page.screenshot({ path: '/tmp/reports-after-export.png' });

    // The export is in the list (refreshed after the export), verifiable from there.
    const id = (await result.getAttribute('data-export-id'))!;
    const row = page.locator(`[data-testid="reports-export-row"][data-export-id="${id}"]`);
    await row.waitFor({ timeout: 10_000 });
    expect(await row.getAttribute('data-dir')).toBe(dir);
    const rowText = await row.textContent();
    expect(rowText).toContain(TITLE);
    expect(rowText).toContain(HOST);
    expect(rowText).toContain('not signed');
    expect(rowText).toMatch(/\d+ pass/);
    await row.getByTestId('reports-row-verify').click();
    await row.locator('[data-testid="reports-row-verify-result"][data-state="done"]').waitFor({ timeout: 15_000 });
    expect(await row.getByTestId('reports-row-verify-result-headline').textContent()).toBe(headline);
    await page.getByTestId('reports-list').scrollIntoViewIfNeeded();
    await page.screenshot({ path: '/tmp/reports-list.png' });

    // The passphrase field was never shown, and nothing failed in the page.
    expect(await page.getByTestId('reports-passphrase').count()).toBe(0);
    expect(pageErrors).toEqual([]);
  }, 180_000);

  it('shows coded export errors, asks for the passphrase of an encrypted key, clears it, and signs', async () => {
    const work = mkdtempSync(join(tmpdir(), 'gc-e2e-reports-key-'));
    const keyFile = join(work, 'id_ed25519');
    const passphrase = 'shift handover 4711';
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-C', 'e2e@reports', '-f', keyFile]);
    const fingerprint = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${keyFile}.pub`], { encoding: 'utf8' }).split(' ')[1]!;
    const notAFolder = join(work, 'file');
    writeFileSync(notAFolder, 'x');
    const error = page.getByTestId('reports-export-error');
    const exportAndWait = async () => {
      await page.getByTestId('reports-export-button').click();
      await page.locator('[data-testid="reports-export-button"]:not([disabled])').waitFor({ timeout: 60_000 });
    };

    await page.getByTestId('reports-export').scrollIntoViewIfNeeded();
    await page.getByLabel('Output folder (optional)').fill(notAFolder);
    await exportAndWait();
    expect(await error.getAttribute('data-code')).toBe('REPORT_OUTPUT_UNWRITABLE');
    expect(await error.textContent()).toContain('Choose an output folder');
    expect(await page.locator('[data-testid="reports-progress"]').getAttribute('data-state')).toBe('failed');
    await page.getByLabel('Output folder (optional)').fill('');

    await page.getByTestId('reports-sign').check();
    await page.getByLabel(/^Private key file/).fill(keyFile);
    await exportAndWait();
    expect(await error.getAttribute('data-code')).toBe('REPORT_SIGNING_KEY_ENCRYPTED');
    expect(await error.textContent()).toContain('enter its passphrase');
    const field = page.getByTestId('reports-passphrase');
    expect(await field.getAttribute('type')).toBe('password');
    expect(await field.getAttribute('autocomplete')).toBe('off');
    await expect.poll(() => field.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    await page.screenshot({ path: '/tmp/reports-passphrase.png' });

    await field.fill('not the passphrase');
    await exportAndWait();
    expect(await error.getAttribute('data-code')).toBe('REPORT_SIGNING_KEY_PASSPHRASE_INCORRECT');
    expect(await field.inputValue()).toBe('');

    await field.fill(passphrase);
    await exportAndWait();
    expect(await error.count()).toBe(0);
    expect(await field.inputValue()).toBe('');
    const result = page.getByTestId('reports-result');
    expect(await page.getByTestId('reports-result-signer').textContent()).toBe(fingerprint);
    const dir = (await page.getByTestId('reports-result-dir').textContent())!;
    expect(existsSync(join(dir, 'manifest.json.sig'))).toBe(true);
    await page.getByTestId('reports-verify-button').click();
    await result.locator('[data-testid="reports-verify-result"][data-state="done"]').waitFor({ timeout: 15_000 });
    expect(await page.getByTestId('reports-verify-result-headline').textContent()).toBe('all OK');
    expect(await page.getByTestId('reports-verify-result').textContent()).toContain('signature valid');
    // Newest first in the list, marked signed.
    const first = page.getByTestId('reports-export-row').first();
    await expect.poll(() => first.getAttribute('data-dir')).toBe(dir);
    expect(await first.textContent()).toContain('signed');
    expect(await first.textContent()).not.toContain('not signed');
    // The passphrase never reached the page's storage.
    const stored = await page.evaluate<string>('JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })');
    expect(stored).not.toContain(passphrase);
    await result.scrollIntoViewIfNeeded();
    await page.screenshot({ path: '/tmp/reports-signed.png' });
    expect(pageErrors).toEqual([]);
  }, 180_000);
});
