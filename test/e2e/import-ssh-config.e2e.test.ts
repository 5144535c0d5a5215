import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import { bridgeCall, type RunningConsole } from '../helpers/console-process.js';

// The ~/.ssh/config import as an operator does it in a browser: main reads
// ~/.ssh/config (with its Includes) itself, or the browser uploads a chosen
// file's content. No path is typed anywhere; what is not ssh_config is named
// by line, never shown.

const work = mkdtempSync(join(tmpdir(), 'gc-e2e-import-'));
const home = join(work, 'home');
const dataDir = join(work, 'data');
const shots = process.env.IMPORT_SHOTS_DIR ?? null;
let ui: ConsoleInBrowser;
let consoleProc: RunningConsole;
let page: Page;

beforeAll(async () => {
  mkdirSync(join(home, '.ssh', 'conf.d'), { recursive: true });
  writeFileSync(join(home, '.ssh', 'config'), 'Include conf.d/*\nHost gpu-east\n  HostName 192.0.2.21\n  User ops\n  IdentityFile ~/.ssh/id_ed25519\n');
  writeFileSync(join(home, '.ssh', 'conf.d', 'lab'), 'Host lab-a100\n  HostName 192.0.2.31\n  User lab\n  ProxyJump ops@192.0.2.1\n');
  // The console runs with this HOME, so ~/.ssh/config is ours; the demo fleet stays the inventory.
  ui = await startConsoleInBrowser(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir, '--ui-port', '0', '--proxy-port', '0'], { env: { HOME: home } });
  consoleProc = ui.console;
  page = ui.page;
  if (shots) mkdirSync(shots, { recursive: true });
}, 60_000);

afterAll(async () => {
  expect(await ui?.stop()).toBe(0);
});

describe('import hosts from an ssh config (web)', () => {
  it('reads ~/.ssh/config with its Includes; there is no path field', async () => {
    await page.getByTestId('import-ssh-config').click();
    const dialog = page.getByTestId('import-dialog');
    await dialog.waitFor();
    expect(await dialog.locator('input:not([type="checkbox"]):not([type="file"])').count()).toBe(0);
    await page.getByTestId('import-preview').click();
    await page.getByTestId('import-row-gpu-east').waitFor();
    await page.getByTestId('import-row-lab-a100').waitFor();
    expect(await dialog.textContent()).toContain('and 1 included file(s)');
    expect(await page.getByTestId('import-row-lab-a100').textContent()).toContain('via ops@192.0.2.1');
    if (shots) await page.screenshot({ path: join(shots, 'import-default.png') });
  });

  it('uploads a chosen file as content; lines that are not ssh_config are named by number and never shown', async () => {
    const upload = join(work, 'pasted_config');
    writeFileSync(upload, ['Host up-1', '  HostName 192.0.2.77', 'root:x:0:0:root:/root:/bin/bash', '-----BEGIN OPENSSH PRIVATE KEY-----', 'Include ~/.ssh/other', ''].join('\n'));
    await page.getByTestId('import-upload').setInputFiles(upload);
    await page.getByTestId('import-row-up-1').waitFor();
    const text = (await page.getByTestId('import-dialog').textContent()) ?? '';
    expect(text).toContain('pasted_config (uploaded)');
    expect(text).toContain('line 3');
    expect(text).toContain('line 4');
    expect(text).toMatch(/Include is not followed/);
    for (const needle of ['root:x', '/bin/bash', 'BEGIN OPENSSH']) expect(text).not.toContain(needle);
    if (shots) await page.screenshot({ path: join(shots, 'import-upload.png') });
  });

  it('applies exactly the previewed hosts: written to the config file, audited, the demo keeps running', async () => {
    await page.getByTestId('import-apply').click();
    const result = page.getByTestId('import-result');
    await result.waitFor();
    expect(await result.textContent()).toContain('Added up-1');
    expect(readFileSync(join(dataDir, 'config.yaml'), 'utf8')).toContain('label: up-1');
    const answer = await bridgeCall<{ events: { type: string; actor: string; payload: Record<string, unknown> }[] }>(consoleProc.ui, 'audit.list', { limit: 50 });
    expect(answer.ok).toBe(true);
    const events = answer.ok ? answer.data.events : [];
    const previewed = events.filter((e) => e.type === 'hosts.import.previewed').map((e) => e.payload['source']);
    expect(previewed.sort()).toEqual(['content', 'default']);
    expect(events.find((e) => e.type === 'hosts.imported')).toMatchObject({ actor: expect.stringMatching(/@web$/), payload: { added: ['up-1'] } });
    // The audit rows name what was read, never its text.
    expect(JSON.stringify(events)).not.toContain('root:x');
    if (shots) await page.screenshot({ path: join(shots, 'import-applied.png') });
  });

  it('a refused host is named with its field; each line that makes ssh run a command is shown and must be ticked', async () => {
    const upload = join(work, 'team_ssh_config');
    writeFileSync(
      upload,
      [
        'Host gpu-east',
        "  HostName gpu-east.internal\\'$(id>/tmp/pwned)\\'",
        '  ProxyJump a,b',
        'Host gpu-corp',
        '  HostName 192.0.2.41',
        '  User ops',
        '  ProxyCommand nc -X connect -x proxy.corp:3128 %h %p',
        'Match exec "test -f ~/.vpn-up"',
        '',
      ].join('\n'),
    );
    await page.getByTestId('import-upload').setInputFiles(upload);
    await page.getByTestId('import-row-gpu-corp').waitFor();
    const dialog = page.getByTestId('import-dialog');
    expect(await page.getByTestId('import-refused-gpu-east').textContent()).toMatch(/refused gpu-east: HostName \(line 2\): .* is not a host name/);
    expect(await page.getByTestId('import-row-gpu-east').count()).toBe(0);
    const proxy = page.getByTestId('import-command-cmd-1');
    expect(await proxy.textContent()).toContain('nc -X connect -x proxy.corp:3128 %h %p');
    expect(await page.getByTestId('import-command-cmd-2').textContent()).toContain('exec "test -f ~/.vpn-up"');
    const apply = page.getByTestId('import-apply');
    expect(await apply.isDisabled()).toBe(true);
    expect(await page.getByTestId('import-waiting').textContent()).toContain('gpu-corp');
    await proxy.getByRole('checkbox').check();
    expect(await apply.isDisabled()).toBe(true);
    await apply.scrollIntoViewIfNeeded();
    if (shots) await page.screenshot({ path: join(shots, 'import-dialog.png') });
    await page.getByTestId('import-command-cmd-2').getByRole('checkbox').check();
    expect(await apply.isDisabled()).toBe(false);
    await apply.click();
    await expect.poll(async () => (await page.getByTestId('import-result').textContent()) ?? '').toContain('Added gpu-corp');
    expect(readFileSync(join(dataDir, 'config.yaml'), 'utf8')).not.toContain('gpu-east');
    expect(await dialog.textContent()).not.toContain('SSH_IMPORT_COMMAND_NOT_ACKNOWLEDGED');
  });
});
