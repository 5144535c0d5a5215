// A real OpenSSH sshd as a separate "GPU host": a network namespace the test
// creates, joined to the test's namespace by a veth pair with private /30
// addresses, sshd listening on the namespace's side, and a small HTTP server
// bound to 127.0.0.1 INSIDE the namespace standing in for the model port
// (reachable only through SSH). Namespaces, links and processes carry a
// per-process prefix and are removed in dispose() and by preClean() on the next run.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ROOT } from './imports.js';
import { keygen, launchSshd, waitForLine, type Sshd, type SshdOptions } from './sshd.js';

export { fingerprintOf, keygen, knownHostsLine, type Sshd, type SshdOptions } from './sshd.js';

export const NS_PREFIX = 'gcssh';
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

let counter = 0;

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
  dispose(): Promise<void>;
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
      const sdir = join(dir, `sshd${sshdCount++}`);
      const listen = typeof options.listen === 'string' ? [options.listen] : (options.listen ?? [addr]);
      const sshd = await launchSshd({ dir: sdir, port: options.port ?? 22, listen, authorizedKeysFile: authorizedKeys, options, launcher: ['ip', 'netns', 'exec', ns], what: `sshd in ${ns}` });
      procs.push(sshd.proc);
      return sshd;
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
  return host;
}
