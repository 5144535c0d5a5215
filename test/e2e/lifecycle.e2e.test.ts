import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import { runCliProcess, type RunningConsole } from '../helpers/console-process.js';

// Through the built console: propose a sleep in the Actions view, approve it
// in the dialog, see it verified, and find every step in the audit log.

describe('lifecycle actions through the built console', () => {
  let ui: ConsoleInBrowser;
  let consoleProc: RunningConsole;
  let page: Page;
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-lc-'));
  const shots = process.env.LIFECYCLE_SHOTS_DIR ?? null;

  beforeAll(async () => {
    ui = await startConsoleInBrowser(['--demo', '--demo-traffic', 'off', '--demo-time-scale', '200', '--data-dir', dataDir, '--ui-port', '0', '--proxy-port', '0'], { load: false });
    consoleProc = ui.console;
    page = ui.page;
    if (shots) mkdirSync(shots, { recursive: true });
  }, 60_000);

  afterAll(async () => {
    expect(await ui?.stop()).toBe(0);
  });

  it('proposes a sleep, approves it in the dialog, sees it verified, with the audit rows present', async () => {
    await page.goto(consoleProc.ui);
    await page.getByTestId('nav-actions').click();
    // The fleet must have seen the model awake before a sleep can be verified.
    const row = page.getByTestId('target-l20-poc/qwen');
    await expect.poll(async () => (await row.textContent()) ?? '', { timeout: 20_000 }).toContain('awake · health ok');
    // Only transitions the state allows are offered: no Wake on an awake vLLM service.
    const wake = page.getByTestId('propose-wake-l20-poc/qwen');
    expect(await wake.isDisabled()).toBe(true);
    expect(await wake.getAttribute('title')).toBe('the service is awake; nothing to wake');
    expect(await page.getByTestId('propose-sleep-l20-poc/qwen').isDisabled()).toBe(false);

    // Restart: the destructive path needs the label typed; the approve button stays disabled until then.
    await page.getByTestId('propose-restart-tri-gpu/gemma').click();
    await expect.poll(() => page.getByTestId('action-dialog').count(), { timeout: 5_000 }).toBe(1);
    expect(await page.getByTestId('action-step-ssh').textContent()).toBe('sudo systemctl restart vllm-gemma');
    // Each step reads once ("drain l20-…", not "drain drain l20-…") and wraps between words (or after a hyphen or slash), not inside them.
    const steps = await page.evaluate(() => {
      const doc = (globalThis as unknown as { document: { querySelectorAll(q: string): ArrayLike<{ querySelector(q: string): { textContent: string | null; firstChild: unknown } | null }>; createRange(): { setStart(n: unknown, o: number): void; setEnd(n: unknown, o: number): void; getClientRects(): ArrayLike<{ top: number }> } } }).document;
      return Array.from(doc.querySelectorAll('[data-testid="action-steps"] li')).map((li) => {
        const badge = li.querySelector('.badge')?.textContent ?? '';
        const code = li.querySelector('code')!;
        const text = code.textContent ?? '';
        const node = code.firstChild;
        const range = doc.createRange();
        const midWord: string[] = [];
        let lastTop: number | null = null;
        for (let i = 0; i < text.length; i++) {
          range.setStart(node, i);
          range.setEnd(node, i + 1);
          const rects = range.getClientRects();
          const top = rects.length > 0 ? rects[0]!.top : null;
          if (top !== null && lastTop !== null && top > lastTop + 2 && i > 0 && /[^\s/-]/.test(text[i - 1]!) && /\S/.test(text[i]!) && text.slice(0, i).split(' ').pop()!.length < 40) {
            midWord.push(text.slice(Math.max(0, i - 12), i + 12));
          }
          if (top !== null) lastTop = top;
        }
        return { badge, text, midWord };
      });
    });
    expect(steps.map((s) => s.badge)).toEqual(['drain', 'ssh', 'verify']);
    for (const step of steps) {
      expect(step.text.startsWith(`${step.badge} `), step.text).toBe(false);
      expect(step.midWord, step.text).toEqual([]);
    }
    expect(await page.getByTestId('action-submit').isDisabled()).toBe(true);
    expect(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { getAttribute(n: string): string | null } } }).document.activeElement.getAttribute('data-testid'))).toBe('action-cancel');
    if (shots) await page.screenshot({ path: join(shots, 'actions-restart-dialog.png') });
    // A draft: Escape leaves no trace (no proposal, nothing audited, nothing in the bell).
    expect(await page.getByTestId('action-dialog').getAttribute('data-draft')).toBe('true');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByTestId('action-dialog').count()).toBe(0);
    expect(await page.getByTestId('inbox-count').textContent()).toBe('0');
    expect((await runCliProcess(['audit', 'list', '--limit', '200', '--data-dir', dataDir])).stdout).not.toContain('lifecycle.proposed');
    // Propose only: it now waits for an approver.
    await page.getByTestId('propose-restart-tri-gpu/gemma').click();
    await expect.poll(() => page.getByTestId('action-dialog').count(), { timeout: 5_000 }).toBe(1);
    await page.getByTestId('decision-propose').check();
    await page.getByTestId('action-reason').fill('gemma answers slowly since the driver update');
    await page.getByTestId('action-submit').click();
    await expect.poll(() => page.getByTestId('action-dialog').count()).toBe(0);
    await expect.poll(() => page.getByTestId('inbox-count').textContent()).toBe('1');
    expect(await page.getByTestId('proposal').textContent()).toContain('gemma answers slowly since the driver update');

    await page.getByTestId('propose-sleep-l20-poc/qwen').click();
    await expect.poll(() => page.getByTestId('action-dialog').count(), { timeout: 5_000 }).toBe(1);
    expect(await page.getByTestId('action-step-http').textContent()).toContain('POST http://127.0.0.1:8000/sleep?level=1');
    await page.getByTestId('action-approver-name').fill('Dana Night-Shift');
    if (shots) await page.screenshot({ path: join(shots, 'actions-sleep-dialog.png') });
    await page.getByTestId('action-submit').click();
    await expect.poll(() => page.getByTestId('action-dialog').count()).toBe(0);

    const verified = page.locator('[data-testid="history-row"][data-state="verified"]');
    await expect.poll(() => verified.count(), { timeout: 20_000 }).toBe(1);
    expect(await verified.textContent()).toContain('l20-poc/qwen');
    expect(await verified.textContent()).toContain('Dana Night-Shift (');
    // One time format: 24-hour local clock with the zone.
    expect(await verified.textContent()).toMatch(/\b\d\d:\d\d:\d\d UTC([+−]\d+(:\d\d)?)?(?![\d:])/);
    // Asleep now: Wake is offered, Sleep is not.
    await expect.poll(() => wake.isDisabled(), { timeout: 10_000 }).toBe(false);
    expect(await page.getByTestId('propose-sleep-l20-poc/qwen').isDisabled()).toBe(true);
    expect(await page.getByTestId('propose-sleep-l20-poc/qwen').getAttribute('title')).toBe('the service is already asleep (level 1)');
    if (shots) await page.screenshot({ path: join(shots, 'actions-history.png') });

    await page.getByTestId('actions-verify-chain').click();
    await expect.poll(async () => (await page.getByTestId('actions-chain-result').textContent()) ?? '', { timeout: 5_000 }).toMatch(/^Chain OK/);

    // The CLI sees the same queue (and the pending restart with its nonce).
    const listed = await runCliProcess(['actions', 'list', '--data-dir', dataDir]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/verified\s+sleep\s+l20-poc\/qwen/);
    expect(listed.stdout).toContain('--type-label tri-gpu');
    // The pending restart's counts come split: through the proxy, and direct tunnel clients at the engine.
    expect(listed.stdout).toMatch(/now \d+ in flight (\(\d+ through the proxy, \d+ from direct tunnel clients\)|through the proxy)/);

    // Admission re-opens (lifecycle.resumed) just after the verified state is shown: read the log until it is there.
    const types = ['lifecycle.proposed', 'lifecycle.approved', 'lifecycle.running', 'lifecycle.drained', 'lifecycle.step', 'lifecycle.verified', 'lifecycle.resumed'];
    const missing = async () => {
      const audit = await runCliProcess(['audit', 'list', '--limit', '200', '--data-dir', dataDir]);
      return types.filter((t) => !audit.stdout.includes(t));
    };
    await expect.poll(missing, { timeout: 10_000 }).toEqual([]);

    // Withdraw the waiting restart from its dialog: it leaves the inbox, shows as withdrawn, audited.
    await page.locator('[data-testid="proposal"][data-kind="restart"] button').click();
    await expect.poll(() => page.getByTestId('action-dialog').count(), { timeout: 5_000 }).toBe(1);
    expect(await page.getByTestId('action-dialog').getAttribute('data-draft')).toBe('false');
    await page.getByTestId('decision-withdraw').check();
    await page.getByTestId('action-submit').click();
    await expect.poll(() => page.getByTestId('inbox-count').textContent(), { timeout: 5_000 }).toBe('0');
    await expect.poll(() => page.locator('[data-testid="history-row"][data-state="withdrawn"]').count(), { timeout: 5_000 }).toBe(1);
    await expect.poll(async () => (await runCliProcess(['audit', 'list', '--limit', '300', '--data-dir', dataDir])).stdout, { timeout: 5_000 }).toContain('lifecycle.withdrawn');
  }, 90_000);
  it('grants a standing approval from the form (keyboard, confirmation, typed label for destructive kinds), lists it with its expiry, revokes it', async () => {
    await page.getByTestId('nav-actions').click();
    const form = page.getByTestId('standing-form');
    await form.scrollIntoViewIfNeeded();
    // An empty form is refused with reasons, nothing granted.
    await page.getByTestId('standing-review').focus();
    await page.keyboard.press('Enter');
    expect(await page.getByTestId('standing-problems').textContent()).toContain('Choose a service.');

    await page.getByTestId('standing-service').selectOption('l20-poc/qwen');
    await page.getByTestId('standing-kind').selectOption('wake');
    await page.getByTestId('standing-hours').fill('8');
    await page.getByTestId('standing-hours').press('Enter'); // submits the form: opens the confirmation, grants nothing
    await expect.poll(() => page.getByTestId('standing-confirm').count()).toBe(1);
    expect(await page.getByTestId('standing').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { getAttribute(n: string): string | null } } }).document.activeElement.getAttribute('data-testid'))).toBe('standing-cancel');
    expect(await page.getByTestId('standing-confirm').textContent()).toMatch(/wake of l20-poc\/qwen .*next 8 h/);
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter'); // the explicit Grant button
    const item = page.locator('[data-testid="standing"][data-status="active"]');
    await expect.poll(() => item.count(), { timeout: 5_000 }).toBe(1);
    expect(await item.textContent()).toMatch(/wake l20-poc\/qwen .*until .*\(expires in (7 h 59 min|8 h 0 min)\)/);

    // A destructive kind asks for the host label; show the form in that state with its confirmation.
    await page.getByTestId('standing-service').selectOption('tri-gpu/gemma');
    await page.getByTestId('standing-kind').selectOption('restart');
    await page.getByTestId('standing-hours').fill('2');
    await page.getByTestId('standing-typed-label').fill('tri-gpu');
    await page.getByTestId('standing-review').click();
    await expect.poll(() => page.getByTestId('standing-confirm').count()).toBe(1);
    if (shots) await page.screenshot({ path: join(shots, 'actions-standing.png') });
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByTestId('standing-confirm').count()).toBe(0);
    expect(await page.getByTestId('standing').count()).toBe(1);

    const id = await item.getAttribute('data-standing-id');
    await page.getByTestId(`standing-revoke-${id}`).click();
    await expect.poll(() => page.locator('[data-testid="standing"][data-status="revoked"]').count(), { timeout: 5_000 }).toBe(1);
    const audit = await runCliProcess(['audit', 'list', '--limit', '300', '--data-dir', dataDir]);
    expect(audit.stdout).toContain('lifecycle.standing.granted');
    expect(audit.stdout).toContain('lifecycle.standing.revoked');
  }, 60_000);
});
