import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoFleet, type DemoFleet } from '../../src-main/demo/index.js';
import { describeViolations, seriousViolations } from '../helpers/axe.js';
import { setTheme, startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';

// Host health, GPU processes and process flags through the built console
// (issue #29 items 2, 3). The demo fleet runs in this process so its knobs are
// reachable (as in logs.e2e): a full disk on l20-poc is flagged on its card in
// words, and a ghost process holding GPU memory off any service's port is a
// flag in the host view with the command to run as copyable text. The host
// view shows the disks table and a GPU process matched to its service, and an
// Xid and a thermal slowdown raised on the host in its GPU faults panel.
// Screenshots of the fleet and host views at 1440×900 go to HEALTH_SHOTS_DIR
// (default /tmp/shots).

const SHOTS = process.env.HEALTH_SHOTS_DIR ?? '/tmp/shots';
const GIB = 1024 ** 3;

describe('host health through the built console', () => {
  let demo: DemoFleet;
  let ui: ConsoleInBrowser;
  let page: Page;
  const dir = mkdtempSync(join(tmpdir(), 'gc-e2e-health-'));

  beforeAll(async () => {
    demo = await startDemoFleet({ dir: join(dir, 'fleet'), timeScale: 20 });
    const configFile = join(dir, 'conf', 'demo.yaml');
    mkdirSync(join(dir, 'conf'), { mode: 0o700 });
    // JSON is YAML; the shortest health interval the config takes, so a knob shows within seconds.
    writeFileSync(configFile, JSON.stringify({ ...demo.config, health: { intervalMs: 5_000 } }, null, 2), { mode: 0o600 });
    ui = await startConsoleInBrowser(['--config', configFile, '--data-dir', join(dir, 'console'), '--ui-port', '0', '--proxy-port', '0'], { viewport: { width: 1440, height: 900 }, bypassCSP: true });
    page = ui.page;
    mkdirSync(SHOTS, { recursive: true });
  }, 90_000);

  afterAll(async () => {
    const code = await ui?.stop();
    await demo?.dispose();
    rmSync(dir, { recursive: true, force: true });
    expect(code).toBe(0);
  });

  it('the card shows root disk free / total and flags a full disk in words', async () => {
    const card = page.getByTestId('host-card-l20-poc');
    const disk = card.getByTestId('health-disk');
    await expect.poll(() => disk.getAttribute('data-known'), { timeout: 30_000 }).toBe('true');
    expect(await disk.textContent()).toMatch(/^\d+(\.\d)? GiB free \/ \d+(\.\d)? (GiB|TiB)$/);
    expect(Number(await disk.getAttribute('data-value'))).toBeGreaterThan(10 * GIB);
    expect(await card.getByTestId('health-ram').textContent()).toMatch(/GiB \/ .*GiB/);
    expect(await card.getByTestId('health-load').textContent()).toMatch(/^\d+\.\d\d \/ 8 CPUs/);

    demo.host('l20-poc').setDiskFull(true);
    await expect.poll(() => disk.getAttribute('data-value'), { timeout: 30_000 }).toBe(String(8 * GIB));
    expect(await card.getByTestId('health-disk-flag').textContent()).toContain('low: 8.0 GiB free, below 10 GiB');
    // compact: the health line is one line at 1440 px (two at most when the issue link is long)
    const strip = await card.getByTestId('host-health').boundingBox();
    expect(strip!.height).toBeLessThan(56);
    await page.screenshot({ path: join(SHOTS, 'health-fleet-1440x900.png') });
  }, 90_000);

  it('the host view shows the disks table, a GPU process matched to its service, and a ghost flagged with its command to copy', async () => {
    const ghostPid = demo.host('l20-poc').setGhostProcess('qwen', true, { onPort: false });
    expect(ghostPid).not.toBeNull();
    // the card's link opens the host view
    const issues = page.getByTestId('host-card-l20-poc').getByTestId('health-issues');
    await expect.poll(() => issues.textContent(), { timeout: 40_000 }).toMatch(/1 process flag/);
    await issues.click();
    const view = page.getByTestId('host-view');
    await expect.poll(() => view.getAttribute('data-host')).toBe('l20-poc');

    const rootRow = page.getByTestId('disks-table').locator('[data-testid="disk-row"][data-kind="root"]');
    await rootRow.waitFor({ timeout: 20_000 });
    expect(await rootRow.textContent()).toMatch(/8\.0 GiB \/ \d+ GiB.*low: 8\.0 GiB free/);

    const matched = page.locator('[data-testid="gpu-process-row"][data-service="qwen"]').first();
    await matched.waitFor({ timeout: 20_000 });
    expect(await matched.textContent()).toMatch(/it or its parent listens on :\d+/);

    const flag = page.locator('[data-testid="process-flag"][data-code="FLEET_GPU_PROCESS_UNKNOWN"]');
    await flag.waitFor({ timeout: 20_000 });
    expect(await flag.textContent()).toContain(`PID ${ghostPid}`);
    expect(await flag.getByTestId('flag-command').textContent()).toBe(`kill ${ghostPid}`);
    expect(await flag.getByRole('button', { name: `Copy the command: kill ${ghostPid}` }).count()).toBe(1);
    // the ghost's row in the process table names no service
    expect(await page.locator(`[data-testid="gpu-process-row"][data-pid="${ghostPid}"]`).textContent()).toContain('not a configured service');

    // GPU faults: an Xid with an uncorrectable ECC error (48) and a thermal slowdown, raised on the demo host
    demo.host('l20-poc').raiseXid({ gpuIndex: 0, xid: 48 });
    demo.host('l20-poc').setThermalThrottle(0, true);
    const faults = page.getByTestId('gpu-faults');
    await expect.poll(() => faults.getByTestId('xid-list').textContent().catch(() => ''), { timeout: 30_000 }).toMatch(/Xid 48 GPU 0/);
    await expect.poll(() => faults.getByTestId('gpu-fault-row').first().textContent(), { timeout: 30_000 }).toMatch(/HW thermal slowdown — slowdown for/);
    expect(await faults.getByTestId('kernel-log-status').textContent()).toMatch(/^Read with (journalctl -k|dmesg): \d+ Xid events?\.$/);
    expect(await faults.getByTestId('gpu-fault-row').first().textContent()).toMatch(/[1-9]\d* uncorr\./);
    const charts = page.getByTestId('host-health-charts');
    await expect.poll(() => charts.getByTestId('host-chart-disk').getAttribute('data-points').then((v) => Number(v || 0)), { timeout: 20_000 }).toBeGreaterThan(0);

    // the page scrolls inside the app's main area: one shot per part
    for (const part of ['process-flags', 'host-health-panel', 'gpu-faults', 'host-health-charts'] as const) {
      await page.getByTestId(part).scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SHOTS, `health-host-1440x900-${part}.png`) });
    }
    // the other theme at the smaller size: the tables wrap inside their panels, nothing is cut off
    const other = (await page.locator('html').getAttribute('data-theme')) === 'dark' ? 'light' : 'dark';
    await setTheme(page, other);
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.getByTestId('host-health-panel').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, `health-host-1280x720-${other}.png`) });
    const overflowing = await page.$$eval('.health-panel', (els) => els.filter((e) => e.scrollWidth > e.clientWidth + 1).length);
    expect(overflowing).toBe(0);

    // axe-core on the filled host view (flag, tables, faults, Xids) and the fleet cards' health lines, both themes
    const found: string[] = [];
    for (const theme of ['dark', 'light'] as const) {
      await setTheme(page, theme);
      found.push(...describeViolations(`${theme} host`, await seriousViolations(page)));
      await page.getByTestId('nav-fleet').click();
      await page.getByTestId('host-card-l20-poc').getByTestId('health-issues').waitFor();
      found.push(...describeViolations(`${theme} fleet`, await seriousViolations(page)));
      await page.getByTestId('nav-host').click();
      await page.getByTestId('gpu-faults').waitFor();
    }
    expect(found).toEqual([]);

    // the AMD host: its faults panel has the critical temperature and RAS columns (a look, for the screenshot)
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.getByTestId('host-picker').selectOption('strix');
    await page.getByTestId('gpu-fault-row').first().waitFor({ timeout: 30_000 });
    await page.getByTestId('gpu-faults').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'health-host-strix-1440x900-gpu-faults.png') });
  }, 120_000);
});
