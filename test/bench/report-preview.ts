// The 7-day evidence report preview in process (prints figures; not a test):
// starts the core offline on a folder made by test/bench/store-growth.ts (use a
// copy: the core appends audit rows) and times app.reports.preview over the
// plan's last 7 days, beside the same preview on an empty store with the same
// config (the floor, measured in this run). The store-growth benchmark times
// the same call through a running console's web bridge.
//
//   node --import tsx test/bench/report-preview.ts --dir DIR [--runs 3]
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startApp } from '../../src-main/core/app.js';
import { silentLogger } from '../../src-main/core/base/index.js';
import { ReportRequestSchema } from '../../src-preload/contract/index.js';
import { median } from './lib/figures.js';

const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
};
const DIR = resolve(arg('dir') ?? '');
const RUNS = Number(arg('runs') ?? 3);
const DAY_MS = 86_400_000;

// The box is shared: beside wall time, the process's CPU time per preview (user + system), which other
// processes inflate much less.
async function timePreviews(dataDir: string, window: { fromMs: number; toMs: number }, runs: number): Promise<{ times: number[]; cpu: number[]; htmlBytes: number }> {
  const app = await startApp({ mode: 'web', version: 'bench', dataDir, configFile: join(dataDir, 'config.yaml'), offline: true, logger: silentLogger });
  const request = ReportRequestSchema.parse({ fromMs: window.fromMs, toMs: window.toMs, live: false });
  const times: number[] = [];
  const cpu: number[] = [];
  let htmlBytes = 0;
  try {
    for (let i = 0; i < runs + 1; i++) {
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      const r = await app.reports.preview(request, 'bench');
      times.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpu.push((c.user + c.system) / 1000);
      htmlBytes = r.html.length;
    }
  } finally {
    await app.dispose();
  }
  return { times, cpu, htmlBytes };
}

const plan = JSON.parse(readFileSync(join(DIR, 'store-growth.json'), 'utf8')) as { plan: { endMs: number; hosts: number } };
const endMs = plan.plan.endMs;
const window = { fromMs: endMs - 7 * DAY_MS, toMs: endMs };
const empty = mkdtempSync(join(tmpdir(), 'gpu-console-report-floor-'));
cpSync(join(DIR, 'config.yaml'), join(empty, 'config.yaml'));
try {
  const floor = await timePreviews(empty, window, 2);
  const full = await timePreviews(DIR, window, RUNS);
  const fmt = (ts: number[]) => `median ${median(ts.slice(1)).toFixed(0)} ms, first ${ts[0]!.toFixed(0)} ms, all ${ts.map((t) => t.toFixed(0)).join(' ')}`;
  console.log(`empty store (floor): wall ${fmt(floor.times)}; cpu ${fmt(floor.cpu)}`);
  console.log(`7-day preview, ${plan.plan.hosts} hosts: wall ${fmt(full.times)}; cpu ${fmt(full.cpu)}; html ${(full.htmlBytes / 1024).toFixed(0)} KiB; ×${(median(full.times.slice(1)) / median(floor.times.slice(1))).toFixed(1)} the floor; target < 2000 ms`);
} finally {
  rmSync(empty, { recursive: true, force: true });
}
