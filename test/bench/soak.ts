// Benchmark-style soak with faults (prints figures; not a test, not in npm test):
// the built console (`gpu-console serve --config`) as a child process reading
// the demo fleet (`gpu-console demo-fleet`, its own process) and one real
// OpenSSH sshd in a network namespace with a model server behind it; clients
// send chat completions through the proxy at two classes (interactive tokens,
// non-streaming; batch tokens, streaming); every --fault-every one fault in
// rotation: link cut, model server killed and restarted, sshd restarted, a
// host-key change (refused, then restored), the console's own SIGTERM and
// restart, a full data disk (a tmpfs of its own, filled to the last byte).
// It reports requests sent / served / refused with Retry-After / failed
// without one / held past their budget, the console's RSS, heap, fds and child
// processes per run (drift after warm-up), the SQLite files' sizes, each
// shutdown's drain time, and at the end `audit verify` and integrity_check.
// Needs root (network namespace, tmpfs) and the build (`npm run build`).
//
//   npx tsx test/bench/soak.ts [--duration 4m] [--fault-every 20s] [--hold 10s] [--warmup 60s]
//       [--interactive-clients 2] [--batch-clients 2] [--pause 500ms] [--faults link-cut,server-kill,…]
//       [--snapshot | --build DIR] [--keep] [--fleet-traffic] [--netns-transport openssh|builtin] [--disk-mib 512]
//   1 hour: npx tsx test/bench/soak.ts --duration 1h --fault-every 120s --warmup 2m --snapshot
// A fault holds half its period, at most a minute (--hold sets it).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { ROOT } from '../helpers/imports.js';
import { runContext } from './lib/figures.js';
import { FAULTS, runFault, type FaultContext, type FaultName, type FaultRecord } from './soak-faults.js';
import { sample, type Sample } from './soak-probe.js';
import { printOutcomes, printResources, printVerdicts, runDrifts, verdicts, type EndChecks } from './soak-report.js';
import { closeTraffic, oneRequest, runClients, type Cls, type Outcome, type TrafficOptions } from './soak-traffic.js';
import { NETNS_MODEL, SoakWorld, snapshotBuild } from './soak-world.js';

/** What serve promises: SIGTERM drains in-flight work and exits within this (src-main/cli/serve.ts). */
const DRAIN_DEADLINE_MS = 10_000;
const SAMPLE_EVERY_MS = 5_000;

/** "90s", "4m", "1h", "500ms" → ms. */
function durationMs(text: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text.trim());
  if (!m) throw new Error(`--${flag}: a duration like 500ms, 90s, 4m or 1h, not "${text}"`);
  return Number(m[1]) * { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
}

function options() {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '4m' },
      'fault-every': { type: 'string', default: '20s' },
      hold: { type: 'string' },
      warmup: { type: 'string', default: '60s' },
      'interactive-clients': { type: 'string', default: '2' },
      'batch-clients': { type: 'string', default: '2' },
      pause: { type: 'string', default: '500ms' },
      faults: { type: 'string', default: FAULTS.join(',') },
      snapshot: { type: 'boolean', default: false },
      build: { type: 'string' },
      keep: { type: 'boolean', default: false },
      'fleet-traffic': { type: 'boolean', default: false },
      'netns-transport': { type: 'string', default: 'openssh' },
      'disk-mib': { type: 'string', default: '512' },
    },
  });
  const faultEveryMs = durationMs(values['fault-every'], 'fault-every');
  const faults = values.faults.split(',').map((f) => f.trim()) as FaultName[];
  for (const f of faults) if (!FAULTS.includes(f)) throw new Error(`--faults: ${f} is not one of ${FAULTS.join(', ')}`);
  const transport = values['netns-transport'];
  if (transport !== 'openssh' && transport !== 'builtin') throw new Error('--netns-transport: openssh or builtin');
  return {
    durationMs: durationMs(values.duration, 'duration'),
    faultEveryMs,
    // A fault lasts half its period, a minute at most (the issue's "full-disk minute").
    holdMs: values.hold ? durationMs(values.hold, 'hold') : Math.min(60_000, Math.round(faultEveryMs / 2)),
    warmupMs: durationMs(values.warmup, 'warmup'),
    clients: { interactive: Number(values['interactive-clients']), batch: Number(values['batch-clients']) } as Record<Cls, number>,
    pauseMs: durationMs(values.pause, 'pause'),
    faults,
    snapshot: values.snapshot,
    /** A folder with bin/, out/ and node_modules (a copy made beforehand); default this checkout. */
    build: values.build ?? null,
    keep: values.keep,
    fleetTraffic: values['fleet-traffic'],
    netnsTransport: transport as 'openssh' | 'builtin',
    diskMiB: Number(values['disk-mib']),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const stamp = (t0: number) => `[${new Date().toISOString().slice(11, 19)} +${((performance.now() - t0) / 1000).toFixed(0)} s]`;

/** Demo models that answer through the proxy now (a sleeping one would only measure its wake). */
async function answeringModels(world: SoakWorld, traffic: TrafficOptions): Promise<string[]> {
  const ok: string[] = [];
  for (const m of world.demoModels) if ((await oneRequest(traffic, 'interactive', m)).kind === 'served') ok.push(m);
  return ok;
}

async function endChecks(world: SoakWorld): Promise<EndChecks> {
  const stop = await world.stopConsole();
  const auditVerify = world.cliRun(['audit', 'verify']);
  const db = new Database(join(world.dataDir, 'gpu-console.db'), { readonly: true });
  const rows = db.pragma('integrity_check') as Array<{ integrity_check: string }>;
  db.close();
  return { auditVerify, integrity: rows.map((r) => r.integrity_check).join('; '), leftBehind: stop.leftBehind, finalDrainMs: stop.drainMs, finalCode: stop.code, finalLines: stop.lines };
}

async function main(): Promise<void> {
  const o = options();
  const work = mkdtempSync(join(tmpdir(), 'gc-soak-'));
  const buildRoot = o.build ?? (o.snapshot ? snapshotBuild(join(work, 'build')) : ROOT);
  const world = new SoakWorld(work, buildRoot, { fleetTraffic: o.fleetTraffic, netnsTransport: o.netnsTransport, diskMiB: o.diskMiB });
  const t0 = performance.now();
  console.log(
    `soak: ${o.durationMs / 60_000} min, a fault every ${o.faultEveryMs / 1000} s held ${o.holdMs / 1000} s (${o.faults.join(' → ')}), ` +
      `${o.clients.interactive} interactive + ${o.clients.batch} batch clients, warm-up ${o.warmupMs / 1000} s; work folder ${work}; build ${buildRoot}`,
  );
  console.log(`at start: ${runContext()}`);
  try {
    console.log(`${stamp(t0)} data folder on its own tmpfs: ${world.mountDataTmpfs() ? `yes (${o.diskMiB} MiB)` : 'NO (mount failed): the full-disk fault is skipped'}`);
    await world.startNetns();
    const configFile = world.writeConsoleConfig(await world.startFleet());
    world.issueTokens();
    await world.startConsole(configFile);
    console.log(`${stamp(t0)} console ready in ${(world.console!.readyMs / 1000).toFixed(1)} s (pid ${world.console!.pid}); proxy ${world.console!.proxy}`);

    const downWindows: Array<[number, number]> = [];
    let models: string[] = [];
    const traffic: TrafficOptions = {
      proxyUrl: () => `http://127.0.0.1:${world.proxyPort}`,
      token: (cls) => world.tokens[cls],
      pickModel: () => (Math.random() < 0.5 || models.length === 0 ? NETNS_MODEL : models[Math.floor(Math.random() * models.length)]!),
      consoleDownAt: (ms) => downWindows.some(([a, b]) => ms >= a && ms <= b),
      clients: o.clients,
      pauseMs: o.pauseMs,
    };
    // The netns model must answer before the clock starts: its tunnel proves itself end to end first.
    const up = performance.now();
    while ((await oneRequest(traffic, 'interactive', NETNS_MODEL)).kind !== 'served') {
      if (performance.now() - up > 60_000) throw new Error(`the netns model did not answer through the proxy within 60 s; see ${world.console!.log}`);
      await sleep(500);
    }
    models = await answeringModels(world, traffic);
    console.log(`${stamp(t0)} models: ${NETNS_MODEL} (netns, half the traffic) + ${models.join(', ') || 'no demo model answering'}`);

    const samples: Sample[] = [];
    let run = 0;
    const sampler = setInterval(() => {
      const c = world.console;
      const s = c ? sample(c.pid, run, world.dataDir, world.heapFile) : null;
      if (s) samples.push(s);
    }, SAMPLE_EVERY_MS);
    const outcomes: Outcome[] = [];
    const endAt = performance.now() + o.durationMs;
    const clients = runClients(traffic, () => performance.now() >= endAt, (x) => outcomes.push(x));
    const ctx: FaultContext = { world, configFile, holdMs: o.holdMs, traffic, downWindows, onConsoleRestarted: () => run++ };
    const faults: FaultRecord[] = [];
    let next = performance.now() + Math.min(o.warmupMs, o.faultEveryMs);
    for (let i = 0; ; i++) {
      await sleep(Math.max(0, next - performance.now()));
      // A fault starts only when it (and its recovery) can finish before the end.
      if (performance.now() + o.holdMs + 30_000 > endAt) break;
      const name = o.faults[i % o.faults.length]!;
      console.log(`${stamp(t0)} fault ${name} (${outcomes.length} requests so far, ${outcomes.filter((x) => x.kind === 'failed').length} failed without Retry-After)`);
      const rec = await runFault(ctx, name);
      faults.push(rec);
      console.log(`${stamp(t0)}   ${rec.recoveredMs === null ? 'NOT recovered' : `recovered after ${((rec.recoveredMs - rec.startMs) / 1000).toFixed(1)} s`}${rec.notes.length ? `; ${rec.notes.join('; ')}` : ''}`);
      next = rec.startMs + o.faultEveryMs;
    }
    await clients;
    clearInterval(sampler);
    const end = await endChecks(world);
    await closeTraffic();

    printOutcomes(outcomes, faults, t0);
    const drifts = runDrifts(samples, o.warmupMs);
    printResources(samples, drifts);
    console.log(`\nfinal SIGTERM: exit ${end.finalCode} after ${(end.finalDrainMs / 1000).toFixed(2)} s; audit verify: ${end.auditVerify.out.trim().split('\n')[0]}`);
    for (const l of end.finalLines) console.log(`  ${l}`);
    console.log(`at end: ${runContext()}`);
    console.log('targets:');
    printVerdicts(verdicts(outcomes, drifts, faults, end, DRAIN_DEADLINE_MS));
  } finally {
    await world.dispose(o.keep);
    if (o.keep) console.log(`kept: ${work} (console-N.log, demo-fleet.log, data-kept/: the data folder as the run left it)`);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
