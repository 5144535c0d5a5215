import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import type { RunningConsole } from '../helpers/console-process.js';
import { ROOT } from '../helpers/imports.js';

// The real path end to end: `gpu-console serve --demo` → SSH to the demo hosts
// → tunnels → the UI in headless Chromium through the web bridge.

describe('gpu-console serve --demo, seen in a browser', () => {
  let ui: ConsoleInBrowser;
  let consoleProc: RunningConsole;
  let page: Page;
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-'));
  const readyFile = join(dataDir, 'ready-from-flag.json');

  beforeAll(async () => {
    // A locator that never matches fails with its name instead of running into the test's own timeout.
    ui = await startConsoleInBrowser(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir, '--ui-port', '0', '--proxy-port', '0', '--ready-file', readyFile], { load: false, defaultTimeoutMs: 15_000 });
    consoleProc = ui.console;
    page = ui.page;
  }, 60_000);

  afterAll(async () => {
    const code = await ui?.stop();
    expect(code).toBe(0);
    expect(existsSync(readyFile)).toBe(false);
    expect(existsSync(join(dataDir, 'ready.json'))).toBe(false);
  });

  it('writes the ready file named by --ready-file and one in the data dir', () => {
    const info = JSON.parse(readFileSync(readyFile, 'utf8'));
    expect(info.ui).toBe(consoleProc.ui);
    expect(info.ui).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#token=[0-9a-f]{64}$/);
    expect(info.pid).toBe(consoleProc.child.pid);
    expect(JSON.parse(readFileSync(join(dataDir, 'ready.json'), 'utf8'))).toEqual(info);
  });

  it('shows both demo hosts with live GPU figures read over SSH', async () => {
    await page.goto(consoleProc.ui);
    const l20 = page.getByTestId('host-card-l20-poc');
    const tri = page.getByTestId('host-card-tri-gpu');
    await expect.poll(async () => (await l20.getByTestId('host-state').textContent())?.toLowerCase(), { timeout: 20_000 }).toContain('connected');
    await expect.poll(async () => (await tri.getByTestId('host-state').textContent())?.toLowerCase(), { timeout: 20_000 }).toContain('connected');
    await expect.poll(async () => l20.getByTestId('gpu-row-l20-poc-0').textContent(), { timeout: 15_000 }).toContain('L20');
    await expect.poll(async () => tri.locator('[data-testid^="gpu-row-tri-gpu-"]').count(), { timeout: 15_000 }).toBe(3);
    // The token left the visible URL once read.
    expect(page.url()).not.toContain('token=');
  });

  it('shows non-zero tokens/s and a KV-cache figure for a host while chat requests run through its tunnel', async () => {
    const service = page.getByTestId('service-l20-poc-qwen');
    await expect.poll(async () => service.getByTestId('tunnel-url').getAttribute('data-value'), { timeout: 20_000 }).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const tunnelUrl = (await service.getByTestId('tunnel-url').getAttribute('data-value'))!;

    const chats = Array.from({ length: 4 }, (_, i) =>
      request(`${tunnelUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'Qwen3.6-27B-FP8',
          max_tokens: 120,
          messages: [{ role: 'user', content: `Summarise the on-call handbook, part ${i}.` }],
        }),
      }).then(async (r) => ({ status: r.statusCode, body: (await r.body.json()) as { usage?: { completion_tokens: number } } })),
    );

    const value = async (id: string) => Number((await service.getByTestId(id).getAttribute('data-value')) || 'NaN');
    await expect.poll(() => value('tokps'), { timeout: 20_000, interval: 250 }).toBeGreaterThan(0);
    await expect.poll(() => value('kv-pct'), { timeout: 10_000, interval: 250 }).toBeGreaterThan(0);
    await expect.poll(() => value('running'), { timeout: 10_000, interval: 250 }).toBeGreaterThan(0);
    await page.screenshot({ path: join(ROOT, 'test-results', 'e2e-fleet-under-load.png'), fullPage: true });

    const results = await Promise.all(chats);
    for (const r of results) {
      expect(r.status).toBe(200);
      expect(r.body.usage?.completion_tokens).toBeGreaterThan(0);
    }
  }, 60_000);

  it('keyboard: Ctrl+K opens the command palette, a host can be opened from it, Alt+1 returns to the fleet', async () => {
    await page.keyboard.press('Control+k');
    const input = page.getByTestId('command-palette-input');
    await expect.poll(() => input.count()).toBe(1);
    expect(await input.evaluate((el) => el === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement)).toBe(true);
    await input.fill('open tri');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('command-palette').count()).toBe(0);
    await expect.poll(() => page.getByTestId('host-picker').inputValue()).toBe('tri-gpu');
    await page.keyboard.press('Alt+1');
    await expect.poll(() => page.getByTestId('host-card-l20-poc').count()).toBe(1);
  });

  it('the palette only proposes lifecycle changes: the proposal waits in the Actions view', async () => {
    await page.keyboard.press('Control+k');
    await page.getByTestId('command-palette-input').fill('propose sleep l20-poc/qwen');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('body').textContent(), { timeout: 10_000 }).toMatch(/Waiting for approval\s*1/i);
    // The palette closes only after the proposal came back: until it has, Alt+1 lands in its input (a typing target) and is ignored.
    await expect.poll(() => page.getByTestId('command-palette').count(), { timeout: 5_000 }).toBe(0);
    const qwen = page.getByTestId('service-l20-poc-qwen');
    await page.keyboard.press('Alt+1');
    await expect.poll(() => qwen.count(), { timeout: 5_000 }).toBe(1);
    expect(await qwen.getByTestId('sleep-state').textContent({ timeout: 5_000 })).toMatch(/awake/i);
  });
});
