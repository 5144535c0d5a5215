// Benchmark (prints figures; not a test). Through the same OpenSSH sshd in a
// network namespace, GPU Console's forward (a FleetService tunnel with its
// end-to-end probe, status tracking, keepalive and reconnect logic all live)
// against OpenSSH's own `ssh -L`, in the same run:
//   - added latency of a small HTTP request (p50/p99, concurrency 1 and 16),
//     i.e. through-tunnel latency minus the direct path to a twin server;
//   - bulk throughput (MB/s) of one large download.
// Ratios: console / OpenSSH (latency: lower is better; throughput: higher).
// Every path is warmed first (untimed) so the figures are steady state, not
// the JIT's first thousand requests. Also printed: the CPU each forwarding
// process spends per request (user/sys, from /proc), and a plain Node TCP
// relay (no SSH, no sshd hop) to the direct server: the floor of any forward
// written in Node, against which OpenSSH's own cost can be read.
//   npx tsx test/bench/ssh-forward.ts [--requests N] [--mb N] [--rounds N] [--warmup N]
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { createNetnsHost, knownHostsLine, preClean } from '../helpers/netns-sshd.js';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '3000' }, mb: { type: 'string', default: '256' }, rounds: { type: 'string', default: '3' }, warmup: { type: 'string', default: '2000' } } });
const REQUESTS = Number(values.requests);
const BULK_BYTES = Number(values.mb) * 1024 * 1024;
const ROUNDS = Number(values.rounds);
const WARMUP = Number(values.warmup);

/** A plain TCP relay in Node (pipe both ways, TCP_NODELAY): the least work a forward in Node can do per request. */
const RELAY = `const net = require('node:net'); const [port, host, rport] = process.argv.slice(1);
net.createServer({ noDelay: true }, (s) => { const u = net.connect({ host, port: Number(rport), noDelay: true });
  s.pipe(u); u.pipe(s); s.on('error', () => u.destroy()); u.on('error', () => s.destroy()); }).listen(Number(port), '127.0.0.1');`;

/** CPU time (user, sys) of a process in ms, from /proc (Linux, as the network namespaces are). */
function cpuMs(pid: number): [number, number] {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const tick = 1000 / 100; // USER_HZ
  return [Number(fields[11]) * tick, Number(fields[12]) * tick];
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function latency(base: string, concurrency: number, requests: number): Promise<number[]> {
  const pool = new Pool(base, { connections: concurrency, pipelining: 1, keepAliveTimeout: 30_000 });
  const one = async (): Promise<number> => {
    const t = process.hrtime.bigint();
    const res = await pool.request({ path: '/small', method: 'GET' });
    await res.body.text();
    return Number(process.hrtime.bigint() - t) / 1e6;
  };
  // warm-up: open every connection
  await Promise.all(Array.from({ length: concurrency * 4 }, one));
  const times: number[] = [];
  let left = requests;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) times.push(await one());
    }),
  );
  await pool.close();
  return times.sort((a, b) => a - b);
}

async function throughput(base: string, bytes: number): Promise<number> {
  const pool = new Pool(base, { connections: 1 });
  const t = process.hrtime.bigint();
  const res = await pool.request({ path: `/blob?bytes=${bytes}&seed=bench`, method: 'GET' });
  let got = 0;
  for await (const chunk of res.body) got += (chunk as Buffer).length;
  const s = Number(process.hrtime.bigint() - t) / 1e9;
  await pool.close();
  if (got !== bytes) throw new Error(`short read ${got}/${bytes}`);
  return bytes / 1024 / 1024 / s;
}

function waitPort(port: number, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const tryOnce = () => {
      const s = createConnection(port, '127.0.0.1');
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

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const f = (n: number, d = 3) => n.toFixed(d);

preClean();
const host = await createNetnsHost();
let ssh: ReturnType<typeof spawn> | null = null;
let consoleProc: ReturnType<typeof spawn> | null = null;
let relay: ReturnType<typeof spawn> | null = null;
try {
  const sshd = await host.startSshd({ logLevel: 'INFO' });
  await host.startModelServer(8000);
  // The direct baseline: a twin server on the namespace's veth address.
  const twin = spawn('ip', ['netns', 'exec', host.ns, process.execPath, 'test/fixtures/ssh/model-server.mjs', '8001', host.addr], { stdio: 'ignore' });
  await waitPort(0).catch(() => undefined);
  const kh = join(host.dir, 'known_hosts');
  writeFileSync(kh, knownHostsLine(sshd));

  const config = {
    hosts: [
      {
        label: 'bench',
        ssh: { host: host.addr, port: 22, user: 'root', identityFile: host.clientKey },
        knownHostsFile: kh,
        services: [{ id: 'm', kind: 'vllm', remotePort: 8000, model: 'test-model' }],
      },
    ],
  };
  // The console in its own process, as in production: clients are other processes.
  const proc = spawn(process.execPath, ['--import', 'tsx', 'test/bench/ssh-forward-console.ts'], {
    env: { ...process.env, BENCH_CONFIG: JSON.stringify(config) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  consoleProc = proc;
  const lines: string[] = [];
  let onLine: ((l: string) => void) | null = null;
  let buf = '';
  proc.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const l = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (onLine) onLine(l);
      else lines.push(l);
    }
  });
  const nextLine = (prefix: string) =>
    new Promise<string>((resolve) => {
      const hit = lines.findIndex((l) => l.startsWith(prefix));
      if (hit >= 0) return resolve(lines.splice(hit, 1)[0]!);
      onLine = (l) => {
        if (l.startsWith(prefix)) {
          onLine = null;
          resolve(l);
        }
      };
    });
  const consoleUrl = (await nextLine('url ')).slice(4);

  const opensshPort = 20000 + (process.pid % 20000);
  ssh = spawn(
    'ssh',
    ['-N', '-L', `127.0.0.1:${opensshPort}:127.0.0.1:8000`, '-i', host.clientKey, '-o', `UserKnownHostsFile=${kh}`, '-o', 'BatchMode=yes', '-o', 'ExitOnForwardFailure=yes', `root@${host.addr}`],
    { stdio: 'ignore' },
  );
  await waitPort(opensshPort);
  const opensshUrl = `http://127.0.0.1:${opensshPort}`;
  const directUrl = `http://${host.addr}:8001`;
  void twin;
  const relayPort = opensshPort + 1;
  relay = spawn(process.execPath, ['-e', RELAY, String(relayPort), host.addr, '8001'], { stdio: 'ignore' });
  await waitPort(relayPort);
  const relayUrl = `http://127.0.0.1:${relayPort}`;
  const paths = [
    ['direct', directUrl, null],
    ['console', consoleUrl, proc.pid!],
    ['openssh', opensshUrl, ssh.pid!],
    ['relay', relayUrl, relay.pid!],
  ] as const;

  console.log(
    `GPU Console forward vs OpenSSH ssh -L (${process.version}, ${ROUNDS} rounds, ${REQUESTS} requests per point after ${WARMUP} warm-up requests per path, ${values.mb} MB bulk)`,
  );
  console.log(`sshd: ${sshd.listen}:22 in netns ${host.ns}; console ${consoleUrl}; openssh ${opensshUrl}; direct ${directUrl}; node relay ${relayUrl}`);
  for (const c of [1, 16]) {
    const rows: Record<string, { p50: number[]; p99: number[] }> = {};
    const cpu: Record<string, [number, number]> = {};
    for (const [, url] of paths) if (WARMUP > 0) await latency(url, c, WARMUP);
    for (let r = 0; r < ROUNDS; r++) {
      // Interleave so drift hits all alike.
      for (const [name, url, pid] of paths) {
        const before = pid === null ? null : cpuMs(pid);
        const t = await latency(url, c, REQUESTS);
        if (pid !== null) {
          const after = cpuMs(pid);
          const sum = (cpu[name] ??= [0, 0]);
          sum[0] += after[0] - before![0];
          sum[1] += after[1] - before![1];
        }
        const row = (rows[name] ??= { p50: [], p99: [] });
        row.p50.push(pct(t, 50));
        row.p99.push(pct(t, 99));
      }
    }
    const d50 = median(rows['direct']!.p50);
    const d99 = median(rows['direct']!.p99);
    const add = (n: string, p: 'p50' | 'p99', base: number) => Math.max(0.001, median(rows[n]![p]) - base);
    const c50 = add('console', 'p50', d50);
    const o50 = add('openssh', 'p50', d50);
    const c99 = add('console', 'p99', d99);
    const o99 = add('openssh', 'p99', d99);
    console.log(
      `latency c=${String(c).padEnd(2)}  direct p50 ${f(d50)} ms p99 ${f(d99)} ms | ` +
        `console p50 ${f(median(rows['console']!.p50))} p99 ${f(median(rows['console']!.p99))} | openssh p50 ${f(median(rows['openssh']!.p50))} p99 ${f(median(rows['openssh']!.p99))}`,
    );
    console.log(
      `  added latency  console p50 +${f(c50)} ms, p99 +${f(c99)} ms | openssh p50 +${f(o50)} ms, p99 +${f(o99)} ms | ` +
        `ratio console/openssh (absolute) p50 ${f(median(rows['console']!.p50) / median(rows['openssh']!.p50), 2)} p99 ${f(median(rows['console']!.p99) / median(rows['openssh']!.p99), 2)}` +
        ` (added) p50 ${f(c50 / o50, 2)} p99 ${f(c99 / o99, 2)}`,
    );
    // Per request (the pool's warm-up requests inside each point included).
    const perRequestUs = (name: string) => cpu[name]!.map((ms) => f((ms * 1000) / (ROUNDS * (REQUESTS + 4 * c)), 1)).join(' / ');
    console.log(
      `  floor: node relay (no SSH) p50 ${f(median(rows['relay']!.p50))} p99 ${f(median(rows['relay']!.p99))}, added p50 +${f(Math.max(0, median(rows['relay']!.p50) - d50))} ms | ` +
        `CPU per request, user / sys µs: console ${perRequestUs('console')} | openssh ${perRequestUs('openssh')} | node relay ${perRequestUs('relay')}`,
    );
  }
  const tp: Record<string, number[]> = { console: [], openssh: [], direct: [] };
  for (let r = 0; r < ROUNDS; r++) {
    tp['direct']!.push(await throughput(directUrl, BULK_BYTES));
    tp['console']!.push(await throughput(consoleUrl, BULK_BYTES));
    tp['openssh']!.push(await throughput(opensshUrl, BULK_BYTES));
  }
  const ct = median(tp['console']!);
  const ot = median(tp['openssh']!);
  console.log(`throughput  direct ${f(median(tp['direct']!), 0)} MB/s | console ${f(ct, 0)} MB/s | openssh ${f(ot, 0)} MB/s | ratio console/openssh ${f(ct / ot, 2)} (target >= 0.90)`);
  proc.stdin!.write('status\n');
  console.log(`console ${(await nextLine('status ')).slice(7)}`);
} finally {
  ssh?.kill('SIGKILL');
  relay?.kill('SIGKILL');
  if (consoleProc && consoleProc.exitCode === null) {
    consoleProc.kill('SIGTERM');
    await new Promise((r) => consoleProc!.once('exit', r));
  }
  await host.dispose();
}
