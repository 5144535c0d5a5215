import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProxyStatsSchema, type ProxyStats } from '../../src-preload/contract/index.js';
import { upstreamFigures as upstream } from '../helpers/proxy-figures.js';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import { bridgeCall, runCliProcess, type RunningConsole } from '../helpers/console-process.js';
import { ROOT } from '../helpers/imports.js';

// The Proxy view's Models section in headless Chromium: live on the demo fleet
// (one replica per model; a chat shows up as routed), then with constructed
// figures — a two-replica model with weights and a failing replica, and a
// group alias — answered in place of the bridge's first proxy.snapshot.


function replicaStats(at: number): ProxyStats {
  return ProxyStatsSchema.parse({
    at,
    url: 'http://127.0.0.1:18001/v1',
    answered: 40,
    inFlight: 5,
    queued: 1,
    upstreams: [
      upstream('gpu-a/qwen', 'qwen', { aliases: ['default'], weight: 3, inFlight: 4, queued: 1, routed: 30 }),
      upstream('gpu-b/qwen', 'qwen', { weight: 1, inFlight: 1, slots: 4, routed: 10, failing: true }),
      upstream('gpu-b/gemma', 'gemma', { state: 'sleeping' }),
    ],
    models: [
      { name: 'qwen', kind: 'model', chain: ['qwen'], replicas: ['gpu-a/qwen', 'gpu-b/qwen'], aliases: ['default'] },
      { name: 'gemma', kind: 'model', chain: ['gemma'], replicas: ['gpu-b/gemma'], aliases: [] },
      { name: 'chat', kind: 'group', chain: ['qwen', 'gemma'], replicas: ['gpu-a/qwen', 'gpu-b/qwen', 'gpu-b/gemma'], aliases: [] },
    ],
    failovers: 2,
  });
}

describe('the Proxy view: models, replicas and where requests went', () => {
  let ui: ConsoleInBrowser;
  let consoleProc: RunningConsole;
  let proxyUrl: string;
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-proxy-models-'));

  beforeAll(async () => {
    ui = await startConsoleInBrowser(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir, '--ui-port', '0', '--proxy-port', '0'], { load: false });
    consoleProc = ui.console;
    const m = consoleProc.output().match(/^GPU Console ready ui=\S+ proxy=(\S+)$/m);
    if (!m) throw new Error(`no proxy= in the ready line:\n${consoleProc.output()}`);
    proxyUrl = m[1]!;
  }, 60_000);

  afterAll(async () => {
    expect(await ui?.stop()).toBe(0);
  });

  const newPage = (): Promise<Page> => ui.newPage();

  it('lists every demo model with its one replica, and a chat through the proxy shows as routed to it', async () => {
    const created = await runCliProcess(['tokens', 'create', 'models-e2e', '--max-class', 'interactive', '--data-dir', dataDir]);
    expect(created.code).toBe(0);
    const client = new OpenAI({ baseURL: proxyUrl, apiKey: created.stdout.trim(), maxRetries: 5 });
    // Until the tunnels are up the proxy answers 503 with Retry-After, which the client honours.
    await client.chat.completions.create({ model: 'qwen', messages: [{ role: 'user', content: 'Hello.' }], max_tokens: 4 });

    const snap = await bridgeCall<ProxyStats>(consoleProc.ui, 'proxy.snapshot', {});
    if (!snap.ok) throw new Error(snap.error.message);
    const models = snap.data.models ?? [];
    expect(models.length).toBeGreaterThan(0);
    const qwen = snap.data.upstreams.find((u) => u.aliases.includes('qwen'))!;

    const page = await newPage();
    await page.goto(consoleProc.ui);
    await page.getByTestId('nav-proxy').click();
    const panel = page.getByTestId('models-panel');
    await panel.waitFor();
    expect(await panel.locator('tbody').count()).toBe(models.length);
    for (const m of models) {
      const row = panel.locator(`[data-testid="model-row-${m.name}"]`);
      expect(await row.getAttribute('data-kind')).toBe(m.kind);
      // A group (the demo's `chat`) shows its fallback chain, not replica lines of its own.
      expect(await row.locator('tr[data-testid^="replica-"]').count()).toBe(m.kind === 'group' ? 0 : m.replicas.length);
    }
    expect(models.find((m) => m.kind === 'group')).toMatchObject({ name: 'chat', chain: ['Qwen3.6-27B-FP8', 'Gemma-3-27B-it'] });
    const replica = panel.locator(`[data-testid="model-row-${qwen.model}"] [data-testid="replica-${qwen.upstream}"]`);
    await expect.poll(() => replica.getByTestId('replica-routed').getAttribute('data-value'), { timeout: 10_000 }).toBe('1');
    expect(await replica.getByTestId('replica-routed-share').getAttribute('data-value')).toBe('100');
    expect(await replica.getByTestId('replica-state').getAttribute('data-value')).toBe('ready');
    expect(await replica.textContent()).toContain(`${qwen.label}/${qwen.serviceId}`);
    // The demo has no unequal weights: no weight column.
    expect(await panel.getByTestId('replica-weight-share').count()).toBe(0);
    expect(await panel.getByTestId('models-failovers').getAttribute('data-value')).toBe('0');
    // The pool table still renders beside it.
    expect(await page.getByTestId(`pool-${qwen.upstream}`).count()).toBe(1);
    await page.screenshot({ path: join(ROOT, 'test-results', 'e2e-proxy-models-demo.png') });
    await page.close();
  });

  it('shows a two-replica model (weight and routed shares, a failing replica) and a group with its fallback chain', async () => {
    const page = await newPage();
    // Newer than any live figure, so the live proxy.stats events that follow are dropped as older.
    const constructed = replicaStats(Date.now() + 365 * 24 * 3600_000);
    await page.route('**/api/proxy.snapshot', async (route) => {
      const res = await route.fetch();
      const body = (await res.json()) as Record<string, unknown>;
      await route.fulfill({ response: res, json: { ...body, data: constructed } });
    });
    await page.goto(consoleProc.ui);
    await page.getByTestId('nav-proxy').click();
    const panel = page.getByTestId('models-panel');
    await panel.locator('[data-testid="model-row-chat"]').waitFor();

    expect(await panel.getByTestId('models-failovers').getAttribute('data-value')).toBe('2');
    const qwen = panel.locator('[data-testid="model-row-qwen"]');
    expect(await qwen.getByTestId('model-kind').getAttribute('data-value')).toBe('model');
    expect(await qwen.getByTestId('model-summary').textContent()).toBe('2 replicas · 40 routed');
    expect(await qwen.locator('.alias').allTextContents()).toEqual(['default']);

    const a = qwen.getByTestId('replica-gpu-a/qwen');
    const b = qwen.getByTestId('replica-gpu-b/qwen');
    expect(await a.getByTestId('replica-weight-share').textContent()).toBe('75%');
    expect(await b.getByTestId('replica-weight-share').textContent()).toBe('25%');
    expect(await a.getByTestId('replica-inflight').textContent()).toBe('4 / 8');
    expect(await b.getByTestId('replica-inflight').textContent()).toBe('1 / 4');
    expect(await a.getByTestId('replica-queued').textContent()).toBe('1');
    expect(await a.getByTestId('replica-routed').textContent()).toBe('30');
    expect(await b.getByTestId('replica-routed').textContent()).toBe('10');
    expect(await a.getByTestId('replica-routed-share').textContent()).toBe('75%');
    expect(await b.getByTestId('replica-routed-share').textContent()).toBe('25%');
    expect(await a.getByTestId('replica-failing').count()).toBe(0);
    expect(await b.getByTestId('replica-failing').textContent()).toBe('failing');
    expect(await b.getByTestId('replica-state').getAttribute('data-value')).toBe('ready');
    expect(await b.textContent()).toContain('gpu-b/qwen');

    // One replica, weights equal: no share to show; nothing routed yet: share unknown, not 0%.
    const gemma = panel.locator('[data-testid="model-row-gemma"] [data-testid="replica-gpu-b/gemma"]');
    expect(await gemma.getByTestId('replica-state').getAttribute('data-value')).toBe('sleeping');
    expect(await gemma.getByTestId('replica-weight-share').textContent()).toBe('');
    expect(await gemma.getByTestId('replica-routed-share').textContent()).toBe('—');

    const chat = panel.locator('[data-testid="model-row-chat"]');
    expect(await chat.getByTestId('model-kind').getAttribute('data-value')).toBe('group');
    expect(await chat.getByTestId('group-chain').getAttribute('data-value')).toBe('qwen → gemma');
    expect(await chat.getByTestId('chain-step-usable').allTextContents()).toEqual(['1/2 ready', '0/1 ready']);
    expect(await chat.locator('tr[data-testid^="replica-"]').count()).toBe(0);

    // Nothing spills out of the table at 1440×900.
    const overflow = await panel.locator('table').evaluate((t) => t.scrollWidth - t.clientWidth);
    expect(overflow).toBe(0);
    // The pool table renders the same figures.
    expect(await page.getByTestId('pool-gpu-b/qwen-batch').count()).toBe(1);
    await page.screenshot({ path: join(ROOT, 'test-results', 'e2e-proxy-models-replicas.png') });
    await page.close();
  });
});
