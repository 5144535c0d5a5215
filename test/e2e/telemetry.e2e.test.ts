import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeriesResult } from '../../src-preload/contract/index.js';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import type { RunningConsole } from '../helpers/console-process.js';
import { TTFT_BUCKETS } from '../../src-main/demo/engine-metrics.js';

// Load driven into a demo host through its tunnel (bypassing the proxy, like
// the demo's background traffic): the Hosts view's charts and the cost figures
// move, the fleet card shows TTFT p95 and cost per 1M tokens, and the series
// survive a restart of the console on the same data dir.

const HOST = 'l20-poc';
const MODEL = 'Qwen3.6-27B-FP8';

async function api<T>(ui: string, channel: string, body: unknown): Promise<T> {
  const url = new URL(ui);
  const token = new URLSearchParams(url.hash.slice(1)).get('token') ?? '';
  const res = await request(`${url.origin}/api/${channel}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gpu-console-token': token },
    body: JSON.stringify(body),
  });
  const json = (await res.body.json()) as { ok: boolean; data?: T; error?: unknown };
  if (!json.ok) throw new Error(`${channel}: ${JSON.stringify(json.error)}`);
  return json.data as T;
}

const column = (r: SeriesResult, metric: string): (number | null)[] => r.series.find((s) => s.metric === metric)?.avg ?? [];
const known = (xs: readonly (number | null)[]): number[] => xs.filter((x): x is number => x !== null);

describe('telemetry end to end: load → charts and cost move → history survives a restart', () => {
  let ui: ConsoleInBrowser;
  let consoleProc: RunningConsole;
  let page: Page;
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-tel-'));
  const args = ['--demo', '--demo-traffic', 'off', '--data-dir', dataDir, '--ui-port', '0', '--proxy-port', '0'];
  let loadStop = false;
  let load: Promise<void> = Promise.resolve();
  let loadStartedAt = 0;

  beforeAll(async () => {
    ui = await startConsoleInBrowser(args, { load: false });
    consoleProc = ui.console;
    page = ui.page;
  }, 60_000);

  afterAll(async () => {
    loadStop = true;
    await load;
    await ui?.stop();
  });

  it('drives chat load into the demo host through its tunnel; the fleet card shows TTFT p95 and an estimated cost', async () => {
    await page.goto(consoleProc.ui);
    const row = page.getByTestId(`service-${HOST}-qwen`);
    const urlCell = row.getByTestId('tunnel-url');
    await expect.poll(async () => urlCell.getAttribute('data-value'), { timeout: 20_000 }).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);
    const tunnel = (await urlCell.getAttribute('data-value'))!.replace(/\/+$/, '');
    // before any load: cost per 1M tokens is unavailable, never 0
    expect(await row.getByTestId('cost-per-mtok').textContent()).toBe('unavailable');

    loadStartedAt = Date.now();
    const client = async () => {
      while (!loadStop) {
        const res = await request(`${tunnel}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say something about GPUs.' }], max_tokens: 24 }),
        }).catch(() => null);
        await res?.body.text().catch(() => '');
      }
    };
    load = Promise.all([client(), client(), client()]).then(() => undefined);

    await expect.poll(async () => Number((await row.getByTestId('ttft-p95').getAttribute('data-value')) || 0), { timeout: 20_000 }).toBeGreaterThan(0);
    // A percentile from histogram buckets reads as the bucket's bound ("≤ …"), one of the server's own bounds, with the estimate in the tooltip.
    const ttft = row.getByTestId('ttft-p95');
    expect(await ttft.textContent()).toMatch(/^≤ \d+(\.\d+)? (ms|s)$/);
    expect(TTFT_BUCKETS).toContain(Number(await ttft.getAttribute('data-value')));
    expect(Number(await ttft.getAttribute('data-interpolated'))).toBeLessThanOrEqual(Number(await ttft.getAttribute('data-value')));
    expect(await ttft.getAttribute('title')).toContain("from the server's histogram buckets — at most");
    await expect.poll(async () => Number((await row.getByTestId('cost-per-mtok').getAttribute('data-value')) || 0), { timeout: 10_000 }).toBeGreaterThan(0);
    expect(await row.getByTestId('cost-per-mtok').textContent()).toMatch(/^\$\d+(\.\d+)? est\.$/);
  }, 45_000);

  it('the Hosts view: latency, throughput and cost charts fill and the cost estimates move', async () => {
    await page.getByTestId('nav-host').click();
    await expect.poll(() => page.getByTestId('host-picker').inputValue(), { timeout: 10_000 }).toBeTruthy();
    await page.getByTestId('host-picker').selectOption(HOST);
    await page.getByTestId('range-15m').click();
    const points = (id: string) => page.getByTestId(`host-chart-${id}`).getAttribute('data-points').then((v) => Number(v || 0));
    const lastMax = (id: string) => page.getByTestId(`host-chart-${id}`).getAttribute('data-last-max').then((v) => Number(v || 0));
    await expect.poll(() => lastMax('latency'), { timeout: 20_000 }).toBeGreaterThan(0);
    await expect.poll(() => lastMax('tok'), { timeout: 10_000 }).toBeGreaterThan(0);
    await expect.poll(() => lastMax('cost'), { timeout: 10_000 }).toBeGreaterThan(0);
    const before = await points('latency');
    await expect.poll(() => points('latency'), { timeout: 10_000 }).toBeGreaterThan(before);

    const usage = page.getByTestId('cost-per-mtok-usage');
    await expect.poll(async () => Number((await usage.getAttribute('data-value')) || 0), { timeout: 15_000 }).toBeGreaterThan(0);
    const first = await usage.getAttribute('data-value');
    expect(await usage.textContent()).toContain('est.');
    expect(await page.getByTestId('cost-per-mtok-reserved').textContent()).toContain('est.');
    // the estimate moves as tokens accumulate (refreshed every few seconds)
    await expect.poll(() => usage.getAttribute('data-value'), { timeout: 15_000 }).not.toBe(first);

    // the same numbers through the channel the charts use
    const r = await api<SeriesResult>(consoleProc.ui, 'telemetry.series', { host: HOST, range: '15m', metrics: ['svc.qwen.*', 'host.*'] });
    expect(Math.max(...known(column(r, 'svc.qwen.ttft_p95_s')))).toBeGreaterThan(0);
    expect(Math.max(...known(column(r, 'svc.qwen.e2e_p95_s')))).toBeGreaterThan(0);
    expect(Math.max(...known(column(r, 'svc.qwen.kv_tokens')))).toBeGreaterThan(0);
    expect(known(column(r, 'svc.qwen.kv_capacity_tokens'))).toContain(145_008);
    expect(Math.max(...known(column(r, 'host.cost_usage_usd_per_mtok')))).toBeGreaterThan(0);
  }, 60_000);

  it('history survives a restart on the same data dir', async () => {
    const loadedOf = (r: SeriesResult) => r.t.filter((t, i) => t >= loadStartedAt - 10_000 && (column(r, 'svc.qwen.gen_tok_s')[i] ?? 0) > 0);
    const series = () => api<SeriesResult>(consoleProc.ui, 'telemetry.series', { host: HOST, range: '1h', metrics: ['svc.qwen.gen_tok_s'] });
    // Two loaded 10 s rows at least before the load stops, so one is closed (the open one may or may not be flushed at
    // shutdown): on a fast run under load (CI at 1232a8f) the loaded window was one open bucket and none came back.
    await expect.poll(async () => loadedOf(await series()).length, { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
    loadStop = true;
    await load;
    const before = await series();
    const loaded = loadedOf(before);
    expect(loaded.length).toBeGreaterThan(1);
    expect(await ui.stop()).toBe(0);

    ui = await startConsoleInBrowser(args, { load: false });
    consoleProc = ui.console;
    const after = await api<SeriesResult>(consoleProc.ui, 'telemetry.series', { host: HOST, range: '1h', metrics: ['svc.qwen.gen_tok_s'], endMs: Date.now() });
    const kept = after.t.filter((t, i) => loaded.includes(t) && (column(after, 'svc.qwen.gen_tok_s')[i] ?? 0) > 0);
    // the 10 s rows of the loaded window came back from disk (the last, still open bucket may be flushed at shutdown or not)
    expect(kept.length).toBeGreaterThanOrEqual(Math.max(1, loaded.length - 1));
    expect(after.tiers).toContain('10s');
  }, 60_000);
});
