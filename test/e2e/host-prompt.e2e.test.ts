import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleInBrowser, type ConsoleInBrowser } from '../helpers/browser.js';
import { bridgeCall, type RunningConsole } from '../helpers/console-process.js';
import { ROOT } from '../helpers/imports.js';
import { HAVE_OPENSSH } from '../helpers/ssh-tools.js';

// A host that asks for a one-time code at login, on the openssh transport,
// seen in the browser: the question is on the host card while ssh waits, the
// code typed there goes UI → bridge → core → askpass helper → ssh → server,
// and the host connects. The audit row names the question, never the answer.


const CODE = '731904';
const dir = mkdtempSync(join(tmpdir(), 'gc-e2e-otp-'));
let server: InstanceType<typeof ssh2.Server> | null = null;
let proc: RunningConsole | null = null;
let ui: ConsoleInBrowser | null = null;

beforeAll(async () => {
  if (!HAVE_OPENSSH) return;
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'host')]);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'client')]);
  server = new ssh2.Server({ hostKeys: [readFileSync(join(dir, 'host'))] }, (client) => {
    client.on('error', () => undefined);
    client.on('authentication', (ctx) => {
      if (ctx.method !== 'keyboard-interactive') return ctx.reject(['keyboard-interactive']);
      ctx.prompt([{ prompt: 'Verification code: ', echo: false }], (answers) => (answers[0] === CODE ? ctx.accept() : ctx.reject(['keyboard-interactive'])));
    });
    client.on('ready', () =>
      client.on('session', (accept) =>
        accept().once('exec', (acceptExec) => {
          const s = acceptExec();
          s.stderr.write('nvidia-smi: command not found\n');
          s.exit(127);
          s.end();
        }),
      ),
    );
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  const hostPub = readFileSync(join(dir, 'host.pub'), 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
  writeFileSync(join(dir, 'known_hosts'), `[127.0.0.1]:${port} ${hostPub}\n`);
  writeFileSync(
    join(dir, 'config.yaml'),
    `hosts:\n  - label: otp-host\n    ssh: { host: 127.0.0.1, port: ${port}, user: ops, identityFile: ${join(dir, 'client')}, transport: openssh }\n    knownHostsFile: ${join(dir, 'known_hosts')}\n    services: []\n`,
  );
}, 20_000);

afterAll(async () => {
  await ui?.stop();
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!HAVE_OPENSSH)('a host asking for a one-time code, answered in the browser', () => {
  it('shows the question on the card, and the code typed there logs the host in', async () => {
    ui = await startConsoleInBrowser(['--config', join(dir, 'config.yaml'), '--data-dir', join(dir, 'data'), '--ui-port', '0', '--proxy-port', '0'], { defaultTimeoutMs: 15_000 });
    proc = ui.console;
    const page = ui.page;
    const card = page.getByTestId('host-card-otp-host');
    await expect.poll(() => card.getByTestId('host-prompt-text').textContent(), { timeout: 20_000 }).toMatch(/Verification code:/);
    expect(await card.getByTestId('host-state').textContent()).toMatch(/connecting/i);
    await page.screenshot({ path: join(ROOT, 'test-results', 'e2e-host-prompt.png'), fullPage: true });
    await card.getByTestId('passphrase-input').fill(CODE);
    await card.getByTestId('passphrase-submit').click();
    await expect.poll(async () => (await card.getByTestId('host-state').textContent())?.toLowerCase(), { timeout: 15_000 }).toContain('connected');
    await expect.poll(() => card.getByTestId('host-prompt-text').count(), { timeout: 5_000 }).toBe(0);
    const audit = await bridgeCall<{ events: { type: string; payload: unknown }[] }>(proc.ui, 'audit.list', { limit: 50 });
    const text = JSON.stringify(audit);
    expect(text).toContain('ssh.prompt.answered');
    expect(text).toContain('Verification code');
    expect(text).not.toContain(CODE);
  }, 60_000);

  it('Decline tells the host no at once: the card says the login failed because the question was declined', async () => {
    const page = ui!.page;
    const card = page.getByTestId('host-card-otp-host');
    await bridgeCall(proc!.ui, 'hosts.disconnect', { label: 'otp-host' });
    // hosts.connect answers when the login is done, and this login waits for the question: not awaited here.
    const connecting = bridgeCall(proc!.ui, 'hosts.connect', { label: 'otp-host' });
    await expect.poll(() => card.getByTestId('host-prompt-text').count(), { timeout: 20_000 }).toBe(1);
    await card.getByTestId('prompt-decline').click();
    await expect.poll(async () => (await card.getByTestId('host-state').textContent())?.toLowerCase(), { timeout: 10_000 }).toContain('failed');
    await expect.poll(() => card.textContent(), { timeout: 5_000 }).toMatch(/declined to answer/);
    await connecting;
    const audit = await bridgeCall<{ events: { type: string }[] }>(proc!.ui, 'audit.list', { limit: 50 });
    expect(JSON.stringify(audit)).toContain('ssh.prompt.declined');
  }, 40_000);
});
