import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoFleet, type DemoFleet } from '../../src-main/demo/index.js';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import { bridgeCall } from '../helpers/console-process.js';

// Alerts from service logs in the host view (issue #29 item 5, "Done when"):
// the built console on the demo fleet (in this process, so its OOM knob is
// reachable; log watch every 5 s), a restart approved through the console's
// lifecycle path ends in CUDA OOM, and the host view lists the log_failure
// alert; its lines open from the keyboard and show the OOM line marked.

const SHOTS = process.env.ALERTS_SHOTS_DIR ?? '/tmp/shots';

describe('log failure alert in the host view', () => {
  let demo: DemoFleet;
  let ui: ConsoleInBrowser;
  let page: Page;
  const dir = mkdtempSync(join(tmpdir(), 'gc-e2e-alerts-'));

  beforeAll(async () => {
    demo = await startDemoFleet({ dir: join(dir, 'fleet'), timeScale: 20 });
    const configFile = join(dir, 'conf', 'demo.yaml');
    mkdirSync(join(dir, 'conf'), { mode: 0o700 });
    // JSON is YAML: the fleet's config as a file would hold it, with the shortest log watch interval the config takes.
    writeFileSync(configFile, JSON.stringify({ ...demo.config, alerts: { logWatchIntervalMs: 5_000 } }, null, 2), { mode: 0o600 });
    ui = await startConsoleInBrowser(['--config', configFile, '--data-dir', join(dir, 'console'), '--ui-port', '0', '--proxy-port', '0']);
    page = ui.page;
    mkdirSync(SHOTS, { recursive: true });
  }, 90_000);

  afterAll(async () => {
    const code = await ui?.stop();
    await demo?.dispose();
    rmSync(dir, { recursive: true, force: true });
    expect(code).toBe(0);
  });

  it('a restart into CUDA OOM shows a log_failure alert whose lines open from the keyboard', async () => {
    await page.getByTestId('nav-host').click();
    await page.getByTestId('host-picker').selectOption('l20-poc');
    demo.host('l20-poc').setOomOnRestart('qwen', true);
    const proposed = await bridgeCall(ui.console.ui, 'actions.propose', { upstream: 'l20-poc/qwen', kind: 'restart', reason: 'e2e: restart into OOM', approveNow: { typedLabel: 'l20-poc' } });
    expect(proposed.ok, JSON.stringify(proposed)).toBe(true);
    const alert = page.locator('[data-testid="host-alert"][data-kind="log_failure"]');
    await alert.waitFor({ timeout: 60_000 });
    expect(await alert.locator('.host-alerts__line').textContent()).toMatch(/^critical Log failure qwen: cuda-oom(, [a-z-]+)* in the log of qwen \(\d+ lines?\)/);
    const context = alert.getByTestId('host-alert-context');
    expect(await context.getAttribute('open')).toBeNull();
    await context.locator('summary').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => context.getAttribute('open')).not.toBeNull();
    const oom = context.locator('[data-failure="cuda-oom"]').first();
    expect(await oom.isVisible()).toBe(true);
    expect(await oom.textContent()).toMatch(/CUDA out of memory|OutOfMemoryError|cudaMalloc failed/);
    await alert.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'alert-log-failure.png') });
  }, 120_000);
});
