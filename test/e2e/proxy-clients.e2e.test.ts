import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeViolations, seriousViolations } from '../helpers/axe.js';
import { setTheme, startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import { runCliProcess } from '../helpers/console-process.js';

// The Clients panel (issue #32, "Done when": the Clients panel shows per-token
// usage): the built console on the demo fleet, one token made in the Proxy
// view with limits and one with the CLI, real chats through the proxy (→ SSH
// tunnel → demo servers) and a refused one, then each token's requests,
// tokens, cost and refusal reason in the panel; the limits form saves a change
// and shows a core refusal with its code, keeping what was typed; the window
// persists; axe is clean on both panels in both themes.

const SHOTS = process.env.CLIENTS_SHOTS_DIR ?? '/tmp/shots';

describe('the Clients panel', () => {
  let ui: ConsoleInBrowser;
  let page: Page;
  let proxyUrl: string;
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-clients-'));

  beforeAll(async () => {
    ui = await startConsoleInBrowser(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir, '--ui-port', '0', '--proxy-port', '0'], { readyTestId: 'nav-proxy', bypassCSP: true });
    page = ui.page;
    const m = ui.console.output().match(/^GPU Console ready ui=\S+ proxy=(\S+)$/m);
    if (!m) throw new Error(`no proxy= in the ready line:\n${ui.console.output()}`);
    proxyUrl = m[1]!;
    mkdirSync(SHOTS, { recursive: true });
  }, 90_000);

  afterAll(async () => {
    const code = await ui?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    expect(code).toBe(0);
  });

  const row = (client: string) => page.getByTestId(`client-row-${client}`);

  it('shows each token\'s requests, tokens, cost and refusals from real traffic through the proxy', async () => {
    await page.getByTestId('nav-proxy').click();
    // alpha: made in the Proxy view, allowed only qwen, 100 requests a minute.
    await page.getByTestId('token-name').fill('alpha');
    await page.getByTestId('token-limits-toggle').click();
    await page.getByTestId('new-limits-model-qwen').check();
    await page.getByTestId('new-limits-rpm').fill('100');
    await page.getByTestId('token-create').click();
    const alpha = (await page.getByTestId('token-value').textContent())!.trim();
    expect(alpha).toMatch(/^gcp_/);
    await expect.poll(() => page.getByTestId('token-limits-alpha').textContent(), { timeout: 10_000 }).toContain('100 req/min');
    // beta: from the CLI.
    const created = await runCliProcess(['tokens', 'create', 'beta', '--data-dir', dataDir]);
    expect(created.code).toBe(0);
    const beta = created.stdout.trim();

    // The tunnels come up shortly after start; until then 503 tunnel_down with Retry-After, which the client honours.
    const chat = (apiKey: string, model: string) =>
      new OpenAI({ baseURL: proxyUrl, apiKey, maxRetries: 6 }).chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 8 });
    for (let i = 0; i < 3; i++) await chat(alpha, 'qwen');
    await chat(beta, 'gemma');
    await expect(chat(beta, 'no-such-model')).rejects.toMatchObject({ status: 404, code: 'model_not_found' });

    await expect.poll(() => row('alpha').getAttribute('data-requests'), { timeout: 30_000, interval: 500 }).toBe('3');
    await expect.poll(() => row('beta').getAttribute('data-requests'), { timeout: 30_000, interval: 500 }).toBe('2');
    const tokens = await row('alpha').getByTestId('client-tokens').textContent();
    expect(tokens).toMatch(/^[\d,]+ \/ [\d,]+$/);
    expect(await row('alpha').getByTestId('client-cost').textContent()).toMatch(/^\$\d+\.\d+ est\.$/);
    expect(await row('alpha').getByTestId('client-limits').textContent()).toContain('models qwen · 100 req/min');
    expect(await row('beta').locator('[data-code="model_not_found"]').textContent()).toBe('1 unknown model');
    expect(await row('alpha').getByTestId('client-refused').textContent()).toBe('0');
    await page.getByTestId('clients-panel').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'proxy-clients.png') });
  }, 120_000);

  it('sorts by a column and keeps the window across a reload', async () => {
    await page.getByTestId('clients-sort-requests').click(); // already the sort: now ascending
    const order = () => page.locator('[data-testid^="client-row-"]').evaluateAll((els) => els.map((e) => (e.getAttribute('data-testid') ?? '').slice('client-row-'.length)));
    expect(await order()).toEqual(['beta', 'alpha']);
    expect(await page.locator('th[aria-sort="ascending"]').textContent()).toContain('Requests');
    await page.getByTestId('clients-window').selectOption('1h');
    await page.reload();
    await page.getByTestId('nav-proxy').click();
    await expect.poll(() => page.getByTestId('clients-window').inputValue(), { timeout: 10_000 }).toBe('1h');
    expect(await order()).toEqual(['beta', 'alpha']);
    // A long window is read when chosen or refreshed, and says so.
    await page.getByTestId('clients-window').selectOption('30d');
    await expect.poll(() => page.getByTestId('clients-note').textContent(), { timeout: 10_000 }).toContain('read when chosen or refreshed');
    await page.getByTestId('clients-refresh').click();
    expect(await row('alpha').getAttribute('data-requests')).toBe('3');
    await page.getByTestId('clients-window').selectOption('24h');
  });

  it('changes a token\'s limits; a refusal shows its code and keeps what was typed', async () => {
    await page.getByTestId('token-edit-beta').click();
    await page.getByTestId('edit-limits-rpm').fill('0');
    await page.getByTestId('token-limits-save').click();
    expect(await page.getByTestId('token-error').textContent()).toContain('requests/min must be at least 1');
    await page.getByTestId('edit-limits-rpm').fill('10');
    await page.getByTestId('edit-limits-expires').fill('2020-01-31');
    await page.getByTestId('token-limits-save').click();
    await expect.poll(() => page.getByTestId('token-error').textContent(), { timeout: 10_000 }).toContain('PROXY_TOKEN_EXPIRY_PAST');
    expect(await page.getByTestId('edit-limits-rpm').inputValue()).toBe('10');
    expect(await page.getByTestId('edit-limits-expires').inputValue()).toBe('2020-01-31');
    await page.getByTestId('edit-limits-expires').fill('');
    await page.getByTestId('token-limits-save').click();
    await expect.poll(() => page.getByTestId('token-limits-beta').textContent(), { timeout: 10_000 }).toBe('10 req/min');
    await page.getByTestId('clients-refresh').click();
    await expect.poll(() => row('beta').getByTestId('client-limits').textContent(), { timeout: 10_000 }).toContain('10 req/min');
    const audit = await runCliProcess(['audit', 'list', '--limit', '10', '--data-dir', dataDir]);
    expect(audit.stdout).toContain('proxy.token.changed');
  }, 60_000);

  it('is axe-clean in both themes', async () => {
    await page.getByTestId('token-edit-alpha').click();
    const problems: string[] = [];
    for (const theme of ['light', 'dark'] as const) {
      await setTheme(page, theme);
      for (const panel of ['clients-panel', 'tokens-panel']) problems.push(...describeViolations(`${panel} ${theme}`, await seriousViolations(page, `[data-testid="${panel}"]`)));
      await page.getByTestId('clients-panel').scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SHOTS, `proxy-clients-${theme}.png`) });
    }
    expect(problems).toEqual([]);
  }, 60_000);
});
