// A real OpenSSH sshd as a separate "GPU host": a network namespace the test
// creates, joined to the test's namespace by a veth pair with private /30
// addresses, sshd listening on the namespace's side, and a small HTTP server
// bound to 127.0.0.1 INSIDE the namespace standing in for the model port
// (reachable only through SSH). Namespaces, links and processes carry a
// per-process prefix and are removed in dispose() and by preClean() on the next run.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ROOT } from './imports.js';
import { sessionHomeLine } from './ssh-tools.js';

export const NS_PREFIX = 'gcssh';
const SSHD = existsSync('/usr/sbin/sshd') ? '/usr/sbin/sshd' : 'sshd';
const MODEL_SERVER = resolve(ROOT, 'test/fixtures/ssh/model-server.mjs');

function ip(...args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Removes namespaces and veth links left by test processes that are gone. */
export function preClean(): void {
  const names = ip('netns', 'list')
    .split('\n')
    .map((l) => l.split(' ')[0]!)
    .filter((n) => n.startsWith(`${NS_PREFIX}-`));
  for (const ns of names) {
    const pid = Number(ns.split('-')[1]);
    if (Number.isFinite(pid) && alive(pid) && pid !== process.pid) continue;
    killNamespacePids(ns);
    try {
      ip('netns', 'del', ns);
    } catch {
      // already gone
    }
  }
  for (const line of ip('-o', 'link', 'show').split('\n')) {
    const m = /^\d+: (gcv(\d+)[a-z])[@:]/.exec(line);
    if (m && !(alive(Number(m[2])) && Number(m[2]) !== process.pid)) {
      try {
        ip('link', 'del', m[1]!);
      } catch {
        // gone with its namespace
      }
    }
  }
}

function killNamespacePids(ns: string): void {
  let pids: number[] = [];
  try {
    pids = ip('netns', 'pids', ns).split('\n').filter(Boolean).map(Number);
  } catch {
    return;
  }
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // exited
    }
  }
}

/** Every process below `pid` (by /proc/<pid>/stat's parent field). */
function descendants(pid: number): number[] {
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

let counter = 0;

export interface SshdOptions {
  /** Address inside the namespace; default the namespace's veth address. */
  listen?: string;
  port?: number;
  /** Host key type for ssh-keygen; default ed25519. */
  keyType?: 'ed25519' | 'ecdsa' | 'rsa';
  /** Reuse host keys from an earlier sshd of this host (a restart), or make new ones (a reinstall). */
  hostKeyDir?: string;
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

export interface NetnsHost {
  ns: string;
  /** Address of the namespace's end (where sshd listens). */
  addr: string;
  /** Address of our end. */
  peerAddr: string;
  dir: string;
  /** Private key (OpenSSH format, ed25519) whose public half is authorized for root. */
  clientKey: string;
  authorize(pubKeyLine: string): void;
  startSshd(options?: SshdOptions): Promise<Sshd>;
  startModelServer(port?: number): Promise<ChildProcess>;
  linkDown(): void;
  linkUp(): void;
  /** known_hosts text for `host`/`port` with `publicKey`. */
  dispose(): Promise<void>;
}

function waitForLine(proc: ChildProcess, re: RegExp, timeoutMs: number, what: string): Promise<void> {
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

async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function keygen(file: string, type: 'ed25519' | 'ecdsa' | 'rsa', extra: string[] = []): void {
  rmSync(file, { force: true });
  rmSync(`${file}.pub`, { force: true });
  execFileSync('ssh-keygen', ['-q', '-t', type, ...(type === 'rsa' ? ['-b', '2048'] : []), '-N', '', '-C', '', '-f', file, ...extra], { stdio: 'ignore' });
}

export function fingerprintOf(pubFile: string): string {
  return execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', pubFile], { encoding: 'utf8' }).split(' ')[1]!;
}

/**
 * Creates the namespace. Fails loudly (never skips) when it cannot: CI runs as
 * root on Debian 12 with iproute2, so a failure here is a broken machine.
 */
export async function createNetnsHost(): Promise<NetnsHost> {
  const n = counter++;
  const ns = `${NS_PREFIX}-${process.pid}-${n}`;
  const suffix = String.fromCharCode(97 + (n % 26));
  const vethOut = `gcv${process.pid % 100000}${suffix}`;
  const vethIn = `gcp${process.pid % 100000}${suffix}`;
  // A /30 no other test process holds right now (two workers may run side by side).
  const inUse = ip('-o', '-4', 'addr', 'show');
  let third = 100 + (process.pid % 150);
  const fourth = (n % 60) * 4;
  while (inUse.includes(`10.213.${third}.${fourth + 1}/30`)) third = 100 + ((third - 99) % 150);
  const peerAddr = `10.213.${third}.${fourth + 1}`;
  const addr = `10.213.${third}.${fourth + 2}`;
  try {
    ip('netns', 'add', ns);
  } catch (err) {
    throw new Error(`cannot create network namespace ${ns} (needs root / CAP_NET_ADMIN): ${(err as { stderr?: string }).stderr ?? (err as Error).message}`);
  }
  const procs: ChildProcess[] = [];
  const dir = mkdtempSync(join(tmpdir(), `${ns}-`));
  try {
    ip('link', 'add', vethOut, 'type', 'veth', 'peer', 'name', vethIn);
    ip('link', 'set', vethIn, 'netns', ns);
    ip('addr', 'add', `${peerAddr}/30`, 'dev', vethOut);
    ip('link', 'set', vethOut, 'up');
    ip('-n', ns, 'addr', 'add', `${addr}/30`, 'dev', vethIn);
    ip('-n', ns, 'link', 'set', vethIn, 'up');
    ip('-n', ns, 'link', 'set', 'lo', 'up');
  } catch (err) {
    try {
      ip('netns', 'del', ns);
      ip('link', 'del', vethOut);
    } catch {
      // partial setup
    }
    throw err;
  }
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const clientKey = join(dir, 'client_ed25519');
  keygen(clientKey, 'ed25519');
  const authorizedKeys = join(dir, 'authorized_keys');
  writeFileSync(authorizedKeys, readFileSync(`${clientKey}.pub`), { mode: 0o600 });
  let sshdCount = 0;

  const host: NetnsHost = {
    ns,
    addr,
    peerAddr,
    dir,
    clientKey,
    authorize(line) {
      writeFileSync(authorizedKeys, `${readFileSync(authorizedKeys, 'utf8').trimEnd()}\n${line.trim()}\n`, { mode: 0o600 });
    },
    async startSshd(options = {}) {
      const id = sshdCount++;
      const sdir = join(dir, `sshd${id}`);
      mkdirSync(sdir, { recursive: true });
      const keyType = options.keyType ?? 'ed25519';
      const keyDir = options.hostKeyDir ?? sdir;
      const hostKeyFile = join(keyDir, `ssh_host_${keyType}_key`);
      if (!existsSync(hostKeyFile)) keygen(hostKeyFile, keyType);
      const listen = options.listen ?? addr;
      const port = options.port ?? 22;
      const logFile = join(sdir, 'sshd.log');
      const conf = join(sdir, 'sshd_config');
      const extra = options.extraConfig ?? [];
      const matchAt = extra.findIndex((l) => /^\s*Match\s/i.test(l));
      const [extraHead, extraMatch] = matchAt < 0 ? [extra, []] : [extra.slice(0, matchAt), extra.slice(matchAt)];
      writeFileSync(
        conf,
        [
          ...extraHead,
          `Port ${port}`,
          `ListenAddress ${listen}`,
          `HostKey ${hostKeyFile}`,
          `PidFile ${join(sdir, 'sshd.pid')}`,
          `AuthorizedKeysFile ${authorizedKeys}`,
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
          sessionHomeLine(sdir, options.sessionEnv),
          ...extraMatch,
          '',
        ].join('\n'),
      );
      const proc = spawn('ip', ['netns', 'exec', ns, SSHD, '-D', '-e', '-f', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
      procs.push(proc);
      const chunks: string[] = [];
      proc.stdout!.on('data', (d: Buffer) => chunks.push(d.toString()));
      proc.stderr!.on('data', (d: Buffer) => chunks.push(d.toString()));
      await waitForLine(proc, /Server listening on/, 10_000, `sshd in ${ns}`);
      const pub = readFileSync(`${hostKeyFile}.pub`, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
      return {
        proc,
        port,
        listen,
        dir: sdir,
        logFile,
        hostKeyFile,
        hostKeyPublic: pub,
        fingerprint: fingerprintOf(`${hostKeyFile}.pub`),
        log: () => chunks.join(''),
        async kill() {
          // This sshd's listener and every session child it forked, like a crash (other sshds in the namespace live on).
          const victims = [proc.pid!, ...descendants(proc.pid!)];
          for (const pid of victims) {
            try {
              process.kill(pid, 'SIGKILL');
            } catch {
              // gone
            }
          }
          if (proc.exitCode === null && proc.signalCode === null) await new Promise((r) => proc.once('exit', r));
        },
      };
    },
    async startModelServer(port = 8000) {
      const proc = spawn('ip', ['netns', 'exec', ns, process.execPath, MODEL_SERVER, String(port), '127.0.0.1'], { stdio: ['ignore', 'pipe', 'pipe'] });
      procs.push(proc);
      await waitForLine(proc, /listening/, 10_000, `model server in ${ns}`);
      return proc;
    },
    linkDown() {
      ip('link', 'set', vethOut, 'down');
    },
    linkUp() {
      ip('link', 'set', vethOut, 'up');
    },
    async dispose() {
      killNamespacePids(ns);
      for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
      await Promise.all(procs.map((p) => (p.exitCode === null && p.signalCode === null ? new Promise((r) => p.once('exit', r)) : null)));
      try {
        ip('netns', 'del', ns);
      } catch {
        // gone
      }
      try {
        ip('link', 'del', vethOut);
      } catch {
        // removed with the namespace
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  void waitFor;
  return host;
}

/** known_hosts line for an sshd. */
export function knownHostsLine(sshd: Sshd, name = sshd.listen): string {
  return `${sshd.port === 22 ? name : `[${name}]:${sshd.port}`} ${sshd.hostKeyPublic}\n`;
}
