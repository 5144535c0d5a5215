import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DEMO_FAULTS, startDemoFleet, type DemoFleet } from '../../src-main/demo/index.js';
import { describeViolations, seriousViolations } from '../helpers/axe.js';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import { bridgeCall } from '../helpers/console-process.js';
import { until } from '../helpers/until.js';

// Acknowledge and silence from the UI (issue #30 "Done when": a silence set
// from the UI stops the page and is in the audit log): the built console on
// the demo fleet (in this process, so its Xid knob is reachable), tri-gpu's
// built-in Xid 13 on GPU 2 raises gpu_fault and pages once. The operator
// acknowledges it and silences it from the host view with a reason: the row
// shows both, the audit log names the operator, and when a second Xid (79,
// critical) escalates the alert — which would page again even though it is
// acknowledged — no notice is sent. The Alerts page shows the alert, the
// silence and the handover.

const SHOTS = process.env.ALERTS_SHOTS_DIR ?? '/tmp/shots';

interface AuditRow {
  type: string;
  actor: string;
  payload: Record<string, unknown>;
}

describe('acknowledge and silence from the UI', () => {
  let demo: DemoFleet;
  let ui: ConsoleInBrowser;
  let page: Page;
  const dir = mkdtempSync(join(tmpdir(), 'gc-e2e-alert-book-'));

  const call = async <T,>(channel: string, input: unknown): Promise<T> => {
    const r = await bridgeCall<T>(ui.console.ui, channel, input);
    if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
    return r.data;
  };
  const audit = async (type: string) => (await call<{ events: AuditRow[] }>('audit.list', { limit: 500 })).events.filter((e) => e.type === type);
  const noticesFor = async (id: string) => (await call<{ notifications: { key: string }[] }>('notifications.list', { limit: 200 })).notifications.filter((n) => n.key === `alert:${id}`).length;

  beforeAll(async () => {
    demo = await startDemoFleet({ dir: join(dir, 'fleet'), timeScale: 20, faults: DEFAULT_DEMO_FAULTS });
    const configFile = join(dir, 'conf', 'demo.yaml');
    mkdirSync(join(dir, 'conf'), { mode: 0o700 });
    // JSON is YAML: the fleet's config as a file would hold it, health read every 5 s (the shortest the config takes).
    writeFileSync(configFile, JSON.stringify({ ...demo.config, health: { intervalMs: 5_000 } }, null, 2), { mode: 0o600 });
    ui = await startConsoleInBrowser(['--config', configFile, '--data-dir', join(dir, 'console'), '--ui-port', '0', '--proxy-port', '0'], { bypassCSP: true });
    page = ui.page;
    mkdirSync(SHOTS, { recursive: true });
  }, 90_000);

  afterAll(async () => {
    const code = await ui?.stop();
    await demo?.dispose();
    rmSync(dir, { recursive: true, force: true });
    expect(code).toBe(0);
  });

  it('ack and silence from the host view are shown and audited with the operator; the escalation that follows sends no notice', async () => {
    await page.getByTestId('nav-host').click();
    await page.getByTestId('host-picker').selectOption('tri-gpu');
    const row = page.locator('[data-testid="host-alert"][data-kind="gpu_fault"]');
    await row.waitFor({ timeout: 60_000 });
    const id = (await row.getAttribute('data-alert-id'))!;
    await until(async () => (await noticesFor(id)) === 1, { timeoutMs: 10_000, what: 'the Xid alert paged once' });

    // Acknowledge from the keyboard.
    await row.getByTestId('alert-ack').focus();
    await page.keyboard.press('Enter');
    await row.getByTestId('host-alert-ack').waitFor({ timeout: 10_000 });
    expect(await row.getByTestId('host-alert-ack').textContent()).toMatch(/^acknowledged by operator:.+@web at /);
    const acks = await audit('alert.acknowledged');
    expect(acks).toHaveLength(1);
    expect(acks[0]).toMatchObject({ actor: expect.stringMatching(/^operator:.+@web$/), payload: { alertId: id, kind: 'gpu_fault', host: 'tri-gpu' } });

    // Silence… opens the dialog with the alert's rule and host; Silence stays disabled until a reason is given.
    await row.getByTestId('alert-silence').click();
    const dialog = page.getByTestId('silence-dialog');
    await dialog.waitFor();
    expect(await dialog.getByTestId('silence-rule').inputValue()).toBe('gpu_fault');
    expect(await dialog.getByTestId('silence-scope-host').isChecked()).toBe(true);
    expect(await dialog.getByTestId('silence-submit').isDisabled()).toBe(true);
    expect(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { getAttribute(n: string): string | null } | null } }).document.activeElement?.getAttribute('data-testid'))).toBe('silence-cancel');
    await dialog.getByTestId('silence-for-4h').check();
    await dialog.getByTestId('silence-reason').fill('GPU 2 waits for its RMA; reseat tonight');
    await dialog.getByTestId('silence-submit').click();
    await dialog.waitFor({ state: 'detached' });
    const badge = row.getByTestId('host-alert-silenced');
    await badge.waitFor({ timeout: 10_000 });
    expect(await badge.textContent()).toMatch(/^silenced until .+ — GPU 2 waits for its RMA; reseat tonight$/);
    const set = await audit('alerts.silence.set');
    expect(set).toHaveLength(1);
    expect(set[0]).toMatchObject({ actor: expect.stringMatching(/^operator:.+@web$/), payload: { rule: 'gpu_fault', host: 'tri-gpu', reason: 'GPU 2 waits for its RMA; reseat tonight', forMs: 4 * 3_600_000, covers: [id] } });
    await row.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'host-alerts.png') });

    // A critical Xid on the same GPU escalates the alert: audited, shown, and — silenced — not paged.
    demo.host('tri-gpu').raiseXid({ gpuIndex: 2, xid: 79 });
    await until(async () => (await audit('alert.changed')).some((e) => e.payload.alertId === id && e.payload.severity === 'critical'), { timeoutMs: 30_000, what: 'the Xid 79 escalation audited' });
    const changed = (await audit('alert.changed')).find((e) => e.payload.alertId === id && e.payload.severity === 'critical')!;
    expect(changed.payload.silencedBy).toBe(set[0]!.payload.silenceId);
    await page.locator('[data-testid="host-alert"][data-kind="gpu_fault"].host-alerts__item--critical').waitFor({ timeout: 10_000 });
    expect(await noticesFor(id)).toBe(1);
  }, 120_000);

  it('the Alerts page shows the open alert with its silence, the silence in force and the handover, without serious a11y violations', async () => {
    await page.getByTestId('nav-alerts').click();
    const view = page.getByTestId('alerts-page');
    await view.waitFor();
    await view.locator('[data-testid="host-alert"][data-kind="gpu_fault"]').getByTestId('host-alert-silenced').waitFor();
    expect(await view.getByTestId('alerts-silence-row').count()).toBe(1);
    await view.getByTestId('alerts-history-row').first().waitFor({ timeout: 10_000 });
    const history = await view.getByTestId('alerts-history').textContent();
    expect(history).toMatch(/GPU fault/);
    expect(history).toMatch(/operator:.+@web/);
    expect(await view.getByTestId('alerts-changes').textContent()).toMatch(/silenced gpu_fault on tri-gpu for 4 h — GPU 2 waits for its RMA/);
    await page.getByTestId('alerts-since-24h').check();
    expect(await page.getByTestId('alerts-since-24h').isChecked()).toBe(true);
    const found = await seriousViolations(page);
    expect(describeViolations('alerts page', found)).toEqual([]);
    await page.screenshot({ path: join(SHOTS, 'alerts-page.png'), fullPage: false });

    // End the silence from the page: it leaves the list and the alert loses its badge.
    await view.getByTestId('alerts-silence-end').click();
    await until(async () => (await view.getByTestId('alerts-silence-row').count()) === 0, { timeoutMs: 10_000, what: 'the silence ended' });
    expect(await audit('alerts.silence.ended')).toHaveLength(1);
  }, 60_000);
});
