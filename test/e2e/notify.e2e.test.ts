import { createHmac } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTheme, startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import { bridgeCall, type RunningConsole } from '../helpers/console-process.js';

// The Notifications view: a webhook channel added through the form, pointing
// at a loopback receiver in this test (the console's config.yaml sets
// notifications.allowLoopback, which channels made in the console need for
// that); Send test arrives signed with the key typed into the password field;
// the Deliveries table shows the row; editing and removing (with its
// confirmation) work; the key never comes back through the contract. Without
// the switch, the form names the refused URL.

const KEY = 'e2e-hmac-key-never-shown-5c1';
const AXE = readFileSync(join(process.cwd(), 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

/** axe-core's serious and critical findings on the page as it stands (the a11y e2e sees only each view's first state). */
async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: AXE });
  const result = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[] }> } }).axe;
    return axe.run((globalThis as unknown as { document: unknown }).document, { resultTypes: ['violations'] });
  });
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Table cells whose overflow is hidden or ellipsised while their text is wider than their box (as layout.e2e checks). */
function clippedCells(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<unknown> } }).document;
    const win = globalThis as unknown as { getComputedStyle(e: unknown): { overflowX: string; textOverflow: string; display: string } };
    const cells = Array.from(doc.querySelectorAll('th, td, th *, td *')) as { textContent: string | null; scrollWidth: number; clientWidth: number }[];
    return cells
      .filter((el) => {
        const st = win.getComputedStyle(el);
        const hides = st.overflowX === 'hidden' || st.overflowX === 'clip' || st.textOverflow === 'ellipsis';
        return st.display !== 'none' && el.clientWidth > 1 && hides && el.scrollWidth > el.clientWidth + 1;
      })
      .map((el) => (el.textContent ?? '').trim().slice(0, 60));
  });
}

describe('notifications view', () => {
  let ui: ConsoleInBrowser;
  let consoleProc: RunningConsole;
  let page: Page;
  let receiver: Server;
  let port: number;
  const got: { headers: IncomingMessage['headers']; body: string }[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-notify-view-'));
  const configFile = join(dataDir, 'config.yaml');

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        got.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    port = (receiver.address() as AddressInfo).port;
    writeFileSync(configFile, 'hosts: []\nnotifications:\n  allowLoopback: true\n');
    // bypassCSP lets the test inject axe-core; the console's own CSP stays as it is.
    ui = await startConsoleInBrowser(['--config', configFile, '--data-dir', dataDir], { bypassCSP: true, readyTestId: 'nav-notifications' });
    consoleProc = ui.console;
    page = ui.page;
  }, 60_000);

  afterAll(async () => {
    await ui?.stop();
    await new Promise((r) => receiver?.close(r));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts empty and says what to do', async () => {
    await page.getByTestId('nav-notifications').click();
    await page.getByTestId('notify-view').waitFor();
    await page.getByTestId('notify-channels-empty').waitFor();
    expect(await page.getByTestId('notify-channels-empty').textContent()).toMatch(/Add channel/);
    expect(await page.getByTestId('notify-deliveries-empty').textContent()).toMatch(/Send test/);
  });

  it('a bad URL is refused with the field named, and nothing is added', async () => {
    await page.getByTestId('notify-add').click();
    await page.getByTestId('notify-id').fill('oncall-hook');
    await page.getByTestId('notify-url').fill('not a url');
    await page.getByTestId('notify-secret').fill(KEY);
    await page.getByTestId('notify-save').click();
    await expect.poll(() => page.getByTestId('notify-form-error').textContent()).toMatch(/channel\.url/);
    await page.getByTestId('notify-cancel').click();
    expect(await page.getByTestId('notify-channels-empty').count()).toBe(1);
  });

  it('adds a webhook channel through the form; Send test arrives signed; the delivery is listed', async () => {
    await page.getByTestId('notify-add').click();
    await page.getByTestId('notify-id').fill('oncall-hook');
    await page.getByTestId('notify-kind').selectOption('webhook');
    await page.getByTestId('notify-url').fill(`http://127.0.0.1:${port}/hooks/gpu?token=qs-e2e-token`);
    await page.getByTestId('notify-event-host.back').check();
    await page.getByTestId('notify-severity').selectOption('info');
    await page.getByTestId('notify-quiet-from').fill('22:00');
    await page.getByTestId('notify-quiet-to').fill('07:00');
    await page.getByTestId('notify-quiet-tz').fill('Europe/Berlin');
    expect(await page.getByTestId('notify-rate').inputValue()).toBe('10');
    await page.getByTestId('notify-rate').fill('30');
    expect(await page.getByTestId('notify-secret').getAttribute('type')).toBe('password');
    await page.getByTestId('notify-secret').fill(KEY);
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByTestId('notify-kind').selectOption('zulip');
    await page.getByTestId('notify-zulip-email').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByTestId('notify-kind').selectOption('webhook');
    mkdirSync('test-results', { recursive: true });
    await page.screenshot({ path: 'test-results/e2e-notifications-form.png', fullPage: true });
    await page.getByTestId('notify-save').click();

    const row = page.getByTestId('notify-channel-oncall-hook');
    await row.waitFor();
    expect(await row.getAttribute('data-source')).toBe('ui');
    const url = await row.getByTestId('notify-channel-url').textContent();
    expect(url).toBe(`http://127.0.0.1:${port}/hooks/gpu?token=•••`);
    expect(await row.textContent()).toMatch(/22:00–07:00\s*Europe\/Berlin/);
    expect(await row.textContent()).toMatch(/stored/);
    expect(await row.getByTestId('notify-channel-rate').textContent()).toBe('≤ 30/min');

    await page.getByTestId('notify-test-oncall-hook').click();
    await expect.poll(() => page.getByTestId('notify-test-outcome-oncall-hook').textContent(), { timeout: 15_000 }).toMatch(/delivered · HTTP 204/);
    expect(got).toHaveLength(1);
    const h = got[0]!;
    expect(h.headers['x-gpu-console-signature']).toBeDefined();
    const ts = String(h.headers['x-gpu-console-timestamp']);
    expect(h.headers['x-gpu-console-signature']).toBe('sha256=' + createHmac('sha256', KEY).update(`${ts}.${h.body}`).digest('hex'));

    const delivery = page.locator('[data-testid="notify-delivery"][data-channel="oncall-hook"]');
    await expect.poll(() => delivery.count(), { timeout: 10_000 }).toBe(1);
    expect(await delivery.getAttribute('data-status')).toBe('delivered');
    expect(await delivery.getByTestId('notify-delivery-http').textContent()).toBe('204');

    // The key never comes back out, nor the URL's token.
    const list = await bridgeCall<unknown>(consoleProc.ui, 'notifications.listChannels', {});
    const rows = await bridgeCall<unknown>(consoleProc.ui, 'notifications.deliveries', { limit: 10 });
    expect(JSON.stringify([list, rows])).not.toMatch(new RegExp(`${KEY}|qs-e2e-token`));
    expect(await page.content()).not.toContain(KEY);
    for (const f of ['gpu-console.db', 'gpu-console.db-wal']) {
      if (!existsSync(join(dataDir, f))) continue;
      const db = readFileSync(join(dataDir, f)).toString('latin1');
      for (const secret of [KEY, 'qs-e2e-token']) expect(db).not.toContain(secret);
    }

    await page.screenshot({ path: 'test-results/e2e-notifications.png', fullPage: true });
    for (const theme of ['dark', 'light'] as const) {
      await setTheme(page, theme);
      expect(await seriousViolations(page)).toEqual([]);
    }
    // The filled tables at the smaller size the layout e2e uses: no header or cell cuts its text.
    await page.setViewportSize({ width: 1280, height: 720 });
    await setTheme(page, 'dark');
    await page.screenshot({ path: 'test-results/e2e-notifications-1280-dark.png', fullPage: true });
    expect(await clippedCells(page)).toEqual([]);
    await setTheme(page, 'light');
    await page.setViewportSize({ width: 1440, height: 900 });
  }, 40_000);

  it('edits a channel keeping its URL and key, then removes it after a confirmation', async () => {
    await page.getByTestId('notify-edit-oncall-hook').click();
    expect(await page.getByTestId('notify-id').getAttribute('readonly')).not.toBeNull();
    expect(await page.getByTestId('notify-url').inputValue()).toBe('');
    expect(await page.getByTestId('notify-secret').inputValue()).toBe('');
    await page.getByTestId('notify-severity').selectOption('critical');
    // The rate limit shows what is stored and takes a new one; out of range is named, nothing saved.
    expect(await page.getByTestId('notify-rate').inputValue()).toBe('30');
    await page.getByTestId('notify-rate').fill('500');
    await page.getByTestId('notify-save').click();
    await expect.poll(() => page.getByTestId('notify-form-error').textContent()).toContain('Messages a minute: a whole number from 1 to 120.');
    await page.getByTestId('notify-rate').fill('2');
    await page.getByTestId('notify-save').click();
    await expect.poll(() => page.getByTestId('notify-channel-oncall-hook').textContent()).toMatch(/critical/);
    expect(await page.getByTestId('notify-channel-oncall-hook').getByTestId('notify-channel-rate').textContent()).toBe('≤ 2/min');
    const saved = await bridgeCall<{ channels: { id: string; maxPerMinute: number }[] }>(consoleProc.ui, 'notifications.listChannels', {});
    expect(saved.ok && saved.data.channels.find((c) => c.id === 'oncall-hook')?.maxPerMinute).toBe(2);
    await page.getByTestId('notify-test-oncall-hook').click();
    await expect.poll(() => page.getByTestId('notify-test-outcome-oncall-hook').textContent(), { timeout: 15_000 }).toMatch(/delivered/);
    expect(got).toHaveLength(2);

    await page.getByTestId('notify-remove-oncall-hook').click();
    await page.getByTestId('notify-remove-dialog').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByTestId('notify-remove-cancel').click();
    expect(await page.getByTestId('notify-channel-oncall-hook').count()).toBe(1);
    await page.getByTestId('notify-remove-oncall-hook').click();
    await page.getByTestId('notify-remove-confirm').click();
    await page.getByTestId('notify-channels-empty').waitFor();
    // Past deliveries stay.
    expect(await page.locator('[data-testid="notify-delivery"][data-channel="oncall-hook"]').count()).toBe(2);
  }, 40_000);

  it('without notifications.allowLoopback, a URL on this machine is refused and named in the form; nothing is sent', async () => {
    writeFileSync(configFile, 'hosts: []\n');
    const reloaded = await bridgeCall<{ ok: boolean }>(consoleProc.ui, 'config.reload', {});
    expect(reloaded.ok && reloaded.data.ok).toBe(true);
    await page.getByTestId('notify-add').click();
    await page.getByTestId('notify-id').fill('probe');
    await page.getByTestId('notify-kind').selectOption('ntfy');
    await page.getByTestId('notify-url').fill(`http://127.0.0.1:${port}/scan`);
    await page.getByTestId('notify-save').click();
    await expect.poll(() => page.getByTestId('notify-form-error').textContent()).toMatch(/channel\.url: 127\.0\.0\.1:\d+ is a loopback address/);
    await page.getByTestId('notify-cancel').click();
    await page.getByTestId('notify-channels-empty').waitFor();
    expect(got).toHaveLength(2);
  }, 30_000);
});
