// Small things the SSH tests share: whether this machine has the OpenSSH
// client (tests that need it skip, saying so, where it is absent), a free
// loopback port for a server the test starts, a home for the sessions of
// a test sshd, and an ssh-agent holding a test's keys.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { until } from './until.js';

export const HAVE_OPENSSH = (() => {
  try {
    execFileSync('ssh', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** A port free on 127.0.0.1 right now (the caller binds it next). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const p = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return p;
}

/**
 * The sshd_config line that gives the test sshd's sessions a home of their
 * own under `parent`. The test sshds run as root on the test machine, so a
 * session would otherwise source the machine's /root/.bashrc before every
 * exec (on these machines: `pyenv init`, which waits up to 60 s on a lock
 * another shell holds, and so turns a 10 ms command into an exec timeout).
 * A GPU host's account has a home of its own; this gives the sessions one.
 * `env` adds variables to the same line: sshd keeps the first SetEnv line it
 * reads, so every variable of a session goes on this one.
 */
export function sessionHomeLine(parent: string, env: Record<string, string> = {}): string {
  const home = join(parent, 'home');
  mkdirSync(home, { recursive: true });
  return ['SetEnv', `HOME=${home}`, ...Object.entries(env).map(([k, v]) => `${k}=${v}`)].join(' ');
}

export interface SshAgent {
  sock: string;
  kill(): void;
}

/** OpenSSH's ssh-agent listening on `sock`, holding `keyFiles` (unencrypted); ready when its socket exists (2 s). */
export async function startSshAgent(sock: string, keyFiles: readonly string[]): Promise<SshAgent> {
  const agent = spawn('ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' });
  try {
    await until(() => existsSync(sock), { timeoutMs: 2_000, what: `ssh-agent's socket ${sock}` });
    for (const key of keyFiles) execFileSync('ssh-add', ['-q', key], { env: { ...process.env, SSH_AUTH_SOCK: sock }, stdio: 'ignore' });
  } catch (err) {
    agent.kill();
    throw err;
  }
  return { sock, kill: () => void agent.kill() };
}
