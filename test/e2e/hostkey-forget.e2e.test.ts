import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import { runCliProcess, type RunningConsole } from '../helpers/console-process.js';
import { createNetnsHost, preClean, type NetnsHost, type Sshd } from '../helpers/netns-sshd.js';

// A host reinstalled after the operator confirmed its key in the console: the
// fleet card refuses the changed key loudly; the operator forgets the old key
// (host label typed), the host waits on the new key, which is confirmed like
// any unknown key. Real OpenSSH sshd in a network namespace, the built console,
// headless Chromium.

let ns: NetnsHost;
let sshd: Sshd;
let ui: ConsoleInBrowser | null = null;
let consoleProc: RunningConsole | null = null;
let page: Page;
const work = mkdtempSync(join(tmpdir(), 'gc-e2e-hk-'));
const dataDir = join(work, 'data');
const shots = process.env.HOSTKEY_SHOTS_DIR ?? null;

beforeAll(async () => {
  preClean();
  ns = await createNetnsHost();
  sshd = await ns.startSshd();
  await ns.startModelServer(8000);
  mkdirSync(dataDir, { recursive: true });
  const config = join(work, 'config.yaml');
  writeFileSync(join(work, 'known_hosts'), '# empty: trust is decided in the console\n');
  writeFileSync(
    config,
    [
      'hosts:',
      '  - label: gpu-re',
      `    ssh: { host: ${ns.addr}, user: root, identityFile: ${ns.clientKey}, keepaliveIntervalMs: 1000 }`,
      `    knownHostsFile: ${join(work, 'known_hosts')}`,
      '    services:',
      '      - { id: m, kind: vllm, remotePort: 8000, model: test-model }',
      '',
    ].join('\n'),
  );
  ui = await startConsoleInBrowser(['--config', config, '--data-dir', dataDir, '--ui-port', '0', '--proxy-port', '0'], { load: false });
  consoleProc = ui.console;
  page = ui.page;
  if (shots) mkdirSync(shots, { recursive: true });
}, 60_000);

afterAll(async () => {
  if (ui) expect(await ui.stop()).toBe(0);
  await ns?.dispose();
  rmSync(work, { recursive: true, force: true });
});

describe('a reinstalled host after a console-confirmed key', () => {
  it('is refused, then recovered by forgetting the old key and confirming the new one', async () => {
    // First contact: the key is unknown; confirmed from the CLI after comparing it.
    await page.goto(consoleProc!.ui);
    await expect.poll(() => page.getByTestId('host-trust').count(), { timeout: 20_000 }).toBe(1);
    const first = await runCliProcess(['hosts', 'trust', 'gpu-re', sshd.fingerprint, '--data-dir', dataDir]);
    expect(first.code, first.stderr).toBe(0);
    const oldFp = sshd.fingerprint;

    // The host is reinstalled: new host keys.
    await sshd.kill();
    sshd = await ns.startSshd();
    expect(sshd.fingerprint).not.toBe(oldFp);
    await runCliProcess(['hosts', 'reconnect', 'gpu-re', '--data-dir', dataDir]);
    const alert = page.getByTestId('hostkey-alert');
    await expect.poll(() => alert.count(), { timeout: 20_000 }).toBe(1);
    expect(await page.getByTestId('hostkey-presented').textContent()).toBe(sshd.fingerprint);
    expect(await page.getByTestId('hostkey-known').textContent()).toBe(oldFp);
    const button = page.getByTestId('hostkey-forget');
    expect(await button.isDisabled()).toBe(true);
    await page.getByTestId('hostkey-forget-label').fill('gpu-r');
    expect(await button.isDisabled()).toBe(true);
    await page.getByTestId('hostkey-forget-label').fill('gpu-re');
    if (shots) await page.screenshot({ path: join(shots, 'hostkey-changed.png') });
    await button.click();

    // Now an unknown key again: the banner shows the new fingerprint; nothing is trusted by itself.
    const banner = page.getByTestId('host-trust');
    await expect.poll(() => page.getByTestId('trust-review').count(), { timeout: 20_000 }).toBe(1);
    expect(await banner.textContent()).toContain(sshd.fingerprint);
    expect(await alert.count()).toBe(0);
    if (shots) await page.screenshot({ path: join(shots, 'hostkey-after-forget.png') });
    const audit = await runCliProcess(['audit', 'list', '--limit', '50', '--data-dir', dataDir]);
    expect(audit.stdout).toContain('ssh.hostkey.forgotten');
    const second = await runCliProcess(['hosts', 'trust', 'gpu-re', sshd.fingerprint, '--data-dir', dataDir]);
    expect(second.code, second.stderr).toBe(0);
    await expect.poll(() => page.getByTestId('host-trust').count(), { timeout: 20_000 }).toBe(0);
  }, 90_000);
});
