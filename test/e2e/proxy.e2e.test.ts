import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import { runCliProcess, type RunningConsole } from '../helpers/console-process.js';
import { ROOT } from '../helpers/imports.js';

// The built console end to end: a token from the CLI, a chat through the proxy
// with the official client (→ SSH tunnel → demo vLLM), and the request in the
// Proxy view in headless Chromium.

describe('the proxy through the built console', () => {
  let ui: ConsoleInBrowser;
  let consoleProc: RunningConsole;
  let page: Page;
  let proxyUrl: string;
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-proxy-'));

  beforeAll(async () => {
    ui = await startConsoleInBrowser(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir, '--ui-port', '0', '--proxy-port', '0'], { load: false });
    consoleProc = ui.console;
    page = ui.page;
    const m = consoleProc.output().match(/^GPU Console ready ui=\S+ proxy=(\S+)$/m);
    if (!m) throw new Error(`no proxy= in the ready line:\n${consoleProc.output()}`);
    proxyUrl = m[1]!;
  }, 60_000);

  afterAll(async () => {
    expect(await ui?.stop()).toBe(0);
  });

  it('creates a token with the CLI (alone on stdout), serves a chat with it, and shows the request in the Proxy view', async () => {
    expect(proxyUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const created = await runCliProcess(['tokens', 'create', 'e2e-app', '--max-class', 'interactive', '--data-dir', dataDir]);
    expect(created.code).toBe(0);
    const token = created.stdout.trim();
    expect(created.stdout).toBe(`${token}\n`);
    expect(token).toMatch(/^gcp_[A-Za-z0-9_-]{43}$/);

    const listed = await runCliProcess(['tokens', 'list', '--data-dir', dataDir]);
    expect(listed.stdout).toContain('e2e-app');
    expect(listed.stdout).not.toContain(token);

    const client = new OpenAI({ baseURL: proxyUrl, apiKey: token, maxRetries: 5 });
    // The tunnels come up shortly after start; until then the proxy says 503 tunnel_down with Retry-After, which the client honours.
    const { data, response } = await client.chat.completions
      .create({ model: 'qwen', messages: [{ role: 'user', content: 'Hello from the e2e test.' }], max_tokens: 8 })
      .withResponse();
    expect(data.choices[0]!.message.content!.length).toBeGreaterThan(0);
    const requestId = response.headers.get('x-request-id')!;

    await page.goto(consoleProc.ui);
    await page.getByTestId('nav-proxy').click();
    await expect.poll(() => page.getByTestId('proxy-endpoint').getAttribute('data-value'), { timeout: 10_000 }).toBe(proxyUrl);
    const row = page.locator(`[data-testid="request-row"][data-request-id="${requestId}"]`);
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(1);
    expect(await row.textContent()).toContain('e2e-app');
    expect(await row.textContent()).toContain('Qwen3.6-27B-FP8');
    await expect.poll(() => page.getByTestId('token-e2e-app').count(), { timeout: 5_000 }).toBe(1);
    await page.screenshot({ path: join(ROOT, 'test-results', 'e2e-proxy-view.png'), fullPage: true });

    // Revoking from the CLI takes effect on the next request.
    expect((await runCliProcess(['tokens', 'revoke', 'e2e-app', '--data-dir', dataDir])).code).toBe(0);
    await expect(client.models.list()).rejects.toMatchObject({ status: 401, code: 'token_revoked' });
  });

  it('edits caps from the Proxy view with a confirmation step', async () => {
    await page.getByTestId('edit-caps-l20-poc/qwen').click();
    await page.getByTestId('caps-batch').fill('2');
    await page.getByTestId('caps-review').click();
    expect(await page.getByTestId('caps-confirm-text').textContent()).toContain('3 → 2');
    await page.getByTestId('caps-apply').click();
    await expect.poll(() => page.getByTestId('caps-dialog').count(), { timeout: 5_000 }).toBe(0);
    const cell = page.getByTestId('pool-l20-poc/qwen-batch');
    await expect.poll(async () => (await cell.textContent()) ?? '', { timeout: 5_000 }).toContain('/ 2');
    const audit = await runCliProcess(['audit', 'list', '--limit', '10', '--data-dir', dataDir]);
    expect(audit.stdout).toContain('proxy.caps.changed');
  });
});
