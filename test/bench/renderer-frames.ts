// Benchmark (prints figures; not a test): renderer frame times while the fleet
// view is open with a large fleet. Serves the built renderer (`npm run build` →
// out/renderer) behind a fake web bridge that streams one `fleet.tick` and one
// `telemetry.tick` per second for HOSTS × GPUS, opens it in headless Chromium
// and records requestAnimationFrame intervals and long tasks (> 50 ms).
// A baseline phase with the same page and no ticks runs first, in the same
// browser, so the figures read as a ratio against it.
//
//   node --import tsx test/bench/renderer-frames.ts [--seconds 30] [--hosts 64] [--gpus 8] [--baseline-seconds 5] [--profile] [--renderer DIR]
//
// --renderer serves another build of the renderer (default out/renderer), e.g.
// a copy of an earlier build, to compare two builds on the same machine.
//
// --profile takes a CDP CPU profile of the ticking phase and prints the top
// functions by self time (the renderer bundle is not minified, names read as in source).
//
// Target: p95 frame interval within one 60 Hz frame (16.7 ms), i.e. ticks cost no dropped frames at p95.
//
// First, in this process, the cost of parsing one such `fleet.tick` the way the
// renderer does (the transport's parseEventPayload, zod without its JIT as in
// the page, whose CSP forbids eval), against JSON.parse of the same text.
import { readFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, resolve } from 'node:path';
// first, as in the page (main.tsx): zod decides JIT or not when a schema is built
import '../../src-renderer/src/zod-config.js';
import { parseEventPayload } from '../../src-renderer/src/transport/envelope.js';
import { launchChromium } from '../helpers/browser.js';
import { ROOT } from '../helpers/imports.js';

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const SECONDS = arg('seconds', 30);
const BASELINE_S = arg('baseline-seconds', 5);
const HOSTS = arg('hosts', 64);
const GPUS = arg('gpus', 8);
const PROFILE = process.argv.includes('--profile');
const TOKEN = 'f'.repeat(64);
const RENDERER = (() => {
  const dir = process.argv[process.argv.indexOf('--renderer') + 1];
  return process.argv.includes('--renderer') && dir ? resolve(dir) : join(ROOT, 'out', 'renderer');
})();

const wave = (t: number, period: number, lo: number, hi: number, phase = 0): number =>
  Math.round((lo + ((hi - lo) * (1 + Math.sin((t / 1000 / period) * 2 * Math.PI + phase))) / 2) * 10) / 10;

function snapshot(t: number): unknown {
  const hosts = [];
  for (let h = 0; h < HOSTS; h++) {
    const label = `gpu-${String(h).padStart(2, '0')}`;
    const gpus = [];
    for (let g = 0; g < GPUS; g++) {
      gpus.push({
        index: g,
        uuid: `GPU-${h}-${g}`,
        name: 'NVIDIA H100 80GB HBM3',
        memoryUsedMiB: Math.round(wave(t, 30, 20_000, 78_000, h + g)),
        memoryTotalMiB: 81_559,
        utilizationPct: Math.round(wave(t, 20, 0, 100, h * 2 + g)),
        powerW: Math.round(wave(t, 20, 90, 690, h + g)),
        powerLimitW: 700,
        temperatureC: Math.round(wave(t, 60, 40, 80, g)),
      });
    }
    const services = ['llama', 'qwen'].map((id, i) => ({
      id,
      kind: 'vllm',
      model: `${id}-70b`,
      aliases: [id],
      slots: 64,
      remotePort: 8000 + i,
      tunnel: { state: 'up', localUrl: `http://127.0.0.1:${20000 + h * 2 + i}/v1`, lastError: null, lastProbe: null, lastTest: null, nextRetryAt: null },
      health: 'ok',
      sleep: 'awake',
      requestsRunning: Math.round(wave(t, 15, 0, 40, h + i)),
      requestsWaiting: Math.round(wave(t, 15, 0, 6, h + i)),
      kvCachePct: wave(t, 40, 5, 97, h + i),
      generationTokensPerS: wave(t, 25, 200, 2400, h + i),
      promptTokensPerS: wave(t, 11, 1000, 9000, h + i),
      stale: false,
      staleReason: null,
    }));
    hosts.push({
      label,
      address: `ops@10.0.${h}.1:22`,
      state: 'connected',
      lastError: null,
      nextRetryAt: null,
      hostKeyFingerprint: 'SHA256:bench',
      hostKey: null,
      credentialPrompt: null,
      jumpHost: null,
      gpuModel: 'NVIDIA H100 80GB HBM3',
      pricePerHourUsd: 8 * 2.5,
      gpus,
      gpuStale: false,
      gpuStaleReason: null,
      services,
      updatedAt: t,
    });
  }
  return { at: t, hosts };
}

function telemetryTick(t: number): unknown {
  const hosts = [];
  for (let h = 0; h < HOSTS; h++) {
    const values: Record<string, number | null> = {};
    for (const [i, id] of ['llama', 'qwen'].entries()) {
      values[`svc.${id}.ttft_p95_s`] = wave(t, 20, 0.05, 2.5, h + i);
      values[`svc.${id}.cost_usd_per_mtok`] = wave(t, 30, 1, 30, h + i);
    }
    hosts.push({ host: `gpu-${String(h).padStart(2, '0')}`, staleReason: null, values });
  }
  return { at: t, hosts };
}

const handlers: Record<string, () => unknown> = {
  'app.info': () => ({
    name: 'GPU Console',
    version: '0.0.0-bench',
    mode: 'web',
    demo: false,
    dataDir: '/tmp/bench',
    configFile: null,
    configError: null,
    proxyUrl: null,
    startedAt: Date.now(),
  }),
  'fleet.snapshot': () => snapshot(Date.now()),
};

const MIME: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.png': 'image/png' };
const sse = new Set<ServerResponse>();
let ticking = false;

const server = createServer((req, res) => {
  void (async () => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname.startsWith('/api/')) {
      if (req.headers['x-gpu-console-token'] !== TOKEN) return res.writeHead(401).end();
      if (url.pathname === '/api/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
        res.write(': hello\n\n');
        sse.add(res);
        req.on('close', () => sse.delete(res));
        return;
      }
      for await (const _ of req) void _;
      const handler = handlers[decodeURIComponent(url.pathname.slice(5))];
      res.writeHead(handler ? 200 : 404, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify(handler ? { ok: true, data: handler() } : { ok: false, error: { code: 'CONTRACT_UNKNOWN_CHANNEL', message: 'not in the bench bridge', retryable: false, details: {} } }),
      );
    }
    const rel = url.pathname === '/' ? 'index.html' : normalize(url.pathname).replace(/^[/\\]+/, '');
    const file = resolve(RENDERER, rel);
    if (!file.startsWith(RENDERER)) return res.writeHead(403).end();
    try {
      const data = await readFile(file);
      res.writeHead(200, { 'content-type': MIME[extname(file)] ?? 'application/octet-stream' });
      res.end(data);
    } catch {
      res.writeHead(404).end();
    }
  })();
});

const timer = setInterval(() => {
  if (!ticking) return;
  const t = Date.now();
  const frame = `event: fleet.tick\ndata: ${JSON.stringify(snapshot(t))}\n\nevent: telemetry.tick\ndata: ${JSON.stringify(telemetryTick(t))}\n\n`;
  for (const c of sse) c.write(frame);
}, 1000);

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
}

interface Probe {
  frames: number[];
  longTasks: number[];
}

const PROBE_SCRIPT = `
  window.__probe = { frames: [], longTasks: [] };
  window.__probeReset = () => { window.__probe = { frames: [], longTasks: [] }; };
  let last = 0;
  const loop = (t) => { if (last > 0) window.__probe.frames.push(t - last); last = t; requestAnimationFrame(loop); };
  requestAnimationFrame(loop);
  new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__probe.longTasks.push(e.duration); }).observe({ type: 'longtask', buffered: true });
`;

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
}

/** Top functions by self and total time (ms) over the profiled phase. */
function printProfile(profile: CpuProfile): void {
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (id: number): string => {
    const f = byId.get(id)!.callFrame;
    return `${f.functionName || '(anon)'} ${f.url.split('/').pop() ?? ''}:${f.lineNumber + 1}`;
  };
  const selfBy = new Map<string, number>();
  const totalBy = new Map<string, number>();
  for (const [id, ms] of self) {
    selfBy.set(name(id), (selfBy.get(name(id)) ?? 0) + ms);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const k = name(cur);
      if (seen.has(k)) continue;
      seen.add(k);
      totalBy.set(k, (totalBy.get(k) ?? 0) + ms);
    }
  }
  const top = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
  console.log('profile: self time (ms)');
  for (const [k, ms] of top(selfBy, 25)) console.log(`  ${ms.toFixed(0).padStart(7)}  ${k}`);
  console.log('profile: total time (ms)');
  for (const [k, ms] of top(totalBy, 40)) console.log(`  ${ms.toFixed(0).padStart(7)}  ${k}`);
}

/** Median ms per call of `a` and of `b`, timed in alternating batches so that a busy machine slows both alike. */
function pairedMs(a: () => void, b: () => void, batches = 31, perBatch = 10): [number, number] {
  for (let i = 0; i < 50; i++) {
    a();
    b();
  }
  const ta: number[] = [];
  const tb: number[] = [];
  const batch = (fn: () => void, out: number[]): void => {
    const t0 = performance.now();
    for (let i = 0; i < perBatch; i++) fn();
    out.push((performance.now() - t0) / perBatch);
  };
  for (let k = 0; k < batches; k++) {
    batch(a, ta);
    batch(b, tb);
  }
  return [pct(ta, 0.5), pct(tb, 0.5)];
}

/** One fleet.tick through the renderer's own parse path, in this process (same V8 as the page). */
function parseFigures(): void {
  const text = JSON.stringify(snapshot(Date.now()));
  const fail = (message: string): never => {
    throw new Error(`bench payload rejected: ${message}`);
  };
  const [json, parsed] = pairedMs(
    () => JSON.parse(text),
    () => parseEventPayload('fleet.tick', JSON.parse(text), fail),
  );
  console.log(
    `fleet.tick parse (${(text.length / 1024).toFixed(0)} KiB), median per tick: JSON.parse ${json.toFixed(2)} ms; JSON.parse + parseEventPayload ${parsed.toFixed(2)} ms` +
      ` (the check ${(parsed - json).toFixed(2)} ms, total ${(parsed / json).toFixed(2)}× JSON.parse)`,
  );
}

async function main(): Promise<void> {
  parseFigures();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  // a string, not a function: tsx's name helpers do not exist in the page
  await page.addInitScript(PROBE_SCRIPT);
  await page.goto(`http://127.0.0.1:${port}/#token=${TOKEN}`);
  await page.waitForSelector('[data-testid^="host-card-"]', { timeout: 30_000 });
  const cards = await page.locator('[data-testid^="host-card-"]').count();

  const phase = async (seconds: number): Promise<Probe> => {
    await page.evaluate('window.__probeReset()');
    await new Promise((r) => setTimeout(r, seconds * 1000));
    return page.evaluate<Probe>('window.__probe');
  };
  const report = (name: string, p: Probe) => {
    const dropped = p.frames.filter((d) => d > 1.5 * (1000 / 60)).length;
    console.log(
      `${name.padEnd(9)} frames=${p.frames.length} interval p50=${pct(p.frames, 0.5).toFixed(1)} ms p95=${pct(p.frames, 0.95).toFixed(1)} ms max=${Math.max(...p.frames).toFixed(1)} ms` +
        ` dropped(>25 ms)=${((100 * dropped) / Math.max(1, p.frames.length)).toFixed(1)}% longtasks=${p.longTasks.length} (max ${p.longTasks.length ? Math.max(...p.longTasks).toFixed(0) : 0} ms, total ${p.longTasks.reduce((a, b) => a + b, 0).toFixed(0)} ms)`,
    );
    return pct(p.frames, 0.95);
  };

  console.log(`renderer frame times: ${HOSTS} hosts × ${GPUS} GPUs, ${cards} host cards rendered, fleet.tick + telemetry.tick once a second`);
  const base = report('baseline', await phase(BASELINE_S));
  ticking = true;
  const cdp = PROFILE ? await page.context().newCDPSession(page) : null;
  if (cdp) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
    await cdp.send('Profiler.start');
  }
  const live = report('ticking', await phase(SECONDS));
  if (cdp) printProfile((await cdp.send('Profiler.stop')).profile as CpuProfile);
  console.log(`p95 ratio ticking/baseline = ${(live / base).toFixed(2)}; target p95 ≤ 16.7 ms (one 60 Hz frame): ${live <= 16.7 + 0.5 ? 'met' : 'MISSED'}`);

  clearInterval(timer);
  for (const c of sse) c.end();
  await browser.close();
  server.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
