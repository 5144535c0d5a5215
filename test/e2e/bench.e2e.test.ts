import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import type { RunningConsole } from '../helpers/console-process.js';

// The built console end to end: a small sweep started from the Benchmarks view
// in headless Chromium (through the proxy, class batch), progress seen, the
// result table and the comparison of two runs shown.

describe('benchmarks through the built console', () => {
  let ui: ConsoleInBrowser;
  let consoleProc: RunningConsole;
  let page: Page;
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-bench-'));

  beforeAll(async () => {
    ui = await startConsoleInBrowser(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir, '--ui-port', '0', '--proxy-port', '0'], { load: false });
    consoleProc = ui.console;
    page = ui.page;
  }, 60_000);

  afterAll(async () => {
    expect(await ui?.stop()).toBe(0);
  });

  async function startRun(name: string): Promise<void> {
    await page.getByTestId('bench-name').fill(name);
    // Until the demo tunnels are up the run is refused before it starts (BENCH_TARGET_UNREACHABLE); try again then.
    for (let i = 0; i < 40; i++) {
      await page.getByTestId('bench-start').click();
      const outcome = await Promise.race([
        page.getByTestId('bench-progress').filter({ hasText: name }).waitFor({ timeout: 3_000 }).then(() => 'started'),
        page.getByTestId('bench-error').waitFor({ timeout: 3_000 }).then(() => 'refused'),
      ]).catch(() => 'refused');
      if (outcome === 'started') return;
      await page.waitForTimeout(500);
    }
    throw new Error('the run never started');
  }

  it('starts a run from the Benchmarks view, shows progress, the result table, and a comparison', async () => {
    await page.goto(consoleProc.ui);
    await page.getByTestId('nav-bench').click();
    await page.getByTestId('bench-levels').fill('1,2');
    await page.getByTestId('bench-count').fill('2');
    await page.getByTestId('bench-max-tokens').fill('8');
    await startRun('first');
    await page.locator('[data-testid="bench-progress"][data-state="completed"]').waitFor({ timeout: 30_000 });
    await expect.poll(() => page.getByTestId('bench-level-row').count(), { timeout: 10_000 }).toBe(2);
    expect(await page.getByTestId('bench-result-table').textContent()).toContain('concurrency 2');
    await page.getByTestId('bench-max-tokens').fill('16');
    await startRun('second');
    await page.locator('[data-testid="bench-progress"][data-state="completed"]').filter({ hasText: 'second' }).waitFor({ timeout: 30_000 });
    await page.getByTestId('bench-compare-with').last().check();
    await page.getByTestId('bench-compare').waitFor({ timeout: 10_000 });
    expect(await page.getByTestId('bench-compare').textContent()).toContain('output tok/s');
    expect(await page.getByTestId('bench-eval').textContent()).toContain('P95 end-to-end');
    mkdirSync('/tmp/shots', { recursive: true });
    await page.screenshot({ path: '/tmp/shots/bench-view.png', fullPage: false });
    await page.screenshot({ path: '/tmp/shots/bench-full.png', fullPage: true });
  }, 90_000);

  it('saves, loads, edits and deletes a scenario with an inline JSONL file; imports GuideLLM; evaluates a traffic window', async () => {
    const jsonl = (text: string) => ({ name: 'chats.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from(text) });
    const rows = page.getByTestId('bench-scenario-row');
    await page.getByTestId('bench-name').fill('chats');
    await page.getByTestId('bench-prompt-mode').selectOption('jsonl');
    // A broken line is named with its number, before anything runs.
    await page.getByTestId('bench-jsonl-file').setInputFiles(jsonl('[{"role":"user","content":"hi"}]\n{"messages": [\n'));
    await expect.poll(() => page.getByTestId('bench-jsonl-loaded').textContent()).toContain('chats.jsonl: 2 non-empty lines');
    await page.getByTestId('bench-check').click();
    await expect.poll(() => page.getByTestId('bench-error').textContent()).toContain('chats.jsonl:2');
    await page.getByTestId('bench-jsonl-file').setInputFiles(jsonl('[{"role":"user","content":"hi"}]\n{"messages":[{"role":"user","content":"status?"}]}\n'));
    await expect.poll(() => page.getByTestId('bench-jsonl-loaded').textContent()).toContain('chats.jsonl: 2 non-empty lines');
    await page.getByTestId('bench-check').click();
    await expect.poll(() => page.getByTestId('bench-notice').textContent()).toContain('2 prompts');
    await page.getByTestId('bench-save').click();
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('chats.jsonl (2 lines)');
    // A fresh form, then the saved scenario loaded back into it (keyboard only).
    await page.getByTestId('bench-new').click();
    expect(await page.getByTestId('bench-name').inputValue()).toBe('sweep');
    await rows.first().getByTestId('bench-scenario-load').focus();
    await page.keyboard.press('Enter');
    expect(await page.getByTestId('bench-name').inputValue()).toBe('chats');
    expect(await page.getByTestId('bench-prompt-mode').inputValue()).toBe('jsonl');
    await page.getByTestId('bench-max-tokens').fill('12');
    await page.getByTestId('bench-save').click();
    await expect.poll(() => page.getByTestId('bench-notice').textContent()).toContain('chats saved');
    expect(await rows.count()).toBe(1); // saved in place, not duplicated
    await page.getByTestId('bench-name').fill('chats copy');
    await page.getByTestId('bench-save-new').click();
    await expect.poll(() => rows.count()).toBe(2);
    await page.getByRole('button', { name: 'delete scenario chats copy' }).click();
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('chats');
    // The edit was stored: a fresh page, the scenario loaded again.
    await page.goto(consoleProc.ui);
    await page.getByTestId('nav-bench').click();
    await expect.poll(() => rows.count()).toBe(1);
    await rows.first().getByTestId('bench-scenario-load').click();
    expect(await page.getByTestId('bench-max-tokens').inputValue()).toBe('12');

    // GuideLLM's report becomes an imported run.
    const d = (p50: number, p95: number) => ({ successful: { median: p50, mean: p50, percentiles: { p50, p95 } } });
    const report = {
      benchmarks: [
        { args: { strategy: { type_: 'concurrent', streams: 4 } }, duration: 10, request_totals: { successful: 12, errored: 1 },
          metrics: { time_to_first_token_ms: d(192, 337), request_latency: d(4.24, 4.429), inter_token_latency_ms: d(57, 60), output_tokens_per_second: d(71.5, 71.5), requests_per_second: d(1.2, 1.2) } },
      ],
    };
    await page.getByTestId('bench-import-guidellm').setInputFiles({ name: 'guidellm-report.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(report)) });
    await expect.poll(() => page.getByTestId('bench-notice').textContent()).toContain('imported guidellm-report.json: 1 level');
    await expect.poll(() => page.getByTestId('bench-runs').textContent()).toContain('guidellm-report');

    // The earlier runs went through the proxy: the last hour of its traffic has figures.
    await page.getByTestId('bench-window-select').selectOption({ label: 'last 1 h' });
    await page.getByTestId('bench-window-evaluate').click();
    await page.getByTestId('bench-window-eval').waitFor({ timeout: 10_000 });
    expect(await page.getByTestId('bench-window-source').textContent()).toContain('proxy traffic, last 1 h');
    const figures = await page.getByTestId('bench-window-eval').textContent();
    expect(figures).toContain('P95 end-to-end');
    expect(figures).toMatch(/\d+\.\d{3} s/);
    mkdirSync('/tmp/shots', { recursive: true });
    await page.getByTestId('bench-scenarios').scrollIntoViewIfNeeded();
    await page.screenshot({ path: '/tmp/shots/bench-scenarios.png', fullPage: false });
  }, 90_000);
});
