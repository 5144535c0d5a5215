import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ActionView, AuditEventView } from '../../src-preload/contract/index.js';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import { bridgeCall, startConsole, type RunningConsole } from '../helpers/console-process.js';
import { until } from '../helpers/until.js';

// Through the built console (issue #33 item 2): a restart approved and under
// way when the console is killed with SIGKILL comes back as *interrupted* in
// the Actions view, with each step's fate; one click on Verify now reads the
// service's real state, shows it, and audits it. Nothing is resumed.

const ARGS = (dataDir: string) => ['--demo', '--demo-traffic', 'off', '--demo-time-scale', '10', '--data-dir', dataDir, '--ui-port', '0', '--proxy-port', '0'];

async function call<T>(ui: string, channel: string, input: unknown): Promise<T> {
  const r = await bridgeCall<T>(ui, channel, input);
  if (!r.ok) throw new Error(`${channel}: ${r.error.code}: ${r.error.message}`);
  return r.data;
}

describe('an action interrupted by a kill, in the Actions view', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-e2e-interrupted-'));
  const shots = process.env.INTERRUPTED_SHOTS_DIR ?? null;
  let ui: ConsoleInBrowser | null = null;
  let first: RunningConsole | null = null;
  afterAll(async () => {
    if (first && first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
    if (ui) expect(await ui.stop()).toBe(0);
  });

  it('is shown interrupted with what was done and not done; Verify now reads the service and is audited', async () => {
    const killed = (first = await startConsole(ARGS(dataDir)));
    const healthy = async (u: string) =>
      (await call<{ hosts: { label: string; services: { id: string; health: string }[] }[] }>(u, 'fleet.snapshot', {})).hosts
        .find((h) => h.label === 'tri-gpu')
        ?.services.find((s) => s.id === 'gemma')?.health === 'ok';
    await until(() => healthy(killed.ui), { timeoutMs: 20_000, what: 'tri-gpu/gemma healthy' });
    const { action } = await call<{ action: ActionView }>(killed.ui, 'actions.propose', { upstream: 'tri-gpu/gemma', kind: 'restart', approveNow: { typedLabel: 'tri-gpu' } });
    // Killed once the restart command was sent (its step started), before verification ended.
    const progress = async () => (await call<{ actions: ActionView[] }>(killed.ui, 'actions.list', { limit: 5 })).actions.find((a) => a.id === action.id)?.stepProgress ?? [];
    await until(async () => (await progress())[0] === 'done', {
      timeoutMs: 20_000,
      intervalMs: 25,
      what: 'the restart past its drain',
    });
    killed.child.kill('SIGKILL');
    await new Promise((r) => killed.child.once('exit', r));

    ui = await startConsoleInBrowser(ARGS(dataDir), { load: false });
    const page = ui.page;
    await page.goto(ui.console.ui);
    await page.getByTestId('nav-actions').click();
    const card = page.locator(`[data-testid="interrupted-action"][data-action-id="${action.id}"]`);
    await expect.poll(() => card.count(), { timeout: 10_000 }).toBe(1);
    const outcomes = await card.locator('[data-testid="interrupted-step"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-outcome')));
    expect(outcomes[0]).toBe('done'); // the drain
    expect(outcomes.at(-1)).not.toBe('done'); // verification never finished
    expect(await card.textContent()).toContain('It was not resumed');
    const row = page.locator(`[data-testid="history-row"][data-action-id="${action.id}"]`);
    expect(await row.getAttribute('data-state')).toBe('interrupted');
    if (shots) await page.screenshot({ path: join(shots, 'actions-interrupted.png'), fullPage: true });

    await until(() => healthy(ui!.console.ui), { timeoutMs: 20_000, what: 'tri-gpu/gemma healthy after the start' });
    await page.getByTestId(`verify-now-${action.id}`).click();
    // Once checked it leaves the panel and shows in its history row with what was seen.
    const check = row.getByTestId('interrupted-check');
    await expect.poll(() => check.count(), { timeout: 15_000 }).toBe(1);
    expect(await check.getAttribute('data-ok')).toBe('true');
    expect(await check.textContent()).toContain('health: HTTP 200');
    expect(await card.count()).toBe(0);
    if (shots) await row.screenshot({ path: join(shots, 'actions-interrupted-checked.png') });

    const { events } = await call<{ events: AuditEventView[] }>(ui.console.ui, 'audit.list', { limit: 200 });
    const mine = events.filter((e) => (e.payload as { actionId?: string }).actionId === action.id).map((e) => e.type);
    expect(mine.filter((t) => t === 'lifecycle.running')).toHaveLength(1);
    expect(mine).toContain('lifecycle.interrupted');
    expect(mine).toContain('lifecycle.checked');
    expect((await call<{ ok: boolean }>(ui.console.ui, 'audit.verify', {})).ok).toBe(true);
  }, 120_000);
});
