// Benchmark (prints figures; not a test) of the telemetry pipeline the app
// runs: the console core (startApp: fleet, sources, derivation, series store,
// alerts, proxy, lifecycle policies) reading a demo fleet of 64 hosts × 8 GPUs
// × 2 services at 1 Hz through real SSH sessions (ssh2 client ↔ the demo's
// ssh2 servers on loopback), the demo fleet in a child process so that its
// CPU is not counted with the console's; it is reported on its own line.
//
//   node --expose-gc --import tsx test/bench/telemetry-fleet.ts [--minutes 10] [--hosts 64] [--gpus 8] [--services 2] [--warmup 60] [--traffic] [--read collector|tunnels|both]
//
// --read (issue #31 item 1): `collector` (default, the console's default: one
// exec per host per poll), `tunnels` (every host `telemetry.read: tunnels`: a
// GPU exec plus HTTP through each service's tunnel), or `both`: the two one
// after the other against the same demo fleet process, each with its own
// console, warm-up and measurement, printed side by side with the targets
// (main thread < 5 %, process < 8 % of one core).
//
// Figures: main-thread CPU (Linux per-thread account) [target < 15 % of one
// core], event-loop utilisation and process CPU (all threads); RSS each
// minute and its drift over the run after warm-up [target flat ±5 %]; bytes
// per tick sent to the renderer: the `fleet.tick` and `telemetry.tick` events
// as whole-state JSON (what the bridges sent before delta ticks) and as one
// bridge subscriber's delta-coded wire form (TickStreamEncoder over the api's
// events, what a browser tab or window now receives; that encoding is counted
// in the main-thread CPU, as `serve` with one tab does it); ticks that arrived
// and hosts connected; the demo fleet process's CPU and RSS, apart.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { parseDocument } from 'yaml';
import { silentLogger } from '../../src-main/core/base/index.js';
import { cpuMs } from './lib/children.js';
import { startApp } from '../../src-main/core/app.js';
import { createApi } from '../../src-main/core/api.js';
import { DELTA_CHANNELS, isDeltaChannel, TickStreamEncoder, type DeltaChannel } from '../../src-preload/contract/index.js';
import { WireAnatomy } from './lib/wire-anatomy.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const MINUTES = arg('minutes', 10);
const HOSTS = arg('hosts', 64);
const GPUS = arg('gpus', 8);
const SERVICES = arg('services', 2);
const WARMUP_S = arg('warmup', 60);
const TRAFFIC = process.argv.includes('--traffic');
/** --anatomy N: print the N heaviest paths of the deltas (what changes each second and what it costs). */
const ANATOMY = arg('anatomy', 0);
const READ_ARG = process.argv.indexOf('--read') >= 0 ? process.argv[process.argv.indexOf('--read') + 1] : 'collector';
if (READ_ARG !== 'collector' && READ_ARG !== 'tunnels' && READ_ARG !== 'both') throw new Error(`--read must be collector, tunnels or both, not ${READ_ARG}`);
const READS: readonly Read[] = READ_ARG === 'both' ? ['collector', 'tunnels'] : [READ_ARG];
type Read = 'collector' | 'tunnels';
const gc = (globalThis as { gc?: () => void }).gc;
const MiB = 1048576;
const fmt = (n: number, d = 1): string => n.toFixed(d);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * CPU time of the main thread alone (ms): Linux's per-thread account in
 * /proc/self/task/<pid>/stat (utime + stime, in clock ticks of 10 ms). Unlike
 * event-loop utilisation it does not count time the thread waited for a core
 * another process held (the demo fleet runs on the same 2 cores).
 */
function mainThreadCpuMs(): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/** Resident memory of another process (Linux /proc; NaN elsewhere). */
function rssOf(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gpu-console-telemetry-bench-'));
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'demo-fleet-process.ts'), join(dir, 'demo'), String(HOSTS), String(GPUS), String(SERVICES), TRAFFIC ? 'traffic' : 'quiet'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const configFile = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.on('line', (line) => {
      const ready = /^GPU Console demo fleet ready config=(\S+)/.exec(line);
      if (ready) resolve(ready[1]!);
    });
    child.once('exit', (code) => reject(new Error(`demo fleet exited ${code}`)));
  });
  console.log(`telemetry-fleet: ${HOSTS} hosts × ${GPUS} GPUs × ${SERVICES} services, 1 s polls through real SSH, ${MINUTES} min, demo traffic ${TRAFFIC ? 'on' : 'off'}, read by ${READS.join(' then ')} (node ${process.version})`);
  const results: PhaseResult[] = [];
  for (const read of READS) results.push(await measure(read, read === 'tunnels' ? tunnelsConfig(configFile) : configFile, join(dir, `console-${read}`), child.pid!));
  if (results.length > 1) {
    console.log('\nSide by side (same demo fleet process, one after the other):');
    for (const r of results) {
      console.log(`  ${r.read.padEnd(9)}: main thread ${fmt(r.mainPct, 2)} % [target < 5 %], process ${fmt(r.processPct, 2)} % [target < 8 %] of one core, RSS ${fmt(r.rssMiB)} MiB, ${fmt(r.ticksPerS, 2)} ticks/s`);
    }
  }
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
  rmSync(dir, { recursive: true, force: true });
}

interface PhaseResult {
  read: Read;
  mainPct: number;
  processPct: number;
  rssMiB: number;
  ticksPerS: number;
}

/** The demo's config with every host read through tunnels (`telemetry.read: tunnels`), beside it. */
function tunnelsConfig(configFile: string): string {
  const doc = parseDocument(readFileSync(configFile, 'utf8'));
  const hosts = doc.toJS() as { hosts: Record<string, unknown>[] };
  for (const h of hosts.hosts) h['telemetry'] = { ...((h['telemetry'] as object | undefined) ?? {}), read: 'tunnels' };
  const out = configFile.replace(/\.yaml$/, '-tunnels.yaml');
  writeFileSync(out, JSON.stringify(hosts, null, 1));
  return out;
}

/** Bytes to the renderer: per tick and per second for each coded channel, whole state and delta, beside the target. */
function printBytes(whole: Map<DeltaChannel, number>, wire: Map<DeltaChannel, number>, ticks: number, wallMs: number, keyframes: number, encodeMs: number): void {
  const s = wallMs / 1000;
  const kib = (bytes: number): string => `${fmt(bytes / s / 1024, 2)} KiB/s`;
  const sum = (m: Map<DeltaChannel, number>): number => [...m.values()].reduce((a, b) => a + b, 0);
  for (const [label, m] of [['whole state', whole], ['delta (one subscriber)', wire]] as const) {
    const parts = DELTA_CHANNELS.map((c) => `${c} ${kib(m.get(c) ?? 0)} (${fmt((m.get(c) ?? 0) / Math.max(1, ticks) / 1024)} KiB/tick)`);
    console.log(`  to the renderer, ${label}: ${parts.join(' + ')} = ${kib(sum(m))}`);
  }
  console.log(`  bytes to the renderer, delta ticks, all channels: ${kib(sum(wire))}   [target <= 30 KiB/s total, traffic on]   (${keyframes} keyframes; diff + stringify ${fmt(encodeMs / Math.max(1, ticks), 2)} ms per tick)`);
}

async function measure(read: Read, configFile: string, dataDir: string, childPid: number): Promise<PhaseResult> {
  console.log(`\n[${read}]`);
  const app = await startApp({ mode: 'web', version: 'bench', dataDir, configFile, logger: silentLogger });
  let ticks = 0;
  // Per channel: whole-state JSON (what the bridges sent before delta ticks) and one subscriber's wire form.
  const whole = new Map<DeltaChannel, number>();
  const wire = new Map<DeltaChannel, number>();
  let anatomy = new WireAnatomy();
  let keyframes = 0;
  let encodeMs = 0;
  let lastSnapshot: { connected: number; gpus: number; fresh: number; stale: number } = { connected: 0, gpus: 0, fresh: 0, stale: 0 };
  const addTo = (m: Map<DeltaChannel, number>, c: DeltaChannel, n: number): void => void m.set(c, (m.get(c) ?? 0) + n);
  app.onEvent((e) => {
    if (!isDeltaChannel(e.channel)) return;
    if (e.channel === 'fleet.tick') ticks++;
    addTo(whole, e.channel, Buffer.byteLength(JSON.stringify(e.payload)));
  });
  // One subscriber of a bridge: the api's (parsed, fresh) events through one encoder, as server.ts writes them.
  const api = createApi(app, silentLogger);
  const encoder = new TickStreamEncoder();
  api.onEvent((e) => {
    if (!isDeltaChannel(e.channel)) return;
    const t = performance.now();
    const out = encoder.encodeEvent(e.channel, e.payload) as { kind: string };
    const text = JSON.stringify(out);
    encodeMs += performance.now() - t;
    if (out.kind === 'key') keyframes++;
    else if (ANATOMY) anatomy.add(e.channel, out);
    addTo(wire, e.channel, Buffer.byteLength(text));
  });
  const census = (): void => {
    const s = app.fleet.snapshot();
    lastSnapshot = {
      connected: s.hosts.filter((h) => h.state === 'connected').length,
      gpus: s.hosts.reduce((n, h) => n + (h.gpuStale ? 0 : h.gpus.length), 0),
      fresh: s.hosts.reduce((n, h) => n + h.services.filter((x) => !x.stale && x.source?.atMs).length, 0),
      stale: s.hosts.reduce((n, h) => n + h.services.filter((x) => x.stale).length, 0),
    };
  };
  // Warm-up: every host connected, every tunnel open, a minute of series.
  const t0 = performance.now();
  for (;;) {
    census();
    if (lastSnapshot.connected === HOSTS && lastSnapshot.fresh === HOSTS * SERVICES) break;
    if (performance.now() - t0 > 180_000) {
      console.log(`  warm-up gave up after 180 s: ${JSON.stringify(lastSnapshot)}`);
      break;
    }
    await sleep(1000);
  }
  console.log(`  all hosts connected and every service read after ${fmt((performance.now() - t0) / 1000)} s: ${JSON.stringify(lastSnapshot)}`);
  await sleep(WARMUP_S * 1000);
  gc?.();
  const rss0 = process.memoryUsage().rss;
  const heap0 = process.memoryUsage().heapUsed;
  console.log(`  after ${WARMUP_S} s of polls: rss ${fmt(rss0 / MiB)} MiB, heapUsed ${fmt(heap0 / MiB)} MiB`);

  const elu0 = performance.eventLoopUtilization();
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadCpuMs();
  const fleetCpu0 = cpuMs(childPid);
  const wall0 = performance.now();
  const ticks0 = ticks;
  whole.clear();
  wire.clear();
  anatomy = new WireAnatomy();
  keyframes = 0;
  encodeMs = 0;
  const rss: number[] = [];
  for (let m = 1; m <= MINUTES; m++) {
    await sleep(60_000);
    gc?.();
    const mem = process.memoryUsage();
    rss.push(mem.rss);
    census();
    const elu = performance.eventLoopUtilization(elu0);
    console.log(
      `  min ${String(m).padStart(2)}: rss ${fmt(mem.rss / MiB)} MiB (${fmt(((mem.rss - rss0) / rss0) * 100, 1)} %), heapUsed ${fmt(mem.heapUsed / MiB)} MiB, main thread busy ${fmt(elu.utilization * 100, 2)} %, ${JSON.stringify(lastSnapshot)}`,
    );
  }
  const wallMs = performance.now() - wall0;
  const cpu = process.cpuUsage(cpu0);
  const main1 = mainThreadCpuMs();
  const fleetCpu = cpuMs(childPid) - fleetCpu0;
  const elu = performance.eventLoopUtilization(elu0);
  const n = ticks - ticks0;
  const minR = Math.min(...rss);
  const maxR = Math.max(...rss);
  console.log(`\nOver ${fmt(wallMs / 1000)} s (${n} ticks):`);
  const mainPct = main0 !== null && main1 !== null ? ((main1 - main0) / wallMs) * 100 : Number.NaN;
  const processPct = ((cpu.user + cpu.system) / 1000 / wallMs) * 100;
  console.log(`  main thread CPU (/proc task stat): ${fmt(mainPct, 2)} % of one core   [target < 5 %]`);
  console.log(`  main thread busy (event-loop utilisation, includes waiting for a core): ${fmt(elu.utilization * 100, 2)} %`);
  console.log(`  process CPU, all threads (user ${fmt(cpu.user / 1000)} ms + system ${fmt(cpu.system / 1000)} ms): ${fmt(processPct, 2)} % of one core   [target < 8 %]`);
  console.log(`  RSS over the run: ${fmt(minR / MiB)} … ${fmt(maxR / MiB)} MiB, spread ${fmt(((maxR - minR) / rss0) * 100, 2)} % of the post-warm-up RSS; last vs first minute ${fmt(((rss[rss.length - 1]! - rss[0]!) / rss[0]!) * 100, 2)} %   [target ±5 %]`);
  printBytes(whole, wire, n, wallMs, keyframes, encodeMs);
  if (ANATOMY) {
    console.log('  heaviest parts of the deltas (bytes per second, leaves per tick):');
    for (const [path, bytes, leaves] of anatomy.top(ANATOMY)) console.log(`    ${fmt(bytes / (wallMs / 1000) / 1024, 2).padStart(7)} KiB/s  ${fmt(leaves / Math.max(1, n), 1).padStart(7)}  ${path}`);
  }
  console.log(`  ticks per second: ${fmt(n / (wallMs / 1000), 2)} (1.00 = no round lost)`);
  console.log(`  the demo fleet's own process (not counted above): CPU ${fmt((fleetCpu / wallMs) * 100, 2)} % of one core, RSS ${fmt(rssOf(childPid) / MiB)} MiB`);
  const reads = app.fleet.snapshot().hosts.reduce<Record<string, number>>((m, h) => ({ ...m, [h.read?.mode ?? 'unknown']: (m[h.read?.mode ?? 'unknown'] ?? 0) + 1 }), {});
  console.log(`  hosts by how they were read: ${JSON.stringify(reads)}`);
  await api.dispose();
  await app.dispose();
  return { read, mainPct, processPct, rssMiB: (rss[rss.length - 1] ?? Number.NaN) / MiB, ticksPerS: n / (wallMs / 1000) };
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
