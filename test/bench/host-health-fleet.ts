// Benchmark (prints figures; not a test) of host health on a large fleet
// (issue #29, "Host health on 64 hosts: added CPU per poll round"): the
// console core (startApp) reading a demo fleet of 64 hosts × 8 GPUs × 2
// services through real SSH sessions, the demo fleet in a child process so its
// CPU is not counted with the console's (reported on its own line). Three runs
// of the same console against the same fleet, in one process:
//
//   off    host health off (health.intervalMs 0): the baseline
//   15 s   the default interval
//   5 s    the shortest interval the config takes, to measure the cost of
//          one health round with less noise
//   off 2  the baseline again, last: the noise floor between two runs
//
//   node --expose-gc --import tsx test/bench/host-health-fleet.ts [--seconds 60] [--hosts 64] [--gpus 8] [--services 2] [--warmup 20]
//
// Figures per run: the console's main-thread CPU (Linux per-thread account)
// and process CPU, fleet poll rounds (fleet.tick) and host-health readings
// counted over the window (a reading = one host's health.atMs changed), CPU
// per poll round, RSS after the run; then the added CPU of host health against
// the baseline, per poll round, per health reading of one host and per health
// round of the whole fleet. CPU is shared with the demo fleet's process on the
// same cores; compare the runs of one invocation.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { silentLogger } from '../../src-main/core/base/index.js';
import { startApp } from '../../src-main/core/app.js';
import { cpuMs } from './lib/children.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const SECONDS = arg('seconds', 60);
const HOSTS = arg('hosts', 64);
const GPUS = arg('gpus', 8);
const SERVICES = arg('services', 2);
const WARMUP_S = arg('warmup', 20);
const gc = (globalThis as { gc?: () => void }).gc;
const MiB = 1048576;
const fmt = (n: number, d = 1): string => n.toFixed(d);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU time of the main thread alone (ms), from /proc/self/task/<pid>/stat (10 ms ticks); null off Linux. */
function mainThreadCpuMs(): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

interface RunFigures {
  name: string;
  wallMs: number;
  mainCpuMs: number | null;
  processCpuMs: number;
  pollRounds: number;
  healthReadings: number;
  fleetCpuMs: number;
  rssMiB: number;
}

async function startFleet(dir: string): Promise<{ child: ChildProcess; configFile: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'demo-fleet-process.ts'), join(dir, 'demo'), String(HOSTS), String(GPUS), String(SERVICES), 'quiet'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const configFile = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      const ready = /^GPU Console demo fleet ready config=(\S+)/.exec(line);
      if (ready) resolve(ready[1]!);
    });
    child.once('exit', (code) => reject(new Error(`demo fleet exited ${code}`)));
  });
  return { child, configFile };
}

/** The fleet's config with a fleet-wide `health:` block (the demo's file has none), beside it so relative paths hold. */
function withHealth(configFile: string, intervalMs: number): string {
  const text = readFileSync(configFile, 'utf8');
  if (/^health:/m.test(text)) throw new Error(`${configFile} already has a health block`);
  const file = configFile.replace(/\.yaml$/, `-health-${intervalMs}.yaml`);
  writeFileSync(file, `${text.trimEnd()}\nhealth:\n  intervalMs: ${intervalMs}\n`);
  return file;
}

async function run(name: string, dir: string, configFile: string, fleetPid: number, healthOn: boolean): Promise<RunFigures> {
  const app = await startApp({ mode: 'web', version: 'bench', dataDir: join(dir, `console-${name.replace(/\W+/g, '')}`), configFile, logger: silentLogger });
  let ticks = 0;
  app.onEvent((e) => {
    if (e.channel === 'fleet.tick') ticks++;
  });
  const healthAt = new Map<string, number | null>();
  let readings = 0;
  const census = () => {
    const hosts = app.fleet.state().hosts;
    for (const h of hosts) {
      const at = h.health?.atMs ?? null;
      if (at !== null && healthAt.get(h.label) !== at) readings++;
      healthAt.set(h.label, at);
    }
    return {
      connected: hosts.filter((h) => h.session.state === 'connected').length,
      healthRead: hosts.filter((h) => h.health?.atMs != null).length,
      fresh: hosts.reduce((n, h) => n + h.services.filter((s) => s.stale === null && s.reading !== null).length, 0),
    };
  };
  const t0 = performance.now();
  for (;;) {
    const c = census();
    if (c.connected === HOSTS && c.fresh === HOSTS * SERVICES && (!healthOn || c.healthRead === HOSTS)) break;
    if (performance.now() - t0 > 180_000) {
      console.log(`  [${name}] warm-up gave up after 180 s: ${JSON.stringify(c)}`);
      break;
    }
    await sleep(500);
  }
  console.log(`  [${name}] every host connected and read after ${fmt((performance.now() - t0) / 1000)} s; warming up ${WARMUP_S} s`);
  await sleep(WARMUP_S * 1000);
  gc?.();
  census();
  readings = 0;
  const ticks0 = ticks;
  const main0 = mainThreadCpuMs();
  const cpu0 = process.cpuUsage();
  const fleet0 = cpuMs(fleetPid);
  const wall0 = performance.now();
  // Health readings are counted once a second: a reading lands on its own interval, never twice a second.
  while (performance.now() - wall0 < SECONDS * 1000) {
    await sleep(1000);
    census();
  }
  const wallMs = performance.now() - wall0;
  const main1 = mainThreadCpuMs();
  const cpu = process.cpuUsage(cpu0);
  const figures: RunFigures = {
    name,
    wallMs,
    mainCpuMs: main0 !== null && main1 !== null ? main1 - main0 : null,
    processCpuMs: (cpu.user + cpu.system) / 1000,
    pollRounds: ticks - ticks0,
    healthReadings: readings,
    fleetCpuMs: cpuMs(fleetPid) - fleet0,
    rssMiB: process.memoryUsage().rss / MiB,
  };
  await app.dispose();
  return figures;
}

function print(f: RunFigures): void {
  const pct = (ms: number) => `${fmt((ms / f.wallMs) * 100, 2)} %`;
  const main = f.mainCpuMs === null ? 'n/a' : `${pct(f.mainCpuMs)} of one core (${fmt(f.mainCpuMs / Math.max(1, f.pollRounds), 2)} ms per poll round)`;
  console.log(
    `  ${f.name.padEnd(6)} main thread ${main}; process ${pct(f.processCpuMs)}; ${f.pollRounds} poll rounds, ${f.healthReadings} host-health readings` +
      ` (${fmt(f.healthReadings / HOSTS, 1)} per host); RSS ${fmt(f.rssMiB)} MiB; demo fleet process ${pct(f.fleetCpuMs)}`,
  );
}

const perSecond = (r: RunFigures): number => (r.mainCpuMs ?? Number.NaN) / (r.wallMs / 1000);

/** Two runs as one of their summed length (CPU and counts add up). */
function mean(a: RunFigures, b: RunFigures): RunFigures {
  return {
    name: 'off (both)',
    wallMs: a.wallMs + b.wallMs,
    mainCpuMs: a.mainCpuMs === null || b.mainCpuMs === null ? null : a.mainCpuMs + b.mainCpuMs,
    processCpuMs: a.processCpuMs + b.processCpuMs,
    pollRounds: a.pollRounds + b.pollRounds,
    healthReadings: a.healthReadings + b.healthReadings,
    fleetCpuMs: a.fleetCpuMs + b.fleetCpuMs,
    rssMiB: Math.max(a.rssMiB, b.rssMiB),
  };
}

function added(base: RunFigures, f: RunFigures): void {
  if (base.mainCpuMs === null || f.mainCpuMs === null) return;
  // Per second of wall time, so runs of slightly different length compare.
  const perS = (r: RunFigures, ms: number) => ms / (r.wallMs / 1000);
  const extraMainPerS = perS(f, f.mainCpuMs) - perS(base, base.mainCpuMs);
  const extraProcPerS = perS(f, f.processCpuMs) - perS(base, base.processCpuMs);
  const roundsPerS = f.pollRounds / (f.wallMs / 1000);
  const readingsPerS = f.healthReadings / (f.wallMs / 1000);
  console.log(
    `  ${f.name}: main thread +${fmt(extraMainPerS / 10, 2)} % of one core (${fmt(extraMainPerS, 1)} ms/s), process +${fmt(extraProcPerS / 10, 2)} %;` +
      ` added main-thread CPU per poll round ${fmt(extraMainPerS / Math.max(roundsPerS, 1e-9), 2)} ms,` +
      ` per host-health reading ${readingsPerS > 0 ? fmt(extraMainPerS / readingsPerS, 2) : 'n/a'} ms, per ${HOSTS}-host health round ${readingsPerS > 0 ? fmt((extraMainPerS / readingsPerS) * HOSTS, 1) : 'n/a'} ms`,
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gpu-console-health-bench-'));
  const { child, configFile } = await startFleet(dir);
  console.log(`host-health-fleet: ${HOSTS} hosts × ${GPUS} GPUs × ${SERVICES} services through real SSH; ${SECONDS} s measured per run after ${WARMUP_S} s (node ${process.version})`);
  try {
    const off = await run('off', dir, withHealth(configFile, 0), child.pid!, false);
    const every15 = await run('15 s', dir, withHealth(configFile, 15_000), child.pid!, true);
    const every5 = await run('5 s', dir, withHealth(configFile, 5_000), child.pid!, true);
    // The baseline again, last: how far two runs of the same console differ on this machine (the noise floor).
    const offAgain = await run('off 2', dir, withHealth(configFile, 0), child.pid!, false);
    console.log('\nFigures:');
    for (const f of [off, every15, every5, offAgain]) print(f);
    const base = mean(off, offAgain);
    console.log(`\nAgainst the mean of the two baseline runs (they differ by ${fmt(Math.abs(perSecond(off) - perSecond(offAgain)), 1)} ms/s of main-thread CPU: the noise floor):`);
    added(base, every15);
    added(base, every5);
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
