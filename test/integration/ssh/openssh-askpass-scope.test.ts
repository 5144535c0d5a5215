import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FleetService } from '../../../src-main/core/fleet/index.js';
import { MemoryPassphraseCache } from '../../../src-main/core/ssh/index.js';
import { HAVE_OPENSSH } from '../../helpers/ssh-tools.js';
import { startFleet, waitHost } from './helpers.js';

// Issue #26, finding 2: a hostile GPU or jump host asks, through
// keyboard-interactive, "Enter passphrase for key '<the operator's key>':".
// OpenSSH hands that question to the same askpass helper as its own key
// prompts. The console must not answer it with the stored passphrase: the
// server gets nothing, and the question waits for the operator, shown as the
// host's own (ssh puts "(user@host)" before a host's words).

const PASSPHRASE = 'correct horse battery staple';
const dir = mkdtempSync(join(tmpdir(), 'gc-askpass-'));
const clientKey = join(dir, 'client');
let server: InstanceType<typeof ssh2.Server>;
let port = 0;
/** Every answer a keyboard-interactive question of the server got, in order. */
const received: string[] = [];
/** What the server asks next (set per test). */
let question = '';
const fleets: FleetService[] = [];

beforeAll(async () => {
  if (!HAVE_OPENSSH) return;
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'host')]);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', PASSPHRASE, '-f', clientKey]);
  server = new ssh2.Server({ hostKeys: [readFileSync(join(dir, 'host'))] }, (client) => {
    client.on('error', () => undefined);
    client.on('authentication', (ctx) => {
      // The key is refused unseen, so ssh never needs its passphrase: only the host's question can ask for it.
      if (ctx.method !== 'keyboard-interactive') return ctx.reject(['keyboard-interactive']);
      ctx.prompt([{ prompt: question, echo: false }], (answers) => {
        received.push(...answers);
        ctx.reject(['keyboard-interactive']);
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as AddressInfo).port;
  const hostPub = readFileSync(join(dir, 'host.pub'), 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
  writeFileSync(join(dir, 'known_hosts'), `[127.0.0.1]:${port} ${hostPub}\n`);
}, 20_000);

// Each test's fleet goes before the next asks: a retry of its login would answer the next question.
afterEach(async () => {
  await Promise.all(fleets.splice(0).map((f) => f.dispose()));
});

afterAll(() => {
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const target = (label: string) => ({
  label,
  ssh: { host: '127.0.0.1', port, user: 'ops', identityFile: clientKey, transport: 'openssh' as const },
  knownHostsFile: join(dir, 'known_hosts'),
  services: [],
});

async function hostAsks(label: string, asked: string): Promise<{ fleet: FleetService; text: string }> {
  question = asked;
  received.length = 0;
  const passphrases = new MemoryPassphraseCache();
  // The operator has unlocked the key in this console before.
  passphrases.set(clientKey, PASSPHRASE);
  const { fleet } = startFleet([target(label)], { openssh: { controlDir: join(dir, label) }, sshServices: { passphrases } });
  fleets.push(fleet);
  // Until the host shows a question, or the server got an answer (what the console did before the fix), or it failed.
  const h = await waitHost(fleet, label, (v) => v.credentialPrompt?.kind === 'prompt' || received.length > 0 || v.state === 'failed', 10_000);
  return { fleet, text: h.credentialPrompt?.kind === 'prompt' ? h.credentialPrompt.text : '' };
}

describe.skipIf(!HAVE_OPENSSH)('openssh askpass answers only what it was asked for', () => {
  it("a host's keyboard-interactive 'passphrase for key' question gets nothing; the operator sees it as the host's question", async () => {
    const { fleet, text } = await hostAsks('evil', `Enter passphrase for key '${clientKey}': `);
    // ssh is waiting on the operator: the server has had no answer at all.
    expect(received).toEqual([]);
    // Shown as asked, with ssh's "(user@host)" naming who asks.
    expect(text).toBe(`(ops@127.0.0.1) Enter passphrase for key '${clientKey}':`);
    expect(await fleet.declinePrompt('evil')).toBe('failed');
    expect(received).not.toContain(PASSPHRASE);
    expect(JSON.stringify(fleet.snapshot())).not.toContain(PASSPHRASE);
  }, 30_000);

  it('a question naming another key file (the old fallback to the identityFile passphrase) gets nothing either', async () => {
    const { fleet, text } = await hostAsks('evil2', "Enter passphrase for key '/root/.ssh/id_ed25519': ");
    expect(received).toEqual([]);
    expect(text).toBe("(ops@127.0.0.1) Enter passphrase for key '/root/.ssh/id_ed25519':");
    expect(await fleet.declinePrompt('evil2')).toBe('failed');
    expect(received).not.toContain(PASSPHRASE);
  }, 30_000);

  it("control characters in a host's question never reach the console raw", async () => {
    const { fleet, text } = await hostAsks('evil3', 'Code\u001b]52;c;aGVsbG8=\u0007\u009b2J: ');
    // OpenSSH shows them as octal escapes itself; escapeControls in the console is there for whatever it lets by.
    expect(text).toMatch(/^\(ops@127\.0\.0\.1\) Code/);
    // eslint-disable-next-line no-control-regex -- looking for control characters is the point
    expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(await fleet.declinePrompt('evil3')).toBe('failed');
  }, 30_000);
});
