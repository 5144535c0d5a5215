// The world test/bench/soak.ts runs in: a private copy of the build, the demo
// fleet as its own process, a real OpenSSH sshd in a network namespace with a
// model server behind it, the console (`serve --config`) as a child, and its
// data folder on a tmpfs of its own (so that a "full disk" fills that folder
// only). Everything here is started by the soak and ended by dispose().
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, createWriteStream, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, type WriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { ROOT } from '../helpers/imports.js';
import { createNetnsHost, knownHostsLine, preClean, type NetnsHost, type Sshd } from '../helpers/netns-sshd.js';
import { processesNaming } from './soak-probe.js';

const HEAP_PROBE = join(dirname(fileURLToPath(import.meta.url)), 'soak-heap-probe.mjs');
export const NETNS_LABEL = 'soak-netns';
export const NETNS_MODEL = 'test-model';

/** Hold budgets the soak's console runs with (ms): written into its config, and what "held past budget" is measured against. */
export const HOLD_BUDGET_MS = { interactive: 45_000, system: 10_000, batch: 120_000 } as const;

/** Copies bin/, out/ and package.json to a private folder (node_modules linked), so rebuilds of the checkout do not change a running soak. */
export function snapshotBuild(into: string): string {
  for (const f of ['out/main/cli.js', 'out/renderer/index.html']) readFileSync(join(ROOT, f));
  mkdirSync(into, { recursive: true });
  for (const p of ['bin', 'out', 'package.json']) cpSync(join(ROOT, p), join(into, p), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(into, 'node_modules'));
  return into;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Waits for a line matching `re` on a child's stdout or stderr; rejects when it exits first or the deadline passes. */
export function waitForOutput(child: ChildProcess, re: RegExp, timeoutMs: number, what: string, sink?: WriteStream): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => done(new Error(`${what}: no ${re} within ${timeoutMs} ms; output:\n${text.slice(-4000)}`)), timeoutMs);
    const onData = (c: Buffer) => {
      sink?.write(c);
      text += c.toString('utf8');
      const m = text.match(re);
      if (m) done(null, m);
    };
    const onExit = (code: number | null) => done(new Error(`${what} exited (${code}) before ${re}; output:\n${text.slice(-4000)}`));
    const done = (err: Error | null, m?: RegExpMatchArray) => {
      clearTimeout(timer);
      child.off('exit', onExit);
      // From here the caller pipes the output on: this listener must not copy it twice or keep it all.
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      if (err) reject(err);
      else resolve(m!);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
  });
}

export interface ConsoleRun {
  child: ChildProcess;
  pid: number;
  ui: string;
  proxy: string;
  startedAtMs: number;
  readyMs: number;
  /** Resolves with the exit code (or the signal's name) and when it came. */
  exited: Promise<{ code: number | string; atMs: number }>;
  log: string;
}

/** What the soak controls: the build, the fleet and netns host, the console's start/stop, and the data folder. */
export class SoakWorld {
  readonly dataDir: string;
  readonly heapFile: string;
  fleetProc: ChildProcess | null = null;
  ns: NetnsHost | null = null;
  sshd: Sshd | null = null;
  /** The host keys the known_hosts file holds (a restart reuses them; the host-key fault swaps them). */
  hostKeyDir = '';
  modelServer: ChildProcess | null = null;
  console: ConsoleRun | null = null;
  consoleRuns = 0;
  proxyPort = 0;
  tokens = { interactive: '', batch: '' };
  demoModels: string[] = [];
  private tmpfsMounted = false;

  constructor(
    readonly work: string,
    readonly buildRoot: string,
    readonly opts: { fleetTraffic: boolean; netnsTransport: 'builtin' | 'openssh'; diskMiB: number },
  ) {
    this.dataDir = join(work, 'data');
    this.heapFile = join(work, 'console-heap.json');
  }

  private cli(): string {
    return join(this.buildRoot, 'bin', 'gpu-console.js');
  }

  /** The data folder on a tmpfs of its own, so the full-disk fault fills it alone; false (and a plain folder) where mounting fails. */
  mountDataTmpfs(): boolean {
    mkdirSync(this.dataDir, { recursive: true, mode: 0o700 });
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${this.opts.diskMiB}m,mode=0700`, 'soak-data', this.dataDir], { stdio: 'pipe' });
      this.tmpfsMounted = true;
    } catch {
      this.tmpfsMounted = false;
    }
    return this.tmpfsMounted;
  }

  get hasTmpfs(): boolean {
    return this.tmpfsMounted;
  }

  async startFleet(): Promise<string> {
    const file = join(this.work, 'fleet.yaml');
    const args = [this.cli(), 'demo-fleet', '--write-config', file, '--data-dir', join(this.work, 'fleet-data'), ...(this.opts.fleetTraffic ? ['--traffic'] : [])];
    this.fleetProc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const sink = createWriteStream(join(this.work, 'demo-fleet.log'));
    await waitForOutput(this.fleetProc, /demo fleet ready/, 60_000, 'demo-fleet', sink);
    this.fleetProc.stdout!.pipe(sink);
    this.fleetProc.stderr!.pipe(sink);
    return file;
  }

  async startNetns(): Promise<void> {
    preClean();
    this.ns = await createNetnsHost();
    this.sshd = await this.ns.startSshd({ logLevel: 'INFO' });
    this.hostKeyDir = dirname(this.sshd.hostKeyFile);
    writeFileSync(join(this.work, 'known_hosts'), knownHostsLine(this.sshd));
    await this.startModelServer();
  }

  async startModelServer(): Promise<void> {
    this.modelServer = await this.ns!.startModelServer(8000);
  }

  /** sshd again with the known host keys (a restart), or with new ones (a reinstall: the console must refuse it). */
  async restartSshd(newKeys = false): Promise<void> {
    await this.sshd?.kill();
    this.sshd = await this.ns!.startSshd(newKeys ? { logLevel: 'INFO' } : { logLevel: 'INFO', hostKeyDir: this.hostKeyDir });
  }

  /** The console's config: the demo fleet's hosts, the netns host, and the hold budgets the soak measures against. */
  writeConsoleConfig(fleetFile: string): string {
    const config = parse(readFileSync(fleetFile, 'utf8')) as { hosts: Array<{ services?: Array<{ model?: string }> }>; proxy?: Record<string, unknown> };
    this.demoModels = [...new Set(config.hosts.flatMap((h) => (h.services ?? []).map((s) => s.model).filter((m): m is string => typeof m === 'string')))];
    config.hosts.push({
      label: NETNS_LABEL,
      ssh: { host: this.ns!.addr, user: 'root', identityFile: this.ns!.clientKey, keepaliveIntervalMs: 1000, transport: this.opts.netnsTransport },
      knownHostsFile: join(this.work, 'known_hosts'),
      services: [{ id: 'm', kind: 'vllm', remotePort: 8000, model: NETNS_MODEL }],
    } as never);
    config.proxy = { ...(config.proxy ?? {}), holdBudgetMs: { ...HOLD_BUDGET_MS } };
    const file = join(this.work, 'console.yaml');
    writeFileSync(file, stringify(config), { mode: 0o600 });
    return file;
  }

  /** One token per class, issued by the console's own CLI (an offline core on the data folder) before it first starts. */
  issueTokens(): void {
    const issue = (name: string, cls: string) =>
      execFileSync(process.execPath, [this.cli(), 'tokens', 'create', name, '--max-class', cls, '--data-dir', this.dataDir], { encoding: 'utf8' }).trim();
    this.tokens = { interactive: issue('soak-interactive', 'interactive'), batch: issue('soak-batch', 'batch') };
  }

  async startConsole(configFile: string): Promise<ConsoleRun> {
    if (this.proxyPort === 0) this.proxyPort = await freePort();
    const n = this.consoleRuns++;
    const log = join(this.work, `console-${n}.log`);
    const sink = createWriteStream(log);
    const startedAtMs = performance.now();
    const args = ['--import', HEAP_PROBE, this.cli(), 'serve', '--config', configFile, '--data-dir', this.dataDir, '--ui-port', '0', '--proxy-port', String(this.proxyPort), '--print-url', '--log-level', 'info'];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SOAK_HEAP_FILE: this.heapFile } });
    const exited = new Promise<{ code: number | string; atMs: number }>((resolve) => child.once('exit', (code, signal) => resolve({ code: code ?? signal ?? '?', atMs: performance.now() })));
    const m = await waitForOutput(child, /GPU Console ready ui=(\S+) proxy=(\S+)/, 90_000, `console run ${n}`, sink);
    child.stdout!.pipe(sink);
    child.stderr!.pipe(sink);
    this.console = { child, pid: child.pid!, ui: m[1]!, proxy: m[2]!, startedAtMs, readyMs: performance.now() - startedAtMs, exited, log };
    return this.console;
  }

  /** SIGTERM; the time until the process is gone, its exit code, and the console's own shutdown lines. */
  async stopConsole(): Promise<{ drainMs: number; code: number | string; lines: string[]; leftBehind: string[] }> {
    const run = this.console!;
    const t0 = performance.now();
    run.child.kill('SIGTERM');
    const { code, atMs } = await run.exited;
    this.console = null;
    await new Promise((r) => setTimeout(r, 200));
    const text = readFileSync(run.log, 'utf8');
    // The console's own account of its stop (src-main/cli/shutdown.ts): the deadline, what it waited for, how long it took.
    const from = text.lastIndexOf('gpu-console: SIGTERM');
    const lines = (from >= 0 ? text.slice(from) : '').split('\n').filter((l) => l.startsWith('gpu-console: ')).slice(0, 12);
    // What a stopped console must not leave running: its ssh masters and shells name its data folder.
    const leftBehind = processesNaming(this.dataDir).map((p) => `${p.pid} ${p.args.slice(0, 120)}`);
    return { drainMs: atMs - t0, code, lines, leftBehind };
  }

  /** The console's own CLI against the stopped console's data folder. */
  cliRun(args: string[]): { code: number; out: string } {
    try {
      return { code: 0, out: execFileSync(process.execPath, [this.cli(), ...args, '--data-dir', this.dataDir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) };
    } catch (err) {
      const e = err as { status?: number; stdout?: string; stderr?: string };
      return { code: e.status ?? 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
    }
  }

  async dispose(keepWork: boolean): Promise<void> {
    if (this.console) await this.stopConsole().catch(() => undefined);
    if (this.fleetProc && this.fleetProc.exitCode === null) {
      const gone = new Promise((r) => this.fleetProc!.once('exit', r));
      this.fleetProc.kill('SIGTERM');
      await Promise.race([gone, new Promise((r) => setTimeout(r, 10_000))]);
      this.fleetProc.kill('SIGKILL');
    }
    await this.ns?.dispose();
    if (this.tmpfsMounted) {
      if (keepWork) cpSync(this.dataDir, join(this.work, 'data-kept'), { recursive: true });
      try {
        execFileSync('umount', [this.dataDir], { stdio: 'pipe' });
      } catch {
        execFileSync('umount', ['-l', this.dataDir], { stdio: 'pipe' });
      }
    }
    if (!keepWork) rmSync(this.work, { recursive: true, force: true });
  }
}
