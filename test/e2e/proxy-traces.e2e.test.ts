import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import { runCliProcess } from '../helpers/console-process.js';
import { ROOT } from '../helpers/imports.js';

// Issue #32's trace line, on the built console: a client's X-Request-Id goes through the proxy
// (→ SSH tunnel → demo vLLM, which names its answer by it), comes back, and the Proxy view shows
// it in the request's row and finds that row when searched for.

describe('traces in the Proxy view', () => {
  let ui: ConsoleInBrowser;
  let proxyUrl: string;
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-traces-'));

  beforeAll(async () => {
    ui = await startConsoleInBrowser(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir, '--ui-port', '0', '--proxy-port', '0'], { load: false });
    const m = ui.console.output().match(/^GPU Console ready ui=\S+ proxy=(\S+)$/m);
    if (!m) throw new Error(`no proxy= in the ready line:\n${ui.console.output()}`);
    proxyUrl = m[1]!;
  }, 60_000);

  afterAll(async () => {
    expect(await ui?.stop()).toBe(0);
  });

  it("a client's X-Request-Id reaches the server, comes back, and is shown and found in the Proxy view", async () => {
    const token = (await runCliProcess(['tokens', 'create', 'traced-app', '--data-dir', dataDir])).stdout.trim();
    const trace = `checkout-${Date.now()}`;
    const client = new OpenAI({ baseURL: proxyUrl, apiKey: token, maxRetries: 5, defaultHeaders: { 'X-Request-Id': trace } });
    const { data, response } = await client.chat.completions
      .create({ model: 'gemma', messages: [{ role: 'user', content: 'Hello.' }], max_tokens: 4 })
      .withResponse();
    expect(data.id).toBe(`chatcmpl-${trace}`);
    expect(response.headers.get('x-request-id')).toBe(trace);
    const ours = response.headers.get('x-gpu-console-request-id')!;
    // Another request, so the search has something to leave out.
    await client.chat.completions.create({ model: 'gemma', messages: [{ role: 'user', content: 'Again.' }], max_tokens: 2 }, { headers: { 'X-Request-Id': 'other-trace' } });

    const { page } = ui;
    await page.goto(ui.console.ui);
    await page.getByTestId('nav-proxy').click();
    const row = page.locator(`[data-testid="request-row"][data-request-id="${ours}"]`);
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(1);
    expect(await row.getAttribute('data-trace-id')).toBe(trace);
    expect(await row.getByTestId('request-trace').textContent()).toBe(trace);

    await page.getByTestId('filter-trace').fill(trace);
    await page.getByTestId('filter-trace').press('Enter');
    await expect.poll(() => page.getByTestId('request-row').count(), { timeout: 10_000 }).toBe(1);
    expect(await page.getByTestId('request-row').first().getAttribute('data-request-id')).toBe(ours);
    await page.screenshot({ path: join(ROOT, 'test-results', 'e2e-proxy-trace.png'), fullPage: true });
  });
});
