// One way to run Debian's OpenSSH sshd under a test: the same sshd_config
// (key-only root login, forwarding on, a session home of its own), started in
// the foreground and ready when it says "Server listening". On loopback here;
// in a network namespace through netns-sshd.ts, which uses the same pieces
// (issue #28 item 7: three tests wrote the config and the start by hand).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, sessionHomeLine } from './ssh-tools.js';

export const SSHD = existsSync('/usr/sbin/sshd') ? '/usr/sbin/sshd' : 'sshd';
/** Tests that need a real sshd skip (saying so) where openssh-server is not installed. */
export const HAVE_SSHD = existsSync('/usr/sbin/sshd');

export interface SshdOptions {
  /** Address(es) to listen on; default the namespace's veth address (netns) or 127.0.0.1 (loopback). */
  listen?: string | readonly string[];
  /** Default 22 in a namespace, a free port on loopback. */
  port?: number;
  /** Host key type for ssh-keygen; default ed25519. */
  keyType?: 'ed25519' | 'ecdsa' | 'rsa';
  /** Reuse host keys from an earlier sshd of this host (a restart), or make new ones (a reinstall). */
  hostKeyDir?: string;
  /** Default DEBUG1 (the log is a test's witness of what reached sshd); at DEBUG1 sshd also writes to a session's stderr. */
  logLevel?: 'INFO' | 'VERBOSE' | 'DEBUG1' | 'DEBUG3';
  /**
   * sshd_config lines of the test's own (TrustedUserCAKeys, HostCertificate,
   * PermitOpen, `AuthorizedKeysFile none`, `ListenAddress 127.0.0.2:2202`).
   * sshd keeps the FIRST value of a single-valued keyword, so these go before
   * the defaults and win over them; ListenAddress, HostKey and HostCertificate
   * add to the defaults. A `Match` block (and all after it) goes after the defaults.
   */
  extraConfig?: string[];
  /** Environment of the sessions beside their HOME (one SetEnv line: sshd keeps the first); not via extraConfig. */
  sessionEnv?: Record<string, string>;
}

export interface Sshd {
  proc: ChildProcess;
  port: number;
  /** The first listen address. */
  listen: string;
  dir: string;
  logFile: string;
  hostKeyFile: string;
  /** `ssh-ed25519 AAAA…` */
  hostKeyPublic: string;
  /** As `ssh-keygen -lf` prints it. */
  fingerprint: string;
  log(): string;
  /** SIGKILL to the listener and every session child: the host "crashes". */
  kill(): Promise<void>;
}

export function keygen(file: string, type: 'ed25519' | 'ecdsa' | 'rsa', extra: string[] = []): void {
  rmSync(file, { force: true });
  rmSync(`${file}.pub`, { force: true });
  execFileSync('ssh-keygen', ['-q', '-t', type, ...(type === 'rsa' ? ['-b', '2048'] : []), '-N', '', '-C', '', '-f', file, ...extra], { stdio: 'ignore' });
}

export function fingerprintOf(pubFile: string): string {
  return execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', pubFile], { encoding: 'utf8' }).split(' ')[1]!;
}

/** known_hosts line for an sshd. */
export function knownHostsLine(sshd: Pick<Sshd, 'port' | 'listen' | 'hostKeyPublic'>, name = sshd.listen): string {
  return `${sshd.port === 22 ? name : `[${name}]:${sshd.port}`} ${sshd.hostKeyPublic}\n`;
}

/** Resolves once `proc` prints a line matching `re`; rejects (with its output) if it exits or takes longer than `timeoutMs`. */
export function waitForLine(proc: ChildProcess, re: RegExp, timeoutMs: number, what: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    let buf = '';
    const t = setTimeout(() => reject(new Error(`${what} did not start within ${timeoutMs} ms: ${buf.slice(-500)}`)), timeoutMs);
    const on = (d: Buffer) => {
      buf += d.toString();
      if (re.test(buf)) {
        clearTimeout(t);
        resolvePromise();
      }
    };
    proc.stdout?.on('data', on);
    proc.stderr?.on('data', on);
    proc.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`${what} exited (${code}): ${buf.slice(-800)}`));
    });
  });
}

/** Every process below `pid` (by /proc/<pid>/stat's parent field). */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(name)]);
    } catch {
      // exited while we looked
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of parents.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

/** Where an sshd of the tests lives and what it serves; `options` adds the test's own choices. */
export interface SshdSetup {
  dir: string;
  port: number;
  listen: readonly string[];
  authorizedKeysFile: string;
  options: SshdOptions;
  /** Prefix of the command line: `ip netns exec <ns>` in a namespace, nothing on loopback. */
  launcher?: string[];
  what: string;
}

/** Writes the config, makes (or reuses) the host key, starts sshd in the foreground and waits for it to listen. */
export async function launchSshd(setup: SshdSetup): Promise<Sshd> {
  const { dir, port, listen, options } = setup;
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  mkdirSync(dir, { recursive: true });
  const keyType = options.keyType ?? 'ed25519';
  const hostKeyFile = join(options.hostKeyDir ?? dir, `ssh_host_${keyType}_key`);
  if (!existsSync(hostKeyFile)) keygen(hostKeyFile, keyType);
  const conf = join(dir, 'sshd_config');
  writeFileSync(conf, sshdConfig(setup, hostKeyFile));
  const [command, ...prefix] = [...(setup.launcher ?? []), SSHD];
  const proc = spawn(command!, [...prefix, '-D', '-e', '-f', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: string[] = [];
  proc.stdout!.on('data', (d: Buffer) => chunks.push(d.toString()));
  proc.stderr!.on('data', (d: Buffer) => chunks.push(d.toString()));
  try {
    await waitForLine(proc, /Server listening on/, 10_000, setup.what);
  } catch (err) {
    proc.kill('SIGKILL');
    throw err;
  }
  return {
    proc,
    port,
    listen: listen[0]!,
    dir,
    logFile: join(dir, 'sshd.log'),
    hostKeyFile,
    hostKeyPublic: readFileSync(`${hostKeyFile}.pub`, 'utf8').trim().split(/\s+/).slice(0, 2).join(' '),
    fingerprint: fingerprintOf(`${hostKeyFile}.pub`),
    log: () => chunks.join(''),
    async kill() {
      // This sshd's listener and every session child it forked, like a crash (other sshds live on).
      for (const pid of [proc.pid!, ...descendants(proc.pid!)]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      if (proc.exitCode === null && proc.signalCode === null) await new Promise((r) => proc.once('exit', r));
    },
  };
}

function sshdConfig(setup: SshdSetup, hostKeyFile: string): string {
  const { options } = setup;
  const extra = options.extraConfig ?? [];
  const matchAt = extra.findIndex((l) => /^\s*Match\s/i.test(l));
  const [extraHead, extraMatch] = matchAt < 0 ? [extra, []] : [extra.slice(0, matchAt), extra.slice(matchAt)];
  return [
    ...extraHead,
    `Port ${setup.port}`,
    ...setup.listen.map((a) => `ListenAddress ${a}`),
    `HostKey ${hostKeyFile}`,
    `PidFile ${join(setup.dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${setup.authorizedKeysFile}`,
    'StrictModes no',
    'UsePAM no',
    'PermitRootLogin prohibit-password',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'AllowTcpForwarding yes',
    'AllowAgentForwarding no',
    'X11Forwarding no',
    'PrintMotd no',
    'UseDNS no',
    'MaxStartups 200',
    'MaxSessions 50',
    `LogLevel ${options.logLevel ?? 'DEBUG1'}`,
    sessionHomeLine(setup.dir, options.sessionEnv),
    ...extraMatch,
    '',
  ].join('\n');
}

export interface LoopbackSshdOptions extends SshdOptions {
  /** A folder the sshd may write in (its config, host key, pid file and sessions' home go in a new folder below it). */
  parentDir: string;
  /** Public key files whose keys may log in as root. */
  authorizedKeyFiles: readonly string[];
}

/** A real sshd on loopback (no namespace, no root-only networking), logging in as the user running the test. */
export async function startLoopbackSshd(options: LoopbackSshdOptions): Promise<Sshd> {
  const dir = mkdtempSync(join(options.parentDir, 'sshd-'));
  const authorizedKeysFile = join(dir, 'authorized_keys');
  writeFileSync(authorizedKeysFile, options.authorizedKeyFiles.map((f) => readFileSync(f, 'utf8').trimEnd() + '\n').join(''), { mode: 0o600 });
  const listen = typeof options.listen === 'string' ? [options.listen] : (options.listen ?? ['127.0.0.1']);
  const port = options.port ?? (await freePort());
  return launchSshd({ dir, port, listen, authorizedKeysFile, options, what: `sshd on ${listen.join(', ')}:${port}` });
}
