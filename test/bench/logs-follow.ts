// Benchmark (prints figures; not a test): a service printing RATE lines/s
// followed in the Logs view for SECONDS (issue #29). The demo fleet runs in
// this process (its flood knob writes the lines: uvicorn access lines on
// l20-poc/qwen, read by the console as `docker compose logs -f` over real
// SSH); the built console runs as `gpu-console serve --config` in its own
// process; Chromium shows the Logs view following that service.
//
// Figures: the console process's main-thread CPU (and the whole process's),
// its RSS every 5 s (flat?), lines written by the service vs lines that
// reached the view vs lines dropped and counted (the "dropped" markers) vs
// unaccounted; and the renderer's rAF frame intervals (p50 / p95 / share over
// 25 ms, long tasks) against a blank page measured first in the same browser.
//
//   node --import tsx test/bench/logs-follow.ts [--seconds 60] [--rate 5000] [--baseline-seconds 5]
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startDemoFleet } from '../../src-main/demo/index.js';
import { DEFAULT_VIEWPORT, launchChromium } from '../helpers/browser.js';
import { assertBuilt, startConsole } from '../helpers/console-process.js';
import { pct } from './lib/figures.js';

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const SECONDS = arg('seconds', 60);
const RATE = arg('rate', 5000);
const BASELINE_S = arg('baseline-seconds', 5);
const SAMPLE_MS = 5000;

const PROBE = `
  window.__probe = { frames: [], longTasks: [] };
  window.__probeReset = () => { window.__probe = { frames: [], longTasks: [] }; };
  let last = 0;
  const loop = (t) => { if (last > 0) window.__probe.frames.push(t - last); last = t; requestAnimationFrame(loop); };
  requestAnimationFrame(loop);
  new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__probe.longTasks.push(e.duration); }).observe({ type: 'longtask', buffered: true });
`;
interface Probe {
  frames: number[];
  longTasks: number[];
}

/** CPU ms of one thread of `pid` (the main thread when tid = pid), or of the whole process. */
function cpuMs(pid: number, tid?: number): number {
  const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function measure(page: Page, seconds: number): Promise<Probe> {
  await page.evaluate('window.__probeReset()');
  await new Promise((r) => setTimeout(r, seconds * 1000));
  return page.evaluate<Probe>('window.__probe');
}

function frames(name: string, p: Probe): string {
  const sorted = [...p.frames].sort((a, b) => a - b);
  const over = p.frames.filter((d) => d > 25).length;
  return `${name.padEnd(10)} frames=${p.frames.length} p50=${pct(sorted, 50).toFixed(1)} ms p95=${pct(sorted, 95).toFixed(1)} ms max=${(sorted.at(-1) ?? NaN).toFixed(1)} ms over-25ms=${((100 * over) / Math.max(1, p.frames.length)).toFixed(1)}% longtasks=${p.longTasks.length} (total ${p.longTasks.reduce((a, b) => a + b, 0).toFixed(0)} ms)`;
}

async function counters(page: Page): Promise<{ received: number; dropped: number }> {
  const el = page.getByTestId('logs-status');
  return { received: Number(await el.getAttribute('data-received')), dropped: Number(await el.getAttribute('data-dropped')) };
}

async function main(): Promise<void> {
  assertBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'gc-bench-logs-'));
  const demo = await startDemoFleet({ dir: join(dir, 'fleet') });
  mkdirSync(join(dir, 'conf'), { mode: 0o700 });
  const configFile = join(dir, 'conf', 'demo.yaml');
  writeFileSync(configFile, JSON.stringify(demo.config), { mode: 0o600 });
  const consoleProc = await startConsole(['--config', configFile, '--data-dir', join(dir, 'console'), '--ui-port', '0', '--proxy-port', '0']);
  const pid = consoleProc.child.pid!;
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: DEFAULT_VIEWPORT });
    await page.addInitScript(PROBE);
    await page.setContent('<!doctype html><html><body></body></html>');
    await page.evaluate(PROBE);
    const blank = await measure(page, BASELINE_S);

    await page.goto(consoleProc.ui);
    await page.getByTestId('nav-logs').click();
    const service = page.getByTestId('logs-service');
    for (let i = 0; i < 200 && (await service.locator('option[value="l20-poc/qwen"]').count()) === 0; i++) await new Promise((r) => setTimeout(r, 100));
    await service.selectOption('l20-poc/qwen');
    await page.getByTestId('logs-follow').check();
    for (let i = 0; i < 200 && (await page.getByTestId('logs-status').getAttribute('data-status')) !== 'following'; i++) await new Promise((r) => setTimeout(r, 100));
    const idle = await measure(page, BASELINE_S);

    const { log } = demo.host('l20-poc').serviceLog('qwen');
    const lastSeq = () => log.entries().at(-1)?.seq ?? 0;
    const start = { seq: lastSeq(), at: await counters(page), main: cpuMs(pid, pid), all: cpuMs(pid), t: performance.now() };
    const rss: string[] = [`${rssMiB(pid).toFixed(0)}`];
    const sampler = setInterval(() => rss.push(rssMiB(pid).toFixed(0)), SAMPLE_MS);
    demo.host('l20-poc').setLogFlood('qwen', RATE);
    const following = await measure(page, SECONDS);
    demo.host('l20-poc').setLogFlood('qwen', 0);
    const end = { seq: lastSeq(), main: cpuMs(pid, pid), all: cpuMs(pid), t: performance.now() };
    clearInterval(sampler);
    // What was in flight reaches the view (or is counted dropped) once the flood stops.
    await new Promise((r) => setTimeout(r, 3000));
    const after = await counters(page);
    const wallS = (end.t - start.t) / 1000;
    const written = end.seq - start.seq;
    const received = after.received - start.at.received;
    const dropped = after.dropped - start.at.dropped;
    console.log(`logs-follow: ${RATE} lines/s asked for ${SECONDS} s (flood knob on l20-poc/qwen, docker compose logs -f over ssh2), console pid ${pid}`);
    console.log(`lines: written ${written} (${(written / wallS).toFixed(0)}/s), reached the view ${received}, dropped and counted ${dropped}, unaccounted ${written - received - dropped}`);
    console.log(`console CPU: main thread ${((100 * (end.main - start.main)) / (wallS * 1000)).toFixed(1)}% of a core, whole process ${((100 * (end.all - start.all)) / (wallS * 1000)).toFixed(1)}%`);
    console.log(`console RSS MiB every ${SAMPLE_MS / 1000} s: ${rss.join(' ')}`);
    console.log(frames('blank', blank));
    console.log(frames('idle view', idle));
    console.log(frames('following', following));
  } finally {
    await browser.close();
    await consoleProc.stop();
    await demo.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
