import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BenchRun } from '../../src-preload/contract/index.js';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import { bridgeCall, type RunningConsole } from '../helpers/console-process.js';

// The built console: a run whose stored row no longer reads (#26.5) shows in
// the Benchmarks view as "damaged run <id>: <what failed>" with a Delete
// button, beside the runs that do read; and a run on the demo's AMD APU
// (strix) shows its GTT peak beside the VRAM carve-out (#27.6).

describe('damaged runs and AMD peaks in the Benchmarks view', () => {
  let ui: ConsoleInBrowser;
  let consoleProc: RunningConsole;
  let page: Page;
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-bench-damaged-'));
  const call = async <T,>(channel: string, input: unknown): Promise<T> => {
    const out = await bridgeCall<T>(consoleProc.ui, channel, input);
    if (!out.ok) throw new Error(`${channel}: ${out.error.code} ${out.error.message}`);
    return out.data;
  };

  beforeAll(async () => {
    ui = await startConsoleInBrowser(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir, '--ui-port', '0', '--proxy-port', '0'], { load: false });
    consoleProc = ui.console;
    page = ui.page;
  }, 60_000);

  afterAll(async () => {
    expect(await ui?.stop()).toBe(0);
  });

  async function strixRun(): Promise<BenchRun> {
    const scenario = {
      name: 'strix coder',
      target: { kind: 'tunnel', host: 'strix', serviceId: 'coder' },
      prompts: { kind: 'synthetic', inputTokens: 16 },
      maxTokens: 32,
      levels: [1, 2],
      perLevel: { kind: 'requests', count: 2 },
    };
    // Until the demo tunnels are up the run is refused before it starts; try again then.
    for (let i = 0; ; i++) {
      const out = await bridgeCall<{ runId: string }>(consoleProc.ui, 'bench.start', { scenario });
      if (out.ok) {
        for (let j = 0; j < 120; j++) {
          const { run } = await call<{ run: BenchRun }>('bench.getRun', { runId: out.data.runId });
          if (run.state !== 'running') return run;
          await new Promise((r) => setTimeout(r, 250));
        }
        throw new Error('the strix run did not finish');
      }
      if (i >= 40) throw new Error(`the strix run never started: ${out.error.code} ${out.error.message}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  it('lists the damaged run with what failed and a Delete button; the strix run shows VRAM and GTT peaks', async () => {
    const strix = await strixRun();
    expect(strix.state).toBe('completed');
    expect(strix.peaks.samples).toBeGreaterThan(0);
    // The carve-out is 512 MiB; the model (about 17 GiB) and its KV cache are in GTT.
    expect(strix.peaks.vramMiB).toBeLessThan(512);
    expect(strix.peaks.gttMiB).toBeGreaterThan(10_000);

    const dist = (v: number) => ({ successful: { median: v, mean: v, percentiles: { p50: v, p95: v } } });
    const text = JSON.stringify({
      benchmarks: [{ args: { strategy: { type_: 'concurrent', streams: 2 } }, duration: 10, request_totals: { successful: 4 }, metrics: { output_tokens_per_second: dist(40) } }],
    });
    const { runId } = await call<{ runId: string }>('bench.importGuidellm', { text, name: 'imported before the fix' });
    // What the old import stored for a mean of 1e308 (Infinity, written by JSON as null), planted beside the console.
    const db = new Database(join(dataDir, 'gpu-console.db'));
    try {
      const row = db.prepare('SELECT levels FROM bench_runs WHERE id = ?').get(runId) as { levels: string };
      const levels = JSON.parse(row.levels) as Array<Record<string, unknown>>;
      levels[0]!.wallMs = null;
      db.prepare('UPDATE bench_runs SET levels = ? WHERE id = ?').run(JSON.stringify(levels), runId);
    } finally {
      db.close();
    }

    await page.goto(consoleProc.ui);
    await page.getByTestId('nav-bench').click();
    const damaged = page.getByTestId('bench-damaged-row');
    await damaged.waitFor({ timeout: 10_000 });
    expect(await damaged.textContent()).toContain(`damaged run ${runId}: levels.0.wallMs`);
    await page.getByRole('radio', { name: 'show strix coder' }).check();
    const peaks = page.getByTestId('bench-peaks');
    await expect.poll(() => peaks.textContent()).toMatch(/VRAM \d+ MiB · GTT \d{5,} MiB/);
    mkdirSync('/tmp/shots', { recursive: true });
    await page.screenshot({ path: '/tmp/shots/bench-damaged.png', fullPage: false });

    await page.getByTestId('bench-damaged-delete').click();
    await damaged.waitFor({ state: 'detached', timeout: 10_000 });
    expect(await page.getByTestId('bench-notice').textContent()).toContain(`run ${runId} deleted`);
    expect((await call<{ damaged: unknown[] }>('bench.listRuns', {})).damaged).toEqual([]);
  }, 120_000);
});
