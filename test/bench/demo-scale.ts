// Benchmark (prints figures; not a test) of the whole console at fleet scale:
// the built `gpu-console serve --demo-hosts N` (N synthetic hosts of 8 GPUs and
// 2 services, each behind its own ssh2 server in the same process, read at
// 1 Hz through real SSH sessions), with one UI client on the real web bridge's
// event stream as an open window would be. By default the hosts run in
// `gpu-console demo-fleet --hosts N`, a process of their own, and `serve
// --config` reads the file it writes: the console's figures are its own, the
// fleet process's are printed apart (its --traffic goes straight to the
// simulators, not through the proxy). With --in-process the hosts run inside
// the console (`serve --demo-hosts N`) and everything counts together: the
// console core, both ends of every SSH session, the simulated hosts, the bridge.
//
//   node --import tsx test/bench/demo-scale.ts [--hosts 64] [--minutes 10] [--warmup 60] [--traffic on|off] [--no-ui] [--in-process] [--node-flags '--flag ...']
//
// --node-flags passes V8/Node flags to the console process (to compare GC settings).
//
// Figures: start-up to the ready line and to every host connected; process CPU
// (all threads, /proc/<pid>/stat) and main-thread CPU [target < 25 % of one
// core]; RSS sampled every 10 s after warm-up: min, max, drift first→last
// minute [target flat ±5 %, at most 400 MB]; bytes per second the UI's event
// stream received (SSE frames as sent), per channel and in all [target <= 30 KiB/s, traffic on].
// Needs the build (`npm run build`).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { assertBuilt, bridgeCall, CLI } from '../helpers/console-process.js';
import { ROOT } from '../helpers/imports.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}
const HOSTS = Number(arg('hosts', '64'));
const MINUTES = Number(arg('minutes', '10'));
const WARMUP_S = Number(arg('warmup', '60'));
const TRAFFIC = arg('traffic', 'off');
const UI = !process.argv.includes('--no-ui');
const FLEET_PROCESS = !process.argv.includes('--in-process');
const NODE_FLAGS = arg('node-flags', '').split(' ').filter((f) => f.length > 0);
const MB = 1_000_000;
const MiB = 1_048_576;
const CLK_TCK_MS = 10; // USER_HZ 100 on Linux
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number, d = 1): string => n.toFixed(d);

/** utime + stime (ms) of a process (all threads) or of one thread. */
function cpuMs(path: string): number {
  const stat = readFileSync(path, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * CLK_TCK_MS;
}

function rssBytes(pid: number): number {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
  return m ? Number(m[1]) * 1024 : Number.NaN;
}

interface HostLite {
  state: string;
  services: Array<{ stale: boolean; source?: { atMs?: number } | null }>;
}

/** The event stream as a UI window reads it: bytes per channel. */
async function followEvents(ui: string, bytes: Map<string, number>, signal: AbortSignal): Promise<void> {
  const url = new URL(ui);
  const token = new URLSearchParams(url.hash.slice(1)).get('token')!;
  const res = await fetch(`${url.origin}/api/events`, { headers: { 'x-gpu-console-token': token, accept: 'text/event-stream' }, signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const channel = /^event: (.+)$/m.exec(frame)?.[1];
        if (channel) bytes.set(channel, (bytes.get(channel) ?? 0) + Buffer.byteLength(frame) + 2);
      }
    }
  } catch (err) {
    if (!signal.aborted) throw err;
  }
}

/** `gpu-console demo-fleet --hosts N` in its own process; resolves with it and its config file once it is ready. */
async function startFleetProcess(dir: string): Promise<{ pid: number; config: string; stop(): Promise<void> }> {
  const args = ['demo-fleet', '--hosts', String(HOSTS), '--write-config', join(dir, 'demo.yaml'), '--data-dir', join(dir, 'fleet'), ...(TRAFFIC === 'on' ? ['--traffic'] : [])];
  const fleet = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const config = await new Promise<string>((resolve, reject) => {
    let out = '';
    fleet.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      const m = /^GPU Console demo fleet ready config=(\S+)/m.exec(out);
      if (m) resolve(m[1]!);
    });
    fleet.once('exit', (code) => reject(new Error(`demo-fleet exited ${code}:\n${out}`)));
  });
  const stop = () => new Promise<void>((resolve) => {
    fleet.once('exit', () => resolve());
    fleet.kill('SIGTERM');
  });
  return { pid: fleet.pid!, config, stop };
}

/** What the UI's event stream carried per second: the three delta-coded channels, the rest, and the total beside the target. */
function printStreamBytes(bytes: ReadonlyMap<string, number>, seconds: number): void {
  const kib = (b: number): string => `${fmt(b / seconds / 1024, 2)} KiB/s`;
  const ticks = ['fleet.tick', 'telemetry.tick', 'proxy.stats'];
  const other = [...bytes].filter(([c]) => !ticks.includes(c)).reduce((n, [, b]) => n + b, 0);
  const total = [...bytes.values()].reduce((a, b) => a + b, 0);
  const parts = ticks.map((c) => `${c} ${kib(bytes.get(c) ?? 0)}`);
  console.log(`  the UI's event stream: ${parts.join(' + ')} + other events ${kib(other)} = ${kib(total)}   [target <= 30 KiB/s total, traffic on] ${total / seconds / 1024 <= 30 ? 'met' : 'MISSED'}`);
}

async function main(): Promise<void> {
  assertBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'gpu-console-demo-scale-'));
  const how = FLEET_PROCESS ? `serve --config on \`demo-fleet --hosts ${HOSTS}\` (its own process)` : `serve --demo-hosts ${HOSTS}`;
  console.log(`demo-scale: ${how} (8 GPUs, 2 services each), traffic ${TRAFFIC}, UI client ${UI ? 'on' : 'off'}${NODE_FLAGS.length ? `, node ${NODE_FLAGS.join(' ')}` : ''}, ${MINUTES} min after ${WARMUP_S} s warm-up (node ${process.version})`);
  // Start-up counts from the console's start: a separate fleet is up (listening, config written) before it.
  const fleet = FLEET_PROCESS ? await startFleetProcess(dir) : null;
  const t0 = performance.now();
  const serveArgs = fleet ? ['--config', fleet.config, '--data-dir', join(dir, 'console')] : ['--demo-hosts', String(HOSTS), '--demo-traffic', TRAFFIC, '--data-dir', dir];
  const child = spawn(process.execPath, [...NODE_FLAGS, CLI, 'serve', ...serveArgs, '--print-url'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const ui = await new Promise<string>((resolve, reject) => {
    const onData = (c: Buffer) => {
      out += c.toString('utf8');
      const m = /^GPU Console ready ui=(\S+)/m.exec(out);
      if (m) resolve(m[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.once('exit', (code) => reject(new Error(`console exited ${code}:\n${out}`)));
  });
  const readyMs = performance.now() - t0;
  const pid = child.pid!;
  const abort = new AbortController();
  const bytes = new Map<string, number>();
  if (UI) void followEvents(ui, bytes, abort.signal);

  let connectedMs: number | null = null;
  for (;;) {
    const snap = await bridgeCall<{ hosts: HostLite[] }>(ui, 'fleet.snapshot', {});
    if (snap.ok) {
      const hosts = snap.data.hosts;
      const read = hosts.filter((h) => h.state === 'connected' && h.services.every((s) => !s.stale && s.source?.atMs)).length;
      if (read === HOSTS) {
        connectedMs = performance.now() - t0;
        break;
      }
    }
    if (performance.now() - t0 > 240_000) break;
    await sleep(500);
  }
  console.log(`  start-up: ready line after ${fmt(readyMs / 1000, 2)} s; every host connected and every service read after ${connectedMs === null ? 'NEVER (240 s)' : `${fmt(connectedMs / 1000, 1)} s`}`);
  await sleep(WARMUP_S * 1000);

  const procStat = `/proc/${pid}/stat`;
  const mainStat = `/proc/${pid}/task/${pid}/stat`;
  const cpu0 = cpuMs(procStat);
  const main0 = cpuMs(mainStat);
  const fleetCpu0 = fleet ? cpuMs(`/proc/${fleet.pid}/stat`) : 0;
  const fleetRss: number[] = [];
  const w0 = performance.now();
  bytes.clear();
  const rss: number[] = [];
  const perMinute: number[] = [];
  let lastCpu = cpu0;
  let lastW = w0;
  for (let s = 10; s <= MINUTES * 60; s += 10) {
    await sleep(w0 + s * 1000 - performance.now());
    rss.push(rssBytes(pid));
    if (fleet) fleetRss.push(rssBytes(fleet.pid));
    if (s % 60 === 0) {
      const c = cpuMs(procStat);
      const w = performance.now();
      perMinute.push(((c - lastCpu) / (w - lastW)) * 100);
      console.log(`  min ${String(s / 60).padStart(2)}: rss ${fmt(rss[rss.length - 1]! / MiB)} MiB, process CPU ${fmt(perMinute[perMinute.length - 1]!, 1)} % of one core`);
      lastCpu = c;
      lastW = w;
    }
  }
  const wallMs = performance.now() - w0;
  const cpu = cpuMs(procStat) - cpu0;
  const mainCpu = cpuMs(mainStat) - main0;
  const fleetCpu = fleet ? cpuMs(`/proc/${fleet.pid}/stat`) - fleetCpu0 : 0;
  abort.abort();
  const ticks = wallMs / 1000;

  const minR = Math.min(...rss);
  const maxR = Math.max(...rss);
  const firstMin = rss.slice(0, 6);
  const lastMin = rss.slice(-6);
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const drift = ((avg(lastMin) - avg(firstMin)) / avg(firstMin)) * 100;
  const cpuPct = (cpu / wallMs) * 100;
  console.log(`\nOver ${fmt(wallMs / 1000)} s:`);
  console.log(`  process CPU, all threads: ${fmt(cpuPct, 1)} % of one core   [target < 25 %] ${cpuPct < 25 ? 'met' : 'MISSED'}`);
  console.log(`  main thread CPU: ${fmt((mainCpu / wallMs) * 100, 1)} % of one core (the rest: libuv/V8 worker threads, GC helpers)`);
  if (fleet) {
    console.log(`  the demo fleet's own process (not counted in the console's figures): CPU ${fmt((fleetCpu / wallMs) * 100, 1)} % of one core, RSS ${fmt(Math.min(...fleetRss) / MB)} … ${fmt(Math.max(...fleetRss) / MB)} MB`);
  }
  console.log(`  RSS: ${fmt(minR / MB)} … ${fmt(maxR / MB)} MB, spread ${fmt(((maxR - minR) / minR) * 100, 2)} %, last vs first minute ${fmt(drift, 2)} %   [target flat ±5 %, ≤ 400 MB] ${Math.abs(drift) <= 5 && maxR <= 400 * MB ? 'met' : 'MISSED'}`);
  if (UI) printStreamBytes(bytes, ticks);
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
  await fleet?.stop();
  rmSync(dir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
