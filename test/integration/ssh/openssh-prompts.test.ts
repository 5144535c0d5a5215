import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../src-main/core/config/index.js';
import type { FleetService } from '../../../src-main/core/fleet/index.js';
import { MemoryTrustStore, OpenSshHelperServer, OpenSshProbe, OpenSshSession } from '../../../src-main/core/ssh/index.js';
import { startFleet, waitHost } from './helpers.js';
import { HAVE_OPENSSH } from '../../helpers/ssh-tools.js';

// A host that asks a question during login (keyboard-interactive: a one-time
// code) under the openssh transport: ssh waits, the question is shown on the
// host (credentialPrompt kind 'prompt'), the operator's answer goes back
// through the askpass helper, and login goes on. Unanswered, it expires with
// a clear error. The server is ssh2's, asking as sshd with PAM would.


const CODE = '424242';
const dir = mkdtempSync(join(tmpdir(), 'gc-kbd-'));
let server: InstanceType<typeof ssh2.Server>;
let port = 0;
let hostLine = '';
const asked: string[] = [];
const fleets: FleetService[] = [];

beforeAll(async () => {
  if (!HAVE_OPENSSH) return;
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'host')]);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'client')]);
  const hostKey = execFileSync('cat', [join(dir, 'host')]);
  server = new ssh2.Server({ hostKeys: [hostKey] }, (client) => {
    client.on('error', () => undefined);
    client.on('authentication', (ctx) => {
      if (ctx.method !== 'keyboard-interactive') return ctx.reject(['keyboard-interactive']);
      asked.push(ctx.username);
      ctx.prompt([{ prompt: 'Verification code: ', echo: false }], 'Two-factor', '', (answers) => (answers[0] === CODE ? ctx.accept() : ctx.reject(['keyboard-interactive'])));
    });
    client.on('ready', () => client.on('session', (accept) => accept().once('exec', (acceptExec) => {
      const s = acceptExec();
      s.write('logged-in\n');
      s.exit(0);
      s.end();
    })));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as AddressInfo).port;
  hostLine = `[127.0.0.1]:${port} ${execFileSync('cat', [join(dir, 'host.pub')]).toString().trim().split(/\s+/).slice(0, 2).join(' ')}\n`;
  writeFileSync(join(dir, 'known_hosts'), hostLine);
}, 20_000);

afterAll(async () => {
  await Promise.all(fleets.splice(0).map((f) => f.dispose()));
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const target = (label: string) =>
  ({ label, ssh: { host: '127.0.0.1', port, user: 'ops', identityFile: join(dir, 'client'), transport: 'openssh' as const }, knownHostsFile: join(dir, 'known_hosts'), services: [] });

describe.skipIf(!HAVE_OPENSSH)('openssh transport: a host that asks a question during login', () => {
  it('shows the question on the host, and the answer typed in the console logs in', async () => {
    const r = startFleet([target('otp')], { openssh: { controlDir: join(dir, 'c1') } });
    fleets.push(r.fleet);
    const waiting = await waitHost(r.fleet, 'otp', (h) => h.credentialPrompt?.kind === 'prompt', 10_000);
    expect(waiting.credentialPrompt).toMatchObject({ kind: 'prompt', text: expect.stringMatching(/Verification code/) });
    // ssh is still waiting: the deadline does not run while the operator is asked.
    expect(waiting.state).toBe('connecting');
    expect(await r.fleet.providePassphrase('otp', CODE)).toBe('connected');
    const after = r.fleet.snapshot().hosts[0]!;
    expect(after.credentialPrompt ?? null).toBeNull();
    // The answer is nowhere in what the console shows.
    expect(JSON.stringify(r.fleet.snapshot())).not.toContain(CODE);
    expect((await r.fleet.exec('otp', 'anything')).stdout).toBe('logged-in\n');
  }, 30_000);

  it('a question the operator declines fails the login saying so, without waiting for the timeout', async () => {
    const r = startFleet([target('otp-no')], { openssh: { controlDir: join(dir, 'c3') } });
    fleets.push(r.fleet);
    await waitHost(r.fleet, 'otp-no', (h) => h.credentialPrompt?.kind === 'prompt', 10_000);
    const t0 = Date.now();
    expect(await r.fleet.declinePrompt('otp-no')).toBe('failed');
    expect(Date.now() - t0).toBeLessThan(5_000);
    const h = r.fleet.snapshot().hosts[0]!;
    expect(h.lastError).toMatchObject({ code: 'SSH_AUTH_FAILED', message: expect.stringMatching(/Verification code:" and the operator declined to answer/) });
    expect(h.credentialPrompt ?? null).toBeNull();
    await expect(r.fleet.declinePrompt('otp-no')).rejects.toMatchObject({ code: 'SSH_NO_PROMPT' });
  }, 30_000);

  it('an unanswered question expires with a clear error', async () => {
    const helper = new OpenSshHelperServer(join(dir, 'c2'));
    const cfg = ConfigSchema.parse({ hosts: [target('otp2')] }).hosts[0]!;
    const s = new OpenSshSession(cfg, { controlDir: join(dir, 'c2'), helper, probe: new OpenSshProbe(), services: { trustStore: new MemoryTrustStore() }, promptWaitMs: 600 });
    try {
      await expect(s.connect()).rejects.toMatchObject({ code: 'SSH_AUTH_FAILED', message: expect.stringMatching(/asked "\(ops@127\.0\.0\.1\) Verification code:" and nobody answered within 1 s/) });
      expect(s.pendingPrompt).toBeNull();
      expect(s.answerPrompt('late')).toBe(false);
    } finally {
      await s.dispose();
      await helper.dispose();
    }
  }, 20_000);
});
