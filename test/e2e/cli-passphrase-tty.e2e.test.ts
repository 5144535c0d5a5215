import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, CLI, runCliProcess, startConsole, type RunningConsole } from '../helpers/console-process.js';
import { HAVE_SSHD, knownHostsLine, startLoopbackSshd, type Sshd } from '../helpers/sshd.js';

// `gpu-console hosts connect LABEL` at a terminal: a host whose key is
// encrypted is unlocked by asking on the TTY (no echo) and handing the
// passphrase to the running console's memory, on either transport. The
// terminal is a real pty (util-linux `script`), the host a real sshd on
// loopback. Without a terminal (a script, CI) nothing is asked.

const HAVE = HAVE_SSHD && existsSync('/usr/bin/script');
const PASS = 'tty horse battery';

const dir = mkdtempSync(join(tmpdir(), 'gc-tty-'));
let sshd: Sshd | null = null;
let port = 0;
let consoleProc: RunningConsole | null = null;

beforeAll(async () => {
  if (!HAVE) return;
  // One key per host: the console keeps a typed passphrase per key file, so a shared key would be asked once.
  for (const t of ['builtin', 'openssh']) execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', PASS, '-f', join(dir, `enc-${t}`)]);
  sshd = await startLoopbackSshd({ parentDir: dir, authorizedKeyFiles: ['builtin', 'openssh'].map((t) => join(dir, `enc-${t}.pub`)), logLevel: 'INFO' });
  port = sshd.port;
  writeFileSync(join(dir, 'known_hosts'), knownHostsLine(sshd));
  const host = (label: string, transport: string) =>
    `  - label: ${label}\n    ssh: { host: 127.0.0.1, port: ${port}, user: root, identityFile: ${join(dir, `enc-${transport}`)}, transport: ${transport} }\n    knownHostsFile: ${join(dir, 'known_hosts')}\n    services: []\n`;
  writeFileSync(join(dir, 'config.yaml'), `hosts:\n${host('enc-builtin', 'builtin')}${host('enc-openssh', 'openssh')}`);
}, 30_000);

afterAll(async () => {
  await consoleProc?.stop();
  await sshd?.kill();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI on a pty; types `answer` once the prompt shows. */
function onTerminal(args: string[], answer: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const command = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const child = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let typed = false;
    const onData = (d: Buffer) => {
      out += d.toString();
      if (!typed && /Passphrase for .*: $/.test(out)) {
        typed = true;
        child.stdin!.write(`${answer}\r`);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe.skipIf(!HAVE)('gpu-console hosts connect on a terminal', () => {
  it('asks for the passphrase without echo and connects, on either transport', async () => {
    assertBuilt();
    const dataDir = join(dir, 'data');
    consoleProc = await startConsole(['--config', join(dir, 'config.yaml'), '--data-dir', dataDir, '--ui-port', '0', '--proxy-port', '0']);
    for (const label of ['enc-builtin', 'enc-openssh']) {
      const r = await onTerminal(['hosts', 'connect', label, '--data-dir', dataDir], PASS);
      expect(r.out).toMatch(new RegExp(`Passphrase for ${join(dir, label).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(host ${label}\\): `));
      expect(r.out).toContain(`${label}: connected`);
      // Typed, not shown: the terminal never printed it.
      expect(r.out).not.toContain(PASS);
      expect(r.code).toBe(0);
    }
    const status = await runCliProcess(['status', '--data-dir', dataDir]);
    expect(status.stdout).toMatch(/^enc-builtin {2}connected .* via builtin$/m);
    expect(status.stdout).toMatch(/^enc-openssh {2}connected .* via openssh$/m);
  }, 60_000);

  it('without a terminal nothing is asked (the console still holds what was typed above, in memory)', async () => {
    const dataDir = join(dir, 'data');
    await runCliProcess(['hosts', 'disconnect', 'enc-builtin', '--data-dir', dataDir]);
    const r = await runCliProcess(['hosts', 'connect', 'enc-builtin', '--data-dir', dataDir]);
    // The console still holds the passphrase typed above (memory only, until it exits): it connects.
    expect(r.stdout).toMatch(/enc-builtin: (connected|connecting)/);
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/Passphrase for/);
  }, 30_000);
});
