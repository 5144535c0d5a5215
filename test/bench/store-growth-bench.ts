// Store growth, part 2 (prints figures; not a test): times the console on a
// folder made by test/bench/store-growth.ts, through the app's real code paths,
// each figure beside its target and beside the same figure on an empty store
// with the same 64-host config (the baseline, measured in this script):
//
//   - database size;
//   - start-up to ready: `gpu-console serve --data-dir DIR --json` spawned, timed to its ready line;
//   - a 7-day evidence report: `reports.preview` through the running console's web bridge (the
//     evidence and its HTML, store only: live checks off, the hosts are unreachable), and one
//     `gpu-console report build --no-live` (md, html, json written and digested);
//   - the Proxy view's recent requests: RequestLog.query with the view's limit (2000) and each filter,
//     in process and as `proxy.requests` through the bridge (which adds the retention view);
//   - `gpu-console audit verify` on the folder (rows/s) and on the tampered copy (must say BROKEN);
//   - the Host view's 1-hour chart at the end of the 90 days (and 60 days back), SeriesStore.query
//     on a restarted store (nothing in memory) and `telemetry.series` through the bridge.
//
//   node --import tsx test/bench/store-growth-bench.ts --dir DIR [--runs 3] [--skip-console]
//
// Needs the built app (node node_modules/electron-vite/bin/electron-vite.js build). The console is
// started on DIR itself: it appends its own audit events and prunes by the wall clock, so measure soon
// after generating (or on a copy).
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { callRunningConsole } from '../../src-main/cli/bridge-client.js';
import { silentLogger } from '../../src-main/core/base/index.js';
import { RequestLog } from '../../src-main/core/proxy/request-log.js';
import { openStore } from '../../src-main/core/store/index.js';
import { SeriesStore } from '../../src-main/core/telemetry/index.js';
import { panelPatterns } from '../../src-renderer/src/features/host/host-panels.js';
import type { RequestQuery } from '../../src-preload/contract/index.js';
import { median, printVerdicts, verdict, type Verdict } from './lib/figures.js';
import { DAY_MS, MODELS, SimClock, hostLabel, type GrowthPlan } from './lib/store-growth-fill.js';

function argText(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}
const DIR = resolve(argText('dir') ?? '');
const RUNS = Number(argText('runs') ?? 3);
const SKIP_CONSOLE = process.argv.includes('--skip-console');
const BIN = resolve('bin/gpu-console.js');
const MiB = 1_048_576;
const fmt = (n: number, d = 1) => n.toFixed(d);
const int = (n: number) => Math.round(n).toLocaleString('en-US');

interface Manifest {
  plan: GrowthPlan;
  result: { endMs: number };
}

function time<T>(fn: () => T): [T, number] {
  const t0 = performance.now();
  const v = fn();
  return [v, performance.now() - t0];
}

async function timeAsync<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const v = await fn();
  return [v, performance.now() - t0];
}

/** Median and max of `n` timed runs after one untimed warm-up. */
function repeat(n: number, fn: () => unknown): { med: number; max: number; first: number } {
  const [, first] = time(fn);
  const ts: number[] = [];
  for (let i = 0; i < n; i++) ts.push(time(fn)[1]);
  return { med: median(ts), max: Math.max(...ts), first };
}

async function repeatAsync(n: number, fn: () => Promise<unknown>): Promise<{ med: number; max: number; first: number }> {
  const [, first] = await timeAsync(fn);
  const ts: number[] = [];
  for (let i = 0; i < n; i++) ts.push((await timeAsync(fn))[1]);
  return { med: median(ts), max: Math.max(...ts), first };
}

interface Console {
  readyMs: number;
  stop(): Promise<void>;
}

/** Spawns the built console on `dataDir` and resolves when its JSON ready line arrives. */
function startConsole(dataDir: string): Promise<Console> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', dataDir, '--config', join(dataDir, 'config.yaml'), '--json', '--ui-port', '0', '--proxy-port', '0', '--log-level', 'warn'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (c: Buffer) => {
    err = (err + c.toString()).slice(-4000);
  });
  return new Promise((resolveReady, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`console on ${dataDir} not ready within 60 s:\n${err}`));
    }, 60_000);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`console exited ${code} before ready:\n${err}`));
    };
    child.once('exit', onExit);
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (!/"event":"ready"/.test(out)) return;
      const readyMs = performance.now() - t0;
      clearTimeout(timer);
      child.off('exit', onExit);
      resolveReady({
        readyMs,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
            child.once('exit', () => {
              clearTimeout(kill);
              done();
            });
            child.kill('SIGINT');
          }),
      });
    });
  });
}

function cli(args: string[]): Promise<{ code: number; out: string; ms: number }> {
  const t0 = performance.now();
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.once('exit', (code) => done({ code: code ?? -1, out: out.trim(), ms: performance.now() - t0 }));
  });
}

/** The Proxy view's query shapes (RequestsTable: limit 2000, a model, a class, an outcome). */
function proxyQueries(plan: GrowthPlan): { name: string; q: RequestQuery }[] {
  const model = MODELS[1]!.model;
  return [
    { name: 'newest 2000', q: { limit: 2000, outcome: 'all' } },
    { name: 'model', q: { limit: 2000, outcome: 'all', model } },
    { name: 'class batch', q: { limit: 2000, outcome: 'all', class: 'batch' } },
    { name: 'errors', q: { limit: 2000, outcome: 'error' } },
    { name: 'model + errors', q: { limit: 2000, outcome: 'error', model } },
    { name: 'model + class + errors', q: { limit: 2000, outcome: 'error', model, class: 'interactive' } },
    { name: 'model never seen', q: { limit: 2000, outcome: 'all', model: 'no-such-model' } },
    { name: 'next page (mid-table)', q: { limit: 2000, outcome: 'all', beforeSeq: Math.floor(plan.requests / 2) } },
  ];
}

async function main(): Promise<void> {
  const manifest = JSON.parse(readFileSync(join(DIR, 'store-growth.json'), 'utf8')) as Manifest;
  const { plan } = manifest;
  const endMs = manifest.result.endMs;
  const host0 = hostLabel(0, plan.hosts);
  const dbFile = join(DIR, 'gpu-console.db');
  const verdicts: Verdict[] = [];
  console.log(`store-growth-bench on ${DIR}: ${plan.days} days × ${plan.hosts} hosts × ${plan.gpus} GPUs, ${int(plan.requests)} requests, ${int(plan.audit)} audit events (node ${process.version})`);

  // — size —
  const size = statSync(dbFile).size;
  verdicts.push({ name: 'database size (as generated)', figure: `${fmt(size / MiB)} MiB`, target: 'none (reported)', pass: null });

  // — in process: the Proxy view's query, the Host view's chart query, audit verify —
  const clock = new SimClock(endMs);
  const [store, openMs] = time(() => openStore({ file: dbFile, clock }));
  const migrated = statSync(dbFile).size;
  console.log('\nIn process (the app\'s own query code on the generated file):');
  console.log(`  openStore: ${fmt(openMs)} ms (pending migrations included: a folder generated by an older schema is upgraded here)${migrated !== size ? `; file ${fmt(size / MiB)} → ${fmt(migrated / MiB)} MiB` : ''}`);
  const log = new RequestLog({ db: store.db, clock, logger: silentLogger });
  let worstProxy = 0;
  for (const { name, q } of proxyQueries(plan)) {
    let rows = 0;
    const r = repeat(10, () => (rows = log.query(q).length));
    worstProxy = Math.max(worstProxy, r.med);
    console.log(`  proxy requests, ${name.padEnd(24)} ${String(rows).padStart(5)} rows: median ${fmt(r.med, 2)} ms, max ${fmt(r.max, 2)} ms, first ${fmt(r.first, 2)} ms`);
  }
  log.dispose();
  const retention = repeat(5, () => new RequestLog({ db: store.db, clock, logger: silentLogger }).retentionView());
  console.log(`  proxy retention view (row count, oldest; cached 10 s): median ${fmt(retention.med, 2)} ms`);
  verdicts.push(verdict('Proxy view query (worst filter, in process)', worstProxy, '≤', 50, ' ms'));

  const series = new SeriesStore({ db: store.db, clock });
  const metrics = panelPatterns();
  const chart = (endAt: number, range: '1h' | '24h' | '7d') => {
    let points = 0;
    let tiers = '';
    const r = repeat(15, () => {
      const res = series.query({ host: host0, range, metrics, endMs: endAt });
      points = res.t.length * res.series.length;
      tiers = res.tiers.join('+');
    });
    return { ...r, points, tiers };
  };
  const c1 = chart(endMs, '1h');
  const c60 = chart(endMs - 60 * DAY_MS, '1h');
  const c24 = chart(endMs, '24h');
  const c7 = chart(endMs, '7d');
  for (const [name, c] of [['1 h at the end', c1], ['1 h, 60 days back', c60], ['24 h at the end', c24], ['7 d at the end', c7]] as const) {
    console.log(`  chart ${name.padEnd(18)} ${String(c.points).padStart(6)} points from ${c.tiers || 'nothing'}: median ${fmt(c.med, 2)} ms, max ${fmt(c.max, 2)} ms, first ${fmt(c.first, 2)} ms`);
  }
  verdicts.push(verdict('1 h chart at the end of 90 days (in process)', c1.med, '≤', 100, ' ms'));
  verdicts.push(verdict('1 h chart 60 days back (in process)', c60.med, '≤', 100, ' ms'));
  series.dispose();
  const [v, verifyMs] = time(() => store.audit.verify());
  console.log(`  audit verify: ${int(v.count)} rows in ${fmt(verifyMs)} ms → ${int((v.count / verifyMs) * 1000)} rows/s (${v.ok ? 'ok' : 'BROKEN'})`);
  verdicts.push({ name: 'audit verify (in process)', figure: `${int((v.count / verifyMs) * 1000)} rows/s`, target: 'none (reported)', pass: null });
  store.close();

  if (!SKIP_CONSOLE) await consoleFigures(plan, endMs, host0, metrics, verdicts);

  console.log('\nFigures beside their targets:');
  printVerdicts(verdicts);
  const missed = verdicts.filter((x) => x.pass === false);
  console.log(missed.length ? `\nmissed: ${missed.map((x) => x.name).join('; ')}` : '\nall targets met');
}

async function consoleFigures(plan: GrowthPlan, endMs: number, host0: string, metrics: string[], verdicts: Verdict[]): Promise<void> {
  // Baseline: the same config on an empty store.
  const empty = mkdtempSync(join(tmpdir(), 'gpu-console-growth-empty-'));
  cpSync(join(DIR, 'config.yaml'), join(empty, 'config.yaml'));
  cpSync(join(DIR, 'known_hosts'), join(empty, 'known_hosts'));
  const report7d = { fromMs: endMs - 7 * DAY_MS, toMs: endMs, live: false } as const;
  const baseline = { ready: [] as number[], report: 0, requests: 0, chart: 0 };
  try {
    for (let i = 0; i < RUNS; i++) {
      const c = await startConsole(empty);
      baseline.ready.push(c.readyMs);
      if (i === RUNS - 1) {
        baseline.report = (await repeatAsync(2, () => callRunningConsole(empty, 'reports.preview', { request: report7d }, { timeoutMs: 120_000 }))).med;
        baseline.requests = (await repeatAsync(5, () => callRunningConsole(empty, 'proxy.requests', { limit: 2000, outcome: 'all' }))).med;
        baseline.chart = (await repeatAsync(5, () => callRunningConsole(empty, 'telemetry.series', { host: host0, range: '1h', metrics, endMs }))).med;
      }
      await c.stop();
    }
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }

  console.log(`\nThe console on the generated folder (baseline: the same ${plan.hosts}-host config on an empty store):`);
  const ready: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const c = await startConsole(DIR);
    ready.push(c.readyMs);
    console.log(`  start ${i + 1}: ready in ${fmt(c.readyMs)} ms (empty store: ${fmt(baseline.ready[i] ?? NaN)} ms)`);
    if (i < RUNS - 1) {
      await c.stop();
      continue;
    }
    const rep = await repeatAsync(2, async () => {
      const r = await callRunningConsole(DIR, 'reports.preview', { request: report7d }, { timeoutMs: 120_000 });
      return r.html.length;
    });
    console.log(`  7-day report preview (evidence + HTML, ${plan.hosts} hosts, no live checks): median ${fmt(rep.med)} ms, first ${fmt(rep.first)} ms (empty store ${fmt(baseline.report)} ms, ×${fmt(rep.med / baseline.report, 2)})`);
    verdicts.push(verdict('7-day evidence report (reports.preview)', rep.med / 1000, '≤', 5, ' s'));
    const out = mkdtempSync(join(tmpdir(), 'gpu-console-growth-report-'));
    const build = await cli(['report', 'build', '--data-dir', DIR, '--no-live', '--since', new Date(endMs - 7 * DAY_MS).toISOString(), '--until', new Date(endMs).toISOString(), '--format', 'md,html,json', '--out', out]);
    rmSync(out, { recursive: true, force: true });
    console.log(`  gpu-console report build --no-live (7 days, md+html+json, CLI process included): ${fmt(build.ms)} ms, exit ${build.code}`);
    verdicts.push(verdict('7-day report build (CLI, files written)', build.ms / 1000, '≤', 5, ' s'));

    let worst = 0;
    for (const { name, q } of proxyQueries(plan)) {
      let rows = 0;
      const r = await repeatAsync(5, async () => (rows = (await callRunningConsole(DIR, 'proxy.requests', q)).rows.length));
      worst = Math.max(worst, r.med);
      console.log(`  proxy.requests via the bridge, ${name.padEnd(24)} ${String(rows).padStart(5)} rows: median ${fmt(r.med, 2)} ms, first ${fmt(r.first, 2)} ms`);
    }
    console.log(`    (empty store, newest 2000: ${fmt(baseline.requests, 2)} ms)`);
    verdicts.push(verdict('Proxy view query (worst filter, via the bridge)', worst, '≤', 50, ' ms'));

    const ch = await repeatAsync(10, () => callRunningConsole(DIR, 'telemetry.series', { host: host0, range: '1h', metrics, endMs }));
    console.log(`  telemetry.series 1 h via the bridge: median ${fmt(ch.med, 2)} ms, first ${fmt(ch.first, 2)} ms (empty store ${fmt(baseline.chart, 2)} ms)`);
    verdicts.push(verdict('1 h chart at the end of 90 days (via the bridge)', ch.med, '≤', 100, ' ms'));

    const verify = await cli(['audit', 'verify', '--data-dir', DIR, '--json']);
    const vr = JSON.parse(verify.out.split('\n').pop() ?? '{}') as { ok?: boolean; count?: number };
    console.log(`  gpu-console audit verify (running console): ${vr.ok ? 'ok' : 'BROKEN'}, ${int(vr.count ?? 0)} rows in ${fmt(verify.ms)} ms (CLI process included) → ${int(((vr.count ?? 0) / verify.ms) * 1000)} rows/s`);
    verdicts.push({ name: 'audit verify (CLI)', figure: `${int(((vr.count ?? 0) / verify.ms) * 1000)} rows/s`, target: 'none (reported)', pass: null });
    await c.stop();
  }
  verdicts.push(verdict('start-up to ready (median)', median(ready) / 1000, '≤', 3, ' s'));
  console.log(`  start-up median ${fmt(median(ready))} ms vs empty store ${fmt(median(baseline.ready))} ms (×${fmt(median(ready) / median(baseline.ready), 2)})`);

  const tampered = `${DIR}.tampered`;
  const t = await cli(['audit', 'verify', '--data-dir', tampered]);
  const caught = t.code !== 0 && /BROKEN at event #\d+/.test(t.out);
  console.log(`  gpu-console audit verify on ${tampered}: exit ${t.code}, "${t.out.split('\n')[0]}" → ${caught ? 'tampering detected' : 'NOT DETECTED'}`);
  verdicts.push({ name: 'audit verify detects the tampered copy', figure: caught ? 'detected' : 'NOT detected', target: 'detected', pass: caught });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
