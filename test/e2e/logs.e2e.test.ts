import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoFleet, type DemoFleet } from '../../src-main/demo/index.js';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import { bridgeCall } from '../helpers/console-process.js';
import { until } from '../helpers/until.js';

// Service logs through the built console (issue #29 items 1 and 8). The demo
// fleet runs in this process (its knobs are reachable) with its traffic on;
// the console reads it from the config file the fleet hands over, as it reads
// real hosts. The Logs view shows a service's start-up with the source's
// timestamps in the operator's zone, follows live while traffic runs, and
// follows a restart (proposed and approved through the console's lifecycle
// path, the OOM knob set in-process) into its CUDA OOM, marked. The host
// view's panel reads the same; a bad regex shows the channel's code.

const SHOTS = process.env.LOGS_SHOTS_DIR ?? '/tmp/shots';

describe('service logs through the built console', () => {
  let demo: DemoFleet;
  let ui: ConsoleInBrowser;
  let page: Page;
  const dir = mkdtempSync(join(tmpdir(), 'gc-e2e-logs-'));

  beforeAll(async () => {
    demo = await startDemoFleet({ dir: join(dir, 'fleet'), timeScale: 20, traffic: true });
    const configFile = join(dir, 'conf', 'demo.yaml');
    mkdirSync(join(dir, 'conf'), { mode: 0o700 });
    // JSON is YAML: the fleet's config as a file would hold it.
    writeFileSync(configFile, JSON.stringify(demo.config, null, 2), { mode: 0o600 });
    ui = await startConsoleInBrowser(['--config', configFile, '--data-dir', join(dir, 'console'), '--ui-port', '0', '--proxy-port', '0'], { timezoneId: 'Asia/Kolkata' });
    page = ui.page;
    mkdirSync(SHOTS, { recursive: true });
  }, 90_000);

  afterAll(async () => {
    const code = await ui?.stop();
    await demo?.dispose();
    rmSync(dir, { recursive: true, force: true });
    expect(code).toBe(0);
  });

  const status = () => page.getByTestId('logs-status');
  const shown = async () => Number(/^.*?(\d+) lines? shown/.exec((await status().textContent()) ?? '')?.[1] ?? -1);

  it('shows a service\'s start-up with its timestamps, follows live, and follows a restart into CUDA OOM (highlighted)', async () => {
    await page.getByTestId('nav-logs').click();
    const service = page.getByTestId('logs-service');
    await expect.poll(() => service.locator('option').count(), { timeout: 20_000 }).toBeGreaterThan(3);
    await service.selectOption('l20-poc/qwen');
    // The last 5,000 lines, and Apply again after an error: on a slow full run (CI at 1232a8f) the start-up line was
    // not shown within 20 s (the first tail failing while the host reconnected, or traffic's lines past 1,000).
    await page.getByTestId('logs-lines').selectOption('5000');
    // A start-up line: the API server's version, or, when the log holds only what came since the engine last
    // started (seen with another demo fleet running beside it: 50 lines from "Starting to load model"), that line.
    const first = page.locator('[data-testid="log-line"]', { hasText: /vLLM API server version|Starting to load model/ }).first();
    // The list draws only the rows in view and sticks to the bottom: once the log holds more than a screenful (the
    // console's own polls write access lines; a slow full run reaches this point a minute or more after start, CI at
    // 21eac7d), the start-up line exists only scrolled to the top. So each try scrolls up before it looks.
    const list = page.getByTestId('logs-list');
    await until(
      async () => {
        if ((await list.count()) > 0) await list.evaluate((el) => (el.scrollTop = 0));
        if ((await first.count()) > 0) return true;
        if ((await page.getByTestId('logs-error').count()) > 0) await page.getByTestId('logs-apply').click();
        return false;
      },
      { timeoutMs: 40_000, intervalMs: 1_000, what: "l20-poc/qwen's start-up line in the Logs view (Apply again after an error)" },
    );
    await list.evaluate((el) => (el.scrollTop = 0));
    await first.waitFor({ timeout: 5_000 });
    // The source's own time, in the operator's zone (Asia/Kolkata), with the date.
    expect(await first.locator('time').textContent()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\+5:30$/);
    expect(await status().textContent()).toContain('compose service vllm');

    await page.getByTestId('logs-follow').check();
    await expect.poll(() => status().getAttribute('data-status'), { timeout: 10_000 }).toBe('following');
    const before = await shown();
    // Traffic and the console's own polls make the server write: new lines arrive while following.
    await expect.poll(shown, { timeout: 20_000 }).toBeGreaterThan(before + 3);
    // Scrolled up, the list stays put and counts what came; the button jumps back down and sticks there again.
    await page.getByTestId('logs-list').evaluate((el) => (el.scrollTop = 0));
    const jump = page.getByTestId('logs-jump');
    await jump.waitFor({ timeout: 20_000 });
    expect(await jump.textContent()).toMatch(/^\d+ new lines? ↓$/);
    await page.screenshot({ path: join(SHOTS, 'logs-view-scrolled-up.png') });
    await jump.click();
    await expect.poll(() => jump.count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'logs-view.png') });

    demo.host('l20-poc').setOomOnRestart('qwen', true);
    const proposed = await bridgeCall(ui.console.ui, 'actions.propose', { upstream: 'l20-poc/qwen', kind: 'restart', reason: 'e2e: restart into OOM', approveNow: { typedLabel: 'l20-poc' } });
    expect(proposed.ok, JSON.stringify(proposed)).toBe(true);
    const oom = page.locator('[data-testid="log-line"][data-failure="cuda-oom"]').first();
    await oom.waitFor({ timeout: 30_000 });
    expect(await oom.textContent()).toMatch(/CUDA OOM.*torch\.OutOfMemoryError: CUDA out of memory/);
    // The same follow saw the whole restart: shutdown, the new process's start-up, then the OOM.
    expect(await status().getAttribute('data-status')).toBe('following');
    expect(demo.host('l20-poc').simulator('qwen').state()).toMatchObject({ process: 'down', failure: 'cuda-oom' });
    await page.screenshot({ path: join(SHOTS, 'logs-oom.png') });
  }, 120_000);

  it("the host view's logs panel reads that host's services; a bad regex shows the channel's coded error", async () => {
    await page.getByTestId('nav-host').click();
    await page.getByTestId('host-picker').selectOption('strix');
    const panel = page.getByTestId('host-logs-panel');
    await panel.scrollIntoViewIfNeeded();
    expect(await page.getByTestId('host-logs-service').locator('option').allTextContents()).toEqual(['strix/coder']);
    // The panel tails once when it opens. In a full CI run (load average 8) that first tail came back with an error
    // once (the host still reconnecting, or the tail past its deadline) and the start-up line never showed: the
    // panel says the error and Apply tails again, which is what an operator does.
    // What it waits for is llama-server's start-up line or the line it writes for every finished request (its own
    // format, not vLLM's): early in a run the first is in the last lines, later the second always is. The start-up
    // line alone failed a slow full run (CI at 98adb5c, load 8: the first test took minutes) even in the last 5,000
    // lines, demo traffic logging a request's ten lines every second or so.
    const llamaLine = /main: server is listening on http:\/\/127\.0\.0\.1:8080|log_server_r: request: POST \//;
    const startLine = page.locator('[data-testid="log-line"]', { hasText: llamaLine });
    await until(
      async () => {
        if ((await startLine.count()) > 0) return true;
        if ((await page.getByTestId('host-logs-error').count()) > 0) await page.getByTestId('host-logs-apply').click();
        return false;
      },
      { timeoutMs: 40_000, intervalMs: 1_000, what: "a request line of strix/coder's llama-server in the host panel (Apply again after an error)" },
    );
    await page.getByTestId('host-logs-list').evaluate((el) => (el.scrollTop = el.scrollHeight));
    await page.getByTestId('host-logs-list').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'logs-host-panel.png') });
    // "Download these lines": the lines shown, as a .log file, each with the source's time (ISO, local offset).
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('host-logs-download').click()]);
    expect(download.suggestedFilename()).toMatch(/^strix-coder-.*\.log$/);
    const saved = readFileSync(await download.path(), 'utf8').trim().split('\n');
    expect(saved.length).toBe(Number(await page.getByTestId('host-logs-status').getAttribute('data-received')));
    expect(saved.every((l) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+05:30 /.test(l))).toBe(true);
    expect(saved.join('\n')).toMatch(llamaLine);
    await page.getByTestId('host-logs-filter').fill('slot (launch');
    await page.getByTestId('host-logs-regex').check();
    await page.getByTestId('host-logs-apply').click();
    await expect.poll(async () => (await page.getByTestId('host-logs-filter-error').textContent()) ?? '', { timeout: 10_000 }).toMatch(/^LOGS_FILTER_INVALID: /);
    await page.getByTestId('host-logs-filter').fill('slot launch');
    await page.getByTestId('host-logs-regex').uncheck();
    await page.getByTestId('host-logs-apply').click();
    await expect.poll(() => page.getByTestId('host-logs-filter-error').count(), { timeout: 10_000 }).toBe(0);
  }, 90_000);
});
