// Benchmark (prints figures; not a test). Through the same OpenSSH sshd in a
// network namespace, GPU Console's forward (a FleetService tunnel with its
// end-to-end probe, status polling, keepalive and reconnect logic all live)
// against OpenSSH's own `ssh -L`, in the same run, for each console transport:
//   console-builtin  ssh2 in the console process (local-forward.ts), on the
//                    tunnel's private socket (what the console's proxy uses);
//   console-openssh  a host with ssh.transport 'openssh' (the system ssh), where
//                    the console has that transport (else the row says why not):
//                    the ControlMaster holds the private socket;
//   gate-builtin, gate-openssh  the same tunnels' public ports (127.0.0.1, what
//                    operators and apps use): the console's HTTP gate, which
//                    refuses engine admin paths, in front of the private socket.
//   console-openssh-1shot  the openssh transport with its commands as an `ssh`
//                    process each (no command shell on the master), so the shell
//                    session's cost on a forwarded request is read in the same run
//                    (--no-one-shot-row leaves it out).
// Requests go to /v1/small and /v1/blob (a path the gate passes) on every row.
// Figures:
//   - latency of a small HTTP request (p50/p99, concurrency 1 and 16), absolute
//     and added (through-tunnel latency minus the direct path to a twin server);
//   - bulk throughput (MB/s) of one large download;
//   - ratios console / `ssh -L` beside the targets (latency: lower is better;
//     throughput: higher).
// The bench host answers the console's GPU query once a second (a stand-in
// nvidia-smi, test/fixtures/ssh/fake-nvidia-smi.sh), so the console rows pay
// for their own commands as on a GPU host; `status` says whether GPUs were read.
// Every path is warmed first (untimed) so the figures are steady state, not
// the JIT's first thousand requests. The paths take turns in blocks of 100 × c
// requests, each block in a shuffled order, so outside load on the machine lands on all of them alike;
// percentiles are over all requests of a path. Requests over 30 ms (a delayed
// ACK behind sshd's Nagle at the end of a burst) are counted beside them.
// Also printed: the CPU each forwarding process spends per request (user/sys,
// from /proc; on openssh rows the console and its ControlMaster together); a bare ssh2 forward (ssh2 and pipe, nothing of the console's):
// what the console adds beyond ssh2; and a plain Node TCP relay (no SSH, no
// sshd hop) to the direct server: the floor of any forward written in Node.
// The console runs from an esbuild bundle with the shipped V8 flags.
//   npx tsx test/bench/ssh-forward.ts [--requests N] [--mb N] [--rounds N] [--warmup N]
//       [--concurrency 1,16] [--trace] [--poll-ms N] [--cipher LIST]
//       [--console-node-flags="FLAGS"] [--prof DIR] [--no-one-shot-row]
// --trace lays each console row's slowest requests (at or above its p99) beside
// what the console process did meanwhile (GC pauses, the fleet's own execs and
// HTTP scrapes/probes, event-loop delay), with the base rate over all requests,
// and at c=1 splits requests into client → channel write, the SSH round trip,
// and answer → client. --poll-ms (0: no poll rounds), --cipher (ssh2's cipher
// list) and --console-node-flags (e.g. --trace-gc) are experiments; the
// defaults are what the app runs. --prof DIR writes CPU profiles of the console
// rows and the bare ssh2 forward. BENCH_BARE_FLAGS: node flags for the bare one.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { createNetnsHost, knownHostsLine, preClean } from '../helpers/netns-sshd.js';
import { childEntry, type ChildEntry } from './lib/children.js';
import { median, pct, printVerdicts, verdict, type Verdict } from './lib/figures.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '3000' },
    mb: { type: 'string', default: '256' },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '2000' },
    trace: { type: 'boolean', default: false },
    'poll-ms': { type: 'string', default: '1000' },
    cipher: { type: 'string' },
    'console-node-flags': { type: 'string', default: '' },
    concurrency: { type: 'string', default: '1,16' },
    prof: { type: 'string' },
    'one-shot-row': { type: 'boolean', default: true },
  },
});
const REQUESTS = Number(values.requests);
const BULK_BYTES = Number(values.mb) * 1024 * 1024;
const ROUNDS = Number(values.rounds);
const WARMUP = Number(values.warmup);
const TRACE = values.trace;
const SHIPPED_V8_FLAGS = ['--no-allocation-site-pretenuring', '--heap-growing-percent=30'];
/**
 * Requests of one path in a row before the next path's turn, per unit of concurrency. Each block ends with
 * a drain (concurrency falling to 0), and a drain can leave a small answer held by Nagle on sshd's side
 * (sshd sets TCP_NODELAY only for interactive sessions, never for a forwarding-only connection) until the
 * client's delayed ACK, ~40 ms: with blocks of 100 at c=16, ssh -L's p99 was 41–44 ms in 4 runs of 5.
 * 100 × c keeps those stalls well under 1 % of requests and a block near 0.1 s at either concurrency.
 */
const BLOCK_PER_CONNECTION = 100;
/** A request this slow waited on a timer (delayed ACK), not on work: counted apart. */
const STALL_MS = 30;

/** A plain TCP relay in Node (pipe both ways, TCP_NODELAY): the least work a forward in Node can do per request. */
const RELAY = `const net = require('node:net'); const [port, host, rport] = process.argv.slice(1);
net.createServer({ noDelay: true }, (s) => { const u = net.connect({ host, port: Number(rport), noDelay: true });
  s.pipe(u); u.pipe(s); s.on('error', () => u.destroy()); u.on('error', () => s.destroy()); }).listen(Number(port), '127.0.0.1');`;

/**
 * The least a forward over ssh2 can do: one ssh2 Client (its default algorithms, TCP_NODELAY, no keepalive),
 * a listener piping each socket through its own direct-tcpip channel; no fleet, no polling, no tsx. Against it
 * the console row's extra cost is the console's (LocalForward, FleetService), not ssh2's.
 */
const BARE_SSH2 = `const net = require('node:net'); const fs = require('node:fs'); const { Client } = require('ssh2');
const [port, host, user, key, hostKey] = process.argv.slice(1); process.on('SIGTERM', () => process.exit(0));
const sock = net.connect({ host, port: 22, noDelay: true }, () => {
  const c = new Client();
  c.on('ready', () => net.createServer({ noDelay: true }, (s) => c.forwardOut('127.0.0.1', s.remotePort, '127.0.0.1', 8000, (err, ch) => {
    if (err) return s.destroy();
    s.pipe(ch); ch.pipe(s); s.on('error', () => ch.destroy()); ch.on('error', () => s.destroy()); s.on('close', () => ch.destroy());
  })).listen(Number(port), '127.0.0.1'));
  c.connect({ sock, username: user, privateKey: fs.readFileSync(key), hostVerifier: (k) => k.toString('base64') === hostKey });
});`;

/** The openssh transport's ControlMaster of a console process (its `ssh -M` child): the forwarder of that console's tunnel. */
function masterOf(consolePid: number): number | null {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ')[1] !== String(consolePid)) continue;
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').includes('-M')) return Number(d);
    } catch {
      // gone meanwhile
    }
  }
  return null;
}

/** A fixed-seed generator (mulberry32): the same block orders in every run. */
let seed = 0x5eed;
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
function shuffled<T>(xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** CPU time (user, sys) of a process in ms, from /proc (Linux, as the network namespaces are). */
function cpuMs(pid: number): [number, number] {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const tick = 1000 / 100; // USER_HZ
  return [Number(fields[11]) * tick, Number(fields[12]) * tick];
}

const epochMs = (): number => performance.timeOrigin + performance.now();

/** A keep-alive client for one path at one concurrency; its connections (and so the tunnel's channels) stay open across blocks. */
class Client {
  private readonly pool: Pool;
  constructor(base: string, private readonly concurrency: number, socketPath?: string) {
    this.pool = new Pool(base, { connections: concurrency, pipelining: 1, keepAliveTimeout: 600_000, keepAliveMaxTimeout: 600_000, ...(socketPath ? { connect: { socketPath } } : {}) });
  }
  /** `requests` requests, `concurrency` at a time; each one's [start epoch ms, duration ms]. */
  async run(requests: number): Promise<Array<[number, number]>> {
    const one = async (): Promise<[number, number]> => {
      const at = epochMs();
      const t = process.hrtime.bigint();
      const res = await this.pool.request({ path: '/v1/small', method: 'GET' });
      const body = await res.body.text();
      // A refusal (the gate's 403) or a tunnel error must not be timed as an answer.
      if (res.statusCode !== 200) throw new Error(`GET /v1/small answered ${res.statusCode}: ${body.slice(0, 200)}`);
      return [at, Number(process.hrtime.bigint() - t) / 1e6];
    };
    const times: Array<[number, number]> = [];
    let left = requests;
    await Promise.all(
      Array.from({ length: this.concurrency }, async () => {
        while (left-- > 0) times.push(await one());
      }),
    );
    return times;
  }
  close(): Promise<void> {
    return this.pool.close();
  }
}

async function throughput(base: string, bytes: number, socketPath?: string): Promise<number> {
  const pool = new Pool(base, { connections: 1, ...(socketPath ? { connect: { socketPath } } : {}) });
  const t = process.hrtime.bigint();
  const res = await pool.request({ path: `/v1/blob?bytes=${bytes}&seed=bench`, method: 'GET' });
  let got = 0;
  for await (const chunk of res.body) got += (chunk as Buffer).length;
  const s = Number(process.hrtime.bigint() - t) / 1e9;
  await pool.close();
  if (got !== bytes) throw new Error(`short read ${got}/${bytes}`);
  return bytes / 1024 / 1024 / s;
}

function waitPort(port: number, host = '127.0.0.1', timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const tryOnce = () => {
      const s = createConnection(port, host);
      s.once('connect', () => {
        s.destroy();
        resolve();
      });
      s.once('error', () => {
        s.destroy();
        if (Date.now() > end) reject(new Error(`port ${port} never opened`));
        else setTimeout(tryOnce, 50);
      });
    };
    tryOnce();
  });
}

const f = (n: number, d = 3) => n.toFixed(d);

/** What the console process reports on `trace` (see ssh-forward-console.ts). */
interface ConsoleTrace {
  gc: Array<[number, number, number]>;
  sent: number[];
  received: number[];
  exec: Array<[number, number]>;
  http: number[];
  channels: number[];
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

/** A console process (ssh-forward-console.ts) with a line reader on its stdout. */
class ConsoleProc {
  readonly proc: ChildProcess;
  private readonly lines: string[] = [];
  private waiter: { prefixes: string[]; resolve: (l: string) => void } | null = null;

  constructor(config: unknown, env: Record<string, string>, extraFlags: string[] = []) {
    // The V8 flags the shipped entry points set (bin/gpu-console.js, src-main/shell/main.ts): without them minor GCs run
    // several times longer, and this row would measure a console nobody runs. --console-node-flags adds to them.
    const flags = [...SHIPPED_V8_FLAGS, ...extraFlags, ...(values['console-node-flags'] ? values['console-node-flags'].split(/\s+/) : [])];
    this.proc = spawn(process.execPath, [...flags, ...consoleEntry!.argv], {
      env: { ...process.env, ...env, BENCH_CONFIG: JSON.stringify(config), BENCH_POLL_MS: values['poll-ms'], ...(TRACE ? { BENCH_TRACE: '1' } : {}), ...(values.cipher ? { BENCH_CIPHER: values.cipher } : {}) },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let buf = '';
    this.proc.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const l = buf.slice(0, i);
        buf = buf.slice(i + 1);
        const w = this.waiter;
        if (w && w.prefixes.some((p) => l.startsWith(p))) {
          this.waiter = null;
          w.resolve(l);
        } else if (/^(url|error|status|trace) /.test(l)) this.lines.push(l);
        else process.stderr.write(`console[${this.proc.pid}]: ${l}\n`); // --trace-gc and the like
      }
    });
  }

  get pid(): number {
    return this.proc.pid!;
  }

  /** The next line starting with one of `prefixes`; rejects after `timeoutMs`. */
  next(prefixes: string[], timeoutMs = 30_000): Promise<string> {
    const hit = this.lines.findIndex((l) => prefixes.some((p) => l.startsWith(p)));
    if (hit >= 0) return Promise.resolve(this.lines.splice(hit, 1)[0]!);
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        reject(new Error(`no ${prefixes.join('/')} line within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiter = {
        prefixes,
        resolve: (l) => {
          clearTimeout(timer);
          resolve(l);
        },
      };
    });
  }

  async ask(cmd: 'status' | 'trace'): Promise<string> {
    this.proc.stdin!.write(`${cmd}\n`);
    return (await this.next([`${cmd} `])).slice(cmd.length + 1);
  }

  async dispose(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    const exited = new Promise((r) => this.proc.once('exit', r));
    this.proc.kill('SIGTERM');
    const t = setTimeout(() => this.proc.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(t);
  }
}

/**
 * The slow requests of one path in one round (at or above their p99) beside what
 * the console process did meanwhile; each cause as "slow requests that overlapped
 * it / all slow" and the base rate over every request of the round, so a cause that
 * merely happens often is not mistaken for one that makes requests slow.
 */
function attribute(times: Array<[number, number]>, tr: ConsoleTrace): string {
  const sorted = times.map(([, d]) => d).sort((a, b) => a - b);
  const p99 = pct(sorted, 99);
  const slow = times.filter(([, d]) => d >= p99);
  // A request overlaps an event that runs within its span (with 0.2 ms slack for clock reads across processes).
  const hits = (reqs: Array<[number, number]>, spans: Array<[number, number]>): number =>
    reqs.filter(([s, d]) => spans.some(([a, b]) => a <= s + d + 0.2 && b >= s - 0.2)).length;
  const gcSpans = tr.gc.map(([s, d]) => [s, s + d] as [number, number]);
  const bigGc = gcSpans.filter(([a, b]) => b - a >= 0.5);
  // An HTTP scrape or probe occupies the tunnel and the loop for about a millisecond after it starts.
  const httpSpans = tr.http.map((s) => [s, s + 2] as [number, number]);
  const rate = (name: string, spans: Array<[number, number]>) => `${name} ${hits(slow, spans)}/${slow.length} (base ${f((100 * hits(times, spans)) / times.length, 1)}%)`;
  // At c=1 one request is in flight at a time: split each into client → console (until the channel is written),
  // console → sshd → model → sshd → console (until the channel receives the answer), and console → client.
  let split = '';
  if (tr.sent.length > 0 && times.length > 0) {
    const segs = (reqs: Array<[number, number]>) => {
      const a: number[] = [];
      const b: number[] = [];
      const c: number[] = [];
      let i = 0;
      let j = 0;
      for (const [s, d] of reqs) {
        while (i < tr.sent.length && tr.sent[i]! < s - 0.05) i++;
        while (j < tr.received.length && tr.received[j]! < (tr.sent[i] ?? Infinity)) j++;
        const w = tr.sent[i];
        const r = tr.received[j];
        if (w === undefined || r === undefined || r > s + d + 0.05) continue;
        a.push(w - s);
        b.push(r - w);
        c.push(s + d - r);
      }
      const m = (xs: number[]) => f(median(xs));
      return `${m(a)} + ${m(b)} + ${m(c)}`;
    };
    const inOrder = [...times].sort((x, y) => x[0] - y[0]);
    const slowInOrder = inOrder.filter(([, d]) => d >= p99);
    split = ` | median split in→SSH + SSH round trip + out, ms: all ${segs(inOrder)}, slow ${segs(slowInOrder)}`;
  }
  const kinds = [...new Set(tr.gc.map(([, , k]) => k))].join(',');
  const gcMs = tr.gc.reduce((a, [, d]) => a + d, 0);
  const maxGc = tr.gc.reduce((a, [, d]) => Math.max(a, d), 0);
  return (
    `slow (>= p99 ${f(p99)} ms): ${rate('GC', gcSpans)}, ${rate('GC>=0.5ms', bigGc)}, ${rate('fleet exec', tr.exec)}, ${rate('fleet HTTP', httpSpans)}, ${rate('channel open', tr.channels.map((t) => [t, t + 2] as [number, number]))} | ` +
    `console process: ${tr.gc.length} GCs (kind ${kinds || '-'}) ${f(gcMs, 1)} ms (max ${f(maxGc, 2)}), ${tr.exec.length} execs, ${tr.http.length} fleet HTTP requests, event-loop delay p99 ${f(tr.loopDelayP99Ms, 2)} max ${f(tr.loopDelayMaxMs, 2)} ms${split}`
  );
}

// The console runs from an esbuild bundle, as the app runs from its build (and a CPU profile is of its main thread, not tsx's loader).
let consoleEntry: ChildEntry | null = null;
preClean();
const host = await createNetnsHost();
let ssh: ChildProcess | null = null;
let relay: ChildProcess | null = null;
let bare: ChildProcess | null = null;
const consoles: ConsoleProc[] = [];
try {
  consoleEntry = await childEntry(new URL('./ssh-forward-console.ts', import.meta.url).href, false);
  // The host answers the console's 1 Hz GPU query, as a GPU host does (a stand-in nvidia-smi on its sessions'
  // PATH): the console rows measure a console at work, its commands and their transport's cost included.
  const gpuBin = join(host.dir, 'gpu-bin');
  mkdirSync(gpuBin);
  copyFileSync('test/fixtures/ssh/fake-nvidia-smi.sh', join(gpuBin, 'nvidia-smi'));
  chmodSync(join(gpuBin, 'nvidia-smi'), 0o755);
  const sshd = await host.startSshd({ logLevel: 'INFO', sessionEnv: { PATH: `${gpuBin}:/usr/local/bin:/usr/bin:/bin` } });
  await host.startModelServer(8000);
  // The direct baseline: a twin server on the namespace's veth address.
  spawn('ip', ['netns', 'exec', host.ns, process.execPath, 'test/fixtures/ssh/model-server.mjs', '8001', host.addr], { stdio: 'ignore' });
  await waitPort(8001, host.addr);
  const kh = join(host.dir, 'known_hosts');
  writeFileSync(kh, knownHostsLine(sshd));

  const configFor = (transport: 'builtin' | 'openssh') => ({
    hosts: [
      {
        label: 'bench',
        ssh: { host: host.addr, port: 22, user: 'root', identityFile: host.clientKey, transport },
        knownHostsFile: kh,
        services: [{ id: 'm', kind: 'vllm', remotePort: 8000, model: 'test-model' }],
      },
    ],
  });
  // The console in its own process, as in production: clients are other processes.
  // oneShot: the openssh console runs each command as an `ssh` process of its own (no command shell on the master).
  const startConsole = async (transport: 'builtin' | 'openssh', oneShot = false): Promise<{ proc: ConsoleProc; url: string; socketPath: string } | { error: string }> => {
    const env: Record<string, string> = transport === 'openssh' ? { BENCH_OPENSSH_DIR: mkdtempSync(join(tmpdir(), 'gc-bench-ctl-')), ...(oneShot ? { BENCH_COMMAND_SHELL: '0' } : {}) } : {};
    const role = `console-${transport}${oneShot ? '-1shot' : ''}`;
    const proc = new ConsoleProc(configFor(transport), env, values.prof ? ['--cpu-prof', '--cpu-prof-dir', values.prof, '--cpu-prof-name', `${role}.cpuprofile`] : []);
    consoles.push(proc);
    try {
      const line = await proc.next(['url ', 'error ']);
      if (line.startsWith('url ')) {
        const [url, socketPath] = line.slice(4).split(' ');
        return { proc, url: url!, socketPath: socketPath! };
      }
      await proc.dispose();
      return { error: line.slice(6) };
    } catch (err) {
      const status = await proc.ask('status').catch(() => '?');
      await proc.dispose();
      return { error: `${(err as Error).message}; ${status}` };
    }
  };
  const builtin = await startConsole('builtin');
  if ('error' in builtin) throw new Error(`console-builtin did not come up: ${builtin.error}`);
  const openssh = await startConsole('openssh');
  const opensshNote = 'error' in openssh ? `openssh transport: not available (${openssh.error})` : null;
  // The same transport without the command shell, in the same run: what an open shell session costs a forwarded request.
  const oneShot = values['one-shot-row'] && !opensshNote ? await startConsole('openssh', true) : null;
  if (oneShot && 'error' in oneShot) throw new Error(`console-openssh-1shot did not come up: ${oneShot.error}`);

  const sshPort = 20000 + (process.pid % 20000);
  ssh = spawn(
    'ssh',
    ['-N', '-L', `127.0.0.1:${sshPort}:127.0.0.1:8000`, '-i', host.clientKey, '-o', `UserKnownHostsFile=${kh}`, '-o', 'BatchMode=yes', '-o', 'ExitOnForwardFailure=yes', `root@${host.addr}`],
    { stdio: 'ignore' },
  );
  await waitPort(sshPort);
  const sshUrl = `http://127.0.0.1:${sshPort}`;
  const directUrl = `http://${host.addr}:8001`;
  const relayPort = sshPort + 1;
  relay = spawn(process.execPath, ['-e', RELAY, String(relayPort), host.addr, '8001'], { stdio: 'ignore' });
  await waitPort(relayPort);
  const relayUrl = `http://127.0.0.1:${relayPort}`;
  const barePort = sshPort + 2;
  const profFlags = (role: string) => (values.prof ? ['--cpu-prof', '--cpu-prof-dir', values.prof, '--cpu-prof-name', `${role}.cpuprofile`] : []);
  bare = spawn(process.execPath, [...profFlags('ssh2-bare'), ...(process.env['BENCH_BARE_FLAGS'] ?? '').split(' ').filter(Boolean), '-e', BARE_SSH2, String(barePort), host.addr, 'root', host.clientKey, sshd.hostKeyPublic.split(' ')[1]!], { stdio: ['ignore', process.env['BENCH_BARE_FLAGS'] ? 'inherit' : 'ignore', 'inherit'] });
  await waitPort(barePort);
  const bareUrl = `http://127.0.0.1:${barePort}`;

  /** `socketPath`: the row connects to this Unix socket (a tunnel's private end); `gate`: the tunnel's public port. */
  /** `pids`: the processes whose CPU the row's requests cost (openssh rows: the console and its ControlMaster, which forwards). */
  type Path = { name: string; url: string; pid: number | null; console: ConsoleProc | null; socketPath?: string; gate?: boolean; pids?: number[] };
  const tunnelRows = (t: 'builtin' | 'openssh', c: { proc: ConsoleProc; url: string; socketPath: string }): Path[] => [
    { name: `console-${t}`, url: 'http://tunnel', socketPath: c.socketPath, pid: c.proc.pid, console: c.proc },
    { name: `gate-${t}`, url: c.url, pid: c.proc.pid, console: c.proc, gate: true },
  ];
  const paths: Path[] = [
    { name: 'direct', url: directUrl, pid: null, console: null },
    ...tunnelRows('builtin', builtin),
    ...('error' in openssh ? [] : tunnelRows('openssh', openssh)),
    ...(oneShot && !('error' in oneShot) ? [{ name: 'console-openssh-1shot', url: 'http://tunnel', socketPath: oneShot.socketPath, pid: oneShot.proc.pid, console: oneShot.proc }] : []),
    { name: 'ssh -L', url: sshUrl, pid: ssh.pid!, console: null },
    { name: 'ssh2 bare', url: bareUrl, pid: bare.pid!, console: null },
    { name: 'relay', url: relayUrl, pid: relay.pid!, console: null },
  ];
  for (const p of paths) {
    const master = p.name.includes('openssh') && p.pid !== null ? masterOf(p.pid) : null;
    if (master !== null) p.pids = [p.pid!, master];
  }
  const cpuOf = (pids: number[]): [number, number] => pids.map(cpuMs).reduce((a, b) => [a[0] + b[0], a[1] + b[1]], [0, 0]);
  const consoleRows = paths.filter((p) => p.console !== null && !p.gate);
  const gateRows = paths.filter((p) => p.gate === true);
  const privateOf = (gate: Path): string => gate.name.replace(/^gate-/, 'console-');
  const experiments = [values['poll-ms'] !== '1000' ? `poll every ${values['poll-ms']} ms` : '', values.cipher ? `ssh2 cipher ${values.cipher}` : '', values['console-node-flags'] ? `console node ${values['console-node-flags']}` : '']
    .filter(Boolean)
    .join(', ');

  console.log(
    `GPU Console forward vs OpenSSH ssh -L (${process.version}, ${ROUNDS} rounds, ${REQUESTS} requests per point after ${WARMUP} warm-up requests per path, ${values.mb} MB bulk${experiments ? `; EXPERIMENT: ${experiments}` : ''})`,
  );
  console.log(`sshd: ${sshd.listen}:22 in netns ${host.ns}; ${paths.map((p) => `${p.name} ${p.socketPath ?? p.url}`).join('; ')}`);
  if (opensshNote) console.log(opensshNote);

  const verdicts: Verdict[] = [];
  for (const c of values.concurrency.split(',').map(Number)) {
    // Every path's requests, pooled over the rounds; and per round, for the spread.
    const all: Record<string, Array<[number, number]>> = {};
    const byRound: Record<string, number[][]> = {};
    const cpu: Record<string, [number, number]> = {};
    const traces: Record<string, string[]> = {};
    const clients = new Map(paths.map((p) => [p.name, new Client(p.url, c, p.socketPath)]));
    for (const p of paths) await clients.get(p.name)!.run(Math.max(WARMUP, 4 * c));
    for (let r = 0; r < ROUNDS; r++) {
      for (const p of paths) if (TRACE) await p.console?.ask('trace'); // start the round's trace afresh
      const round: Record<string, Array<[number, number]>> = {};
      // Interleave in blocks of `block` requests, each block in its own shuffled order, so that a burst of
      // outside load (another process on the machine) lands on every path alike rather than on one path's p99,
      // and no path always follows the same one: a rotation kept each path behind a fixed predecessor, and the
      // console's work after a gate block (its GC, its answers' aftermath) landed on the next path's block.
      const block = BLOCK_PER_CONNECTION * c;
      for (let b = 0; b * block < REQUESTS; b++) {
        const n = Math.min(block, REQUESTS - b * block);
        const order = shuffled(paths);
        for (let k = 0; k < paths.length; k++) {
          const p = order[k]!;
          const pids = p.pids ?? (p.pid === null ? [] : [p.pid]);
          const before = pids.length === 0 ? null : cpuOf(pids);
          const times = await clients.get(p.name)!.run(n);
          if (before) {
            const after = cpuOf(pids);
            const sum = (cpu[p.name] ??= [0, 0]);
            sum[0] += after[0] - before![0];
            sum[1] += after[1] - before![1];
          }
          (round[p.name] ??= []).push(...times);
        }
      }
      for (const p of paths) {
        (all[p.name] ??= []).push(...round[p.name]!);
        (byRound[p.name] ??= []).push(round[p.name]!.map(([, d]) => d).sort((x, y) => x - y));
        if (TRACE && p.console) {
          const tr = JSON.parse(await p.console.ask('trace')) as ConsoleTrace;
          // The split pairs one request with one write and one answer: only at c=1.
          if (c !== 1) tr.sent = [];
          (traces[p.name] ??= []).push(attribute(round[p.name]!, tr));
        }
      }
    }
    for (const cl of clients.values()) await cl.close();
    const sorted = Object.fromEntries(Object.entries(all).map(([k, v]) => [k, v.map(([, d]) => d).sort((x, y) => x - y)]));
    const abs = (n: string, p: 'p50' | 'p99') => pct(sorted[n]!, p === 'p50' ? 50 : 99);
    const d50 = abs('direct', 'p50');
    const d99 = abs('direct', 'p99');
    const added = (n: string, p: 'p50' | 'p99') => Math.max(0.001, abs(n, p) - (p === 'p50' ? d50 : d99));
    console.log(`latency c=${c}  direct p50 ${f(d50)} ms p99 ${f(d99)} ms  (percentiles over all ${ROUNDS * REQUESTS} requests of a path)`);
    const perRequestUs = (name: string) => cpu[name]!.map((ms) => f((ms * 1000) / (ROUNDS * REQUESTS), 1)).join(' / ');
    for (const p of paths.slice(1)) {
      console.log(
        `  ${p.name.padEnd(15)} p50 ${f(abs(p.name, 'p50'))} p99 ${f(abs(p.name, 'p99'))} ms | added p50 +${f(added(p.name, 'p50'))} p99 +${f(added(p.name, 'p99'))} ms | ` +
          `CPU per request user / sys ${perRequestUs(p.name)} µs | ≥ ${STALL_MS} ms: ${sorted[p.name]!.filter((d) => d >= STALL_MS).length}`,
      );
    }
    for (const p of consoleRows) {
      const r50 = abs(p.name, 'p50') / abs('ssh -L', 'p50');
      const r99 = abs(p.name, 'p99') / abs('ssh -L', 'p99');
      // Each round's own p99 ratio: their spread says how far one run's figure can be trusted.
      const perRound = byRound[p.name]!.map((v, i) => pct(v, 99) / pct(byRound['ssh -L']![i]!, 99)).sort((x, y) => x - y);
      console.log(
        `  ratio ${p.name} / ssh -L  absolute p50 ${f(r50, 2)} p99 ${f(r99, 2)} | added p50 ${f(added(p.name, 'p50') / added('ssh -L', 'p50'), 2)} p99 ${f(added(p.name, 'p99') / added('ssh -L', 'p99'), 2)} | ` +
          `p99 ratio of single rounds ${f(perRound[0]!, 2)}–${f(perRound[perRound.length - 1]!, 2)} (median ${f(median(perRound), 2)})`,
      );
      const kind = p.name.slice('console-'.length);
      if (p.name === 'console-builtin') verdicts.push(verdict(`builtin p99 / ssh -L, c=${c}`, r99, '≤', 1.3, '×'));
      else if (c === 1) verdicts.push(verdict(`${kind} p50 / ssh -L, c=1`, r50, '≤', 1.05, '×'), verdict(`${kind} p99 / ssh -L, c=1`, r99, '≤', 1.05, '×'));
      for (const t of traces[p.name] ?? []) console.log(`    trace ${p.name}: ${t}`);
    }
    // What the public port's gate costs: against the same tunnel's private socket, and against ssh -L.
    for (const g of gateRows) {
      const priv = privateOf(g);
      console.log(
        `  ratio ${g.name} / ${priv}  p50 ${f(abs(g.name, 'p50') / abs(priv, 'p50'), 2)} p99 ${f(abs(g.name, 'p99') / abs(priv, 'p99'), 2)} (gate adds p50 +${f(abs(g.name, 'p50') - abs(priv, 'p50'))} ms) | ` +
          `/ ssh -L p50 ${f(abs(g.name, 'p50') / abs('ssh -L', 'p50'), 2)} p99 ${f(abs(g.name, 'p99') / abs('ssh -L', 'p99'), 2)}`,
      );
    }
  }
  const tp: Record<string, number[]> = {};
  for (let r = 0; r < ROUNDS && BULK_BYTES > 0; r++) for (const p of paths.filter((q) => q.name !== 'relay')) (tp[p.name] ??= []).push(await throughput(p.url, BULK_BYTES, p.socketPath));
  if (BULK_BYTES > 0) console.log(`throughput  ${paths.filter((q) => q.name !== 'relay').map((p) => `${p.name} ${f(median(tp[p.name]!), 0)} MB/s`).join(' | ')}`);
  for (const p of BULK_BYTES > 0 ? consoleRows : []) {
    const ratio = median(tp[p.name]!) / median(tp['ssh -L']!);
    console.log(`  ratio ${p.name} / ssh -L ${f(ratio, 2)}`);
    verdicts.push(verdict(`${p.name.slice(8)} throughput / ssh -L`, ratio, '≥', p.name === 'console-builtin' ? 0.9 : 0.95, '×'));
  }
  for (const g of BULK_BYTES > 0 ? gateRows : []) {
    console.log(`  ratio ${g.name} / ${privateOf(g)} ${f(median(tp[g.name]!) / median(tp[privateOf(g)]!), 2)} | / ssh -L ${f(median(tp[g.name]!) / median(tp['ssh -L']!), 2)}`);
  }
  if (opensshNote) verdicts.push({ name: 'openssh targets', figure: 'n/a', target: 'transport not available', pass: null });
  console.log('targets');
  printVerdicts(verdicts);
  for (const p of consoleRows) console.log(`${p.name} ${await p.console!.ask('status')}`);
  for (const g of gateRows) console.log(`${g.name}: every timed request was answered 200 (a refusal or tunnel error stops the bench)`);
} finally {
  ssh?.kill('SIGKILL');
  relay?.kill('SIGKILL');
  if (bare && bare.exitCode === null) {
    const exited = new Promise((r) => bare!.once('exit', r));
    bare.kill('SIGTERM'); // so that a --prof profile is written
    await exited;
  }
  for (const c of consoles) await c.dispose();
  consoleEntry?.dispose();
  await host.dispose();
}
