// Store growth, part 1 (prints figures and checks; not a test): fills a console
// data folder with a fleet's history through the app's own write paths
// (test/bench/lib/store-growth-fill.ts), then checks what the store must do at
// that size — retention and downsampling delete exactly what they should, the
// request log's retention too, the -wal file stays bounded, the audit chain
// verifies and a tampered row in a copy is caught at its seq. Part 2,
// test/bench/store-growth-bench.ts, times the console on the folder.
//
//   node --import tsx test/bench/store-growth.ts [--days 90 --hosts 64 --gpus 8 --requests 1000000 --audit 100000] [--seed 1] --out DIR [--force]
//
// Defaults are a quick run (10 days, 4 hosts, 20,000 requests, 2,000 audit events). The folder holds
// gpu-console.db, a config.yaml naming the generated hosts (unreachable on 127.0.0.1:9, so a console
// started on it reads the store and contacts nothing), and store-growth.json (the plan and the end time).
// A copy of the audit log with one row altered is written to DIR.tampered/ (for `audit verify`).
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { silentLogger } from '../../src-main/core/base/index.js';
import { RequestLog } from '../../src-main/core/proxy/request-log.js';
import { openStore, verifyAuditChain, type Store } from '../../src-main/core/store/index.js';
import { SeriesStore } from '../../src-main/core/telemetry/index.js';
import {
  DAY_MS,
  MODELS,
  PRICE_PER_GPU_HOUR_USD,
  REQUEST_MAX_ROWS,
  REQUEST_RETENTION_MS,
  SimClock,
  fillStore,
  hostLabel,
  modelOf,
  type FillResult,
  type GrowthPlan,
} from './lib/store-growth-fill.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} needs a number`);
  return v;
}
function argText(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}

const MiB = 1_048_576;
const fmt = (n: number, d = 1) => n.toFixed(d);
const int = (n: number) => Math.round(n).toLocaleString('en-US');
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

let failures = 0;
function check(ok: boolean, what: string): void {
  console.log(`  ${ok ? 'ok  ' : 'FAIL'}  ${what}`);
  if (!ok) failures++;
}

function fileSize(f: string): number {
  try {
    return statSync(f).size;
  } catch {
    return 0;
  }
}

/** Retention: a restarted series store prunes at the end time; each tier keeps exactly the rows inside its window. */
function checkRetention(store: Store, r: FillResult, clock: SimClock): void {
  const series = new SeriesStore({ db: store.db, clock });
  const deleted = series.prune(r.endMs);
  const perHost = store.db.prepare<[string], { n10: number; min10: number | null; n5: number; min5: number | null }>(
    `SELECT (SELECT COUNT(*) FROM telemetry_samples_10s s WHERE s.host_id = h.id) AS n10,
            (SELECT MIN(t) FROM telemetry_samples_10s s WHERE s.host_id = h.id) AS min10,
            (SELECT COUNT(*) FROM telemetry_samples_5m s WHERE s.host_id = h.id) AS n5,
            (SELECT MIN(t) FROM telemetry_samples_5m s WHERE s.host_id = h.id) AS min5
       FROM telemetry_hosts h WHERE h.label = ?`,
  );
  const cut10 = Math.floor((r.endMs - 7 * DAY_MS) / 1000);
  const cut5m = Math.floor((r.endMs - 90 * DAY_MS) / 1000);
  let wrong = 0;
  let kept10 = 0;
  let kept5 = 0;
  let exp10 = 0;
  let exp5 = 0;
  let del = 0;
  for (const e of r.expected) {
    const row = perHost.get(e.host)!;
    kept10 += row.n10;
    kept5 += row.n5;
    exp10 += e.rows10;
    exp5 += e.rows5m;
    del += e.deleted10 + e.deleted5m;
    if (row.n10 !== e.rows10 || row.n5 !== e.rows5m || (row.min10 ?? cut10) < cut10 || (row.min5 ?? cut5m) < cut5m) wrong++;
  }
  series.dispose();
  console.log(`  10 s tier: ${int(kept10)} rows kept (expected ${int(exp10)}), 5 min tier: ${int(kept5)} (expected ${int(exp5)})`);
  check(wrong === 0, `every host keeps exactly its 10 s rows since ${iso(cut10 * 1000)} and its 5 min rows since ${iso(cut5m * 1000)} (${r.expected.length - wrong}/${r.expected.length} hosts)`);
  check(r.telemetryRowsPruned + deleted === del, `pruned ${int(r.telemetryRowsPruned + deleted)} rows in all (hourly during the run + ${int(deleted)} at the end), expected ${int(del)}`);
  check(r.telemetryRowsWritten - r.telemetryRowsPruned - deleted === kept10 + kept5, `written − pruned = kept (${int(r.telemetryRowsWritten)} − ${int(r.telemetryRowsPruned + deleted)} = ${int(kept10 + kept5)})`);
  check(r.droppedRows === 0, `no row dropped from the write queue (${r.droppedRows})`);
}

/** Downsampling: each closed 5 min row is the mean and max of the 10 s rows inside it, column by column. */
function checkDownsampling(store: Store, r: FillResult, hosts: string[]): void {
  const rows5 = store.db.prepare<[string, number, number], { t: number; n: number; data: Buffer }>(
    'SELECT t, n, data FROM telemetry_samples_5m WHERE host_id = (SELECT id FROM telemetry_hosts WHERE label = ?) AND t >= ? AND t < ? ORDER BY t',
  );
  const rows10 = store.db.prepare<[string, number, number], { t: number; n: number; data: Buffer }>(
    'SELECT t, n, data FROM telemetry_samples_10s WHERE host_id = (SELECT id FROM telemetry_hosts WHERE label = ?) AND t >= ? AND t < ? ORDER BY t',
  );
  let buckets = 0;
  let values = 0;
  let bad = 0;
  let nanCols = 0;
  const from = r.denseFromMs / 1000;
  const to = r.endMs / 1000 - 300;
  for (const host of hosts) {
    for (const b of rows5.iterate(host, from, to)) {
      const f5 = new Float32Array(b.data.buffer.slice(b.data.byteOffset, b.data.byteOffset + b.data.byteLength));
      const inner = rows10.all(host, b.t, b.t + 300).map((x) => new Float32Array(x.data.buffer.slice(x.data.byteOffset, x.data.byteOffset + x.data.byteLength)));
      if (inner.length === 0) continue;
      buckets++;
      for (let c = 0; c < b.n; c++) {
        let sum = 0;
        let cnt = 0;
        let max = Number.NaN;
        for (const f of inner) {
          const v = f[c]!;
          if (Number.isNaN(v)) continue;
          sum += v;
          cnt++;
          if (Number.isNaN(max) || v > max) max = v;
        }
        const mean = f5[c]!;
        const mx = f5[b.n + c]!;
        values++;
        if (cnt === 0) {
          nanCols++;
          if (!Number.isNaN(mean) || !Number.isNaN(mx)) bad++;
          continue;
        }
        const close = (a: number, e: number) => Math.abs(a - e) <= 1e-5 * Math.max(1, Math.abs(e));
        if (!close(mean, sum / cnt) || !close(mx, max)) bad++;
      }
    }
  }
  check(buckets > 0 && bad === 0, `5 min rows = mean and max of their 10 s rows: ${int(buckets)} buckets × columns = ${int(values)} values on ${hosts.length} hosts, ${bad} off (${int(nanCols)} always-unknown values stay unknown)`);
}

/** The request log's own retention (30 days, 1,000,000 rows by default) deletes the older rows and only them. */
async function checkRequestRetention(store: Store, r: FillResult, plan: GrowthPlan): Promise<void> {
  const before = (store.db.prepare('SELECT COUNT(*) AS n FROM requests').get() as { n: number }).n;
  const log = new RequestLog({
    db: store.db,
    clock: new SimClock(r.endMs),
    logger: silentLogger,
    retention: () => ({ maxAgeMs: REQUEST_RETENTION_MS, maxRows: REQUEST_MAX_ROWS }),
  });
  const t0 = performance.now();
  const deleted = await log.prune();
  const ms = performance.now() - t0;
  log.dispose();
  const after = store.db.prepare('SELECT COUNT(*) AS n, MIN(ts) AS oldest FROM requests').get() as { n: number; oldest: number };
  const expectKept = Math.min(plan.requests, REQUEST_MAX_ROWS);
  console.log(`  requests: ${int(before)} rows, retention pass deleted ${int(deleted)} in ${fmt(ms)} ms`);
  check(after.n === expectKept && deleted === before - expectKept && after.oldest >= r.endMs - REQUEST_RETENTION_MS,
    `request log keeps ${int(after.n)} rows (expected ${int(expectKept)}), oldest ${iso(after.oldest)} inside 30 days`);
}

/** The chain verifies; a copy of the audit log with one payload edited breaks at exactly that row. */
function checkAudit(store: Store, plan: GrowthPlan, out: string): void {
  const t0 = performance.now();
  const v = store.audit.verify();
  const ms = performance.now() - t0;
  check(v.ok && v.count === plan.audit, `audit chain verifies: ${v.ok ? int(v.count) : 'BROKEN'} events in ${fmt(ms)} ms (${int((v.count / ms) * 1000)} rows/s, in process)`);
  const dir = `${out}.tampered`;
  rmSync(dir, { recursive: true, force: true });
  const copy = openStore({ file: join(dir, 'gpu-console.db') });
  copy.db.exec(`ATTACH DATABASE '${store.file.replace(/'/g, "''")}' AS src`);
  copy.db.exec('INSERT INTO audit_events SELECT * FROM src.audit_events');
  copy.db.exec('DETACH DATABASE src');
  copy.close();
  const victim = Math.max(1, Math.floor(plan.audit / 2) + 1);
  const raw = new Database(join(dir, 'gpu-console.db'));
  raw.exec('DROP TRIGGER audit_events_no_update');
  raw.prepare(`UPDATE audit_events SET payload = replace(payload, '"system"', '"operator:mallory"'), actor = 'operator:mallory' WHERE seq = ?`).run(victim);
  const broken = verifyAuditChain(raw);
  raw.close();
  check(!broken.ok && broken.brokenAt === victim && broken.count === victim - 1,
    `a copy with row #${victim} altered (${dir}) breaks at #${broken.ok ? 'none' : broken.brokenAt} (${broken.ok ? '' : broken.reason})`);
}

function writeConsoleConfig(out: string, plan: GrowthPlan): void {
  const hosts = Array.from({ length: plan.hosts }, (_, i) => {
    const m = modelOf(i);
    return {
      label: hostLabel(i, plan.hosts),
      // Nothing listens on port 9: a console on this folder reads the store and never reaches a host.
      ssh: { host: '127.0.0.1', port: 9, user: 'bench', identityFile: join(out, 'no-such-key') },
      knownHostsFile: join(out, 'known_hosts'),
      gpu: { model: 'NVIDIA H100 80GB HBM3', count: plan.gpus },
      pricePerHourUsd: Math.round(PRICE_PER_GPU_HOUR_USD * plan.gpus * 1e6) / 1e6,
      services: [{ id: m.serviceId, kind: 'vllm', remotePort: 8000, model: m.model, slots: m.slots }],
    };
  });
  // JSON is YAML: the console's loader reads it as config.yaml.
  writeFileSync(join(out, 'config.yaml'), JSON.stringify({ hosts }, null, 2) + '\n');
  writeFileSync(join(out, 'known_hosts'), '');
}

async function main(): Promise<void> {
  const plan: GrowthPlan = {
    days: arg('days', 10),
    hosts: arg('hosts', 4),
    gpus: arg('gpus', 8),
    requests: arg('requests', 20_000),
    audit: arg('audit', 2_000),
    seed: arg('seed', 1),
    // The history ends now (to the 5 min), so a console started on the folder soon after sees it as recent.
    endMs: Math.floor(Date.now() / 300_000) * 300_000,
  };
  const outArg = argText('out');
  if (!outArg) throw new Error('--out DIR is required');
  const out = resolve(outArg);
  if (existsSync(out) && readdirSync(out).length > 0) {
    if (!process.argv.includes('--force')) throw new Error(`${out} is not empty (pass --force to replace it)`);
    rmSync(out, { recursive: true, force: true });
  }
  mkdirSync(out, { recursive: true });
  console.log(`store-growth: ${plan.days} days × ${plan.hosts} hosts × ${plan.gpus} GPUs, ${int(plan.requests)} requests, ${int(plan.audit)} audit events, seed ${plan.seed} → ${out} (node ${process.version})`);
  console.log(`  models: ${MODELS.map((m) => `${m.serviceId}=${m.model}`).join(', ')}; history ends ${iso(plan.endMs)}`);

  const clock = new SimClock(plan.endMs);
  const store = openStore({ file: join(out, 'gpu-console.db'), clock });
  const r = await fillStore(store, clock, plan, (p) =>
    console.log(`  … ${fmt((p.simulatedMs / p.totalMs) * 100, 0)} % (${p.phase}), db ${fmt(fileSize(store.file) / MiB, 0)} MiB, wal ${fmt(fileSize(`${store.file}-wal`) / MiB, 1)} MiB`),
  );
  const w = r.wallMs;
  console.log(`\nGenerated in ${fmt(w.total / 1000)} s (telemetry ${fmt(w.telemetry / 1000)} s, requests ${fmt(w.requests / 1000)} s, audit ${fmt(w.audit / 1000)} s):`);
  console.log(`  telemetry: ${int(r.samplesRecorded)} samples of ${r.seriesPerHost} series/host from ${iso(r.startMs)} (5 min apart until ${iso(r.denseFromMs)}, then 10 s) → ${int(r.telemetryRowsWritten)} rows written, ${int(r.telemetryRowsPruned)} pruned by the hourly pass`);
  console.log(`  requests: ${int(r.requestRowsWritten)} rows (${int(r.requestRowsOld)} of them older than the 30-day retention), audit: ${int(r.auditAppended)} events`);

  console.log('\nChecks:');
  checkRetention(store, r, clock);
  checkDownsampling(store, r, [...new Set([0, Math.floor(plan.hosts / 2), plan.hosts - 1])].map((i) => hostLabel(i, plan.hosts)));
  await checkRequestRetention(store, r, plan);
  checkAudit(store, plan, out);
  const walBefore = fileSize(`${store.file}-wal`);
  // Largest -wal seen: a flush is 10 simulated minutes of the fleet (the app writes every 10 s, smaller still).
  check(r.walMaxBytes <= 64 * MiB, `-wal file bounded during the run: at most ${fmt(r.walMaxBytes / MiB, 1)} MiB (after a ${r.walMaxAt}), ${fmt(walBefore / MiB, 1)} MiB at the end; bound 64 MiB`);
  store.db.pragma('wal_checkpoint(TRUNCATE)');

  const pageSize = Number(store.db.pragma('page_size', { simple: true }));
  const free = Number(store.db.pragma('freelist_count', { simple: true })) * pageSize;
  const tables = store.db
    .prepare("SELECT name, SUM(pgsize) AS bytes FROM dbstat WHERE aggregate = TRUE GROUP BY name ORDER BY bytes DESC")
    .all() as { name: string; bytes: number }[];
  store.close();
  writeConsoleConfig(out, plan);
  writeFileSync(join(out, 'store-growth.json'), JSON.stringify({ plan, result: { ...r, expected: undefined } }, null, 2) + '\n');
  const size = fileSize(join(out, 'gpu-console.db'));
  console.log(`\nDatabase: ${fmt(size / MiB)} MiB (${fmt(free / MiB)} MiB free pages), by table/index:`);
  for (const t of tables.slice(0, 10)) console.log(`  ${t.name.padEnd(28)} ${fmt(t.bytes / MiB).padStart(9)} MiB`);
  console.log(failures ? `\n${failures} check(s) FAILED` : '\nall checks passed');
  process.exitCode = failures ? 1 : 0;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
