// Benchmark (prints figures; not a test): renderer frame times while the fleet
// view is open with a large fleet, in headless Chromium: requestAnimationFrame
// intervals and long tasks (> 50 ms). Two bridges:
//
// --bridge fake (default): the built renderer (`npm run build` → out/renderer)
//   behind a fake web bridge that streams one `fleet.tick` and one
//   `telemetry.tick` per second for HOSTS × GPUS (every GPU figure moves every
//   tick: the worst case for deltas). Phases in the same browser: no ticks
//   (baseline), whole-state ticks (a keyframe every tick: what the bridges sent
//   before delta ticks), delta ticks (TickStreamEncoder per connection, as now).
// --bridge real: `gpu-console serve --demo-hosts HOSTS` (the real core and web
//   bridge, the demo fleet over real SSH; built CLI needed), the fleet view
//   against it; baseline is a blank page with the same probe in the same
//   browser. A second SSE client in this process counts the bytes per tick on
//   the wire and what the whole state would have been (decoded back).
//
//   node --import tsx test/bench/renderer-frames.ts [--bridge fake|real] [--seconds 30] [--hosts 64] [--gpus 8] [--baseline-seconds 5] [--profile] [--renderer DIR] [--demo-traffic off] [--view overview|cards] [--down-fraction 0.5]
//
// --view picks the fleet layout (default overview, the fleet view's default
// above 12 hosts; cards: one card per host, mounted near the viewport). With
// the overview the page also counts its DOM mutations per tick and how many
// tiles they touched: a tick should touch only the tiles whose figures moved.
// --down-fraction (fake bridge) makes that share of the hosts unreachable
// (reconnecting, figures stale), as in a fleet half of which is down.
//
// --renderer serves another build of the renderer (default out/renderer), e.g.
// a copy of an earlier build, to compare two builds on the same machine.
//
// --profile takes a CDP CPU profile of the ticking phase and prints the top
// functions by self time (the renderer bundle is not minified, names read as in source).
//
// Target: p95 frame interval within one 60 Hz frame (16.7 ms), i.e. ticks cost no dropped frames at p95.
//
// First, in this process, the cost of reading one such `fleet.tick` the way the
// renderer does (zod without its JIT as in the page, whose CSP forbids eval):
// the whole state (JSON.parse + parseEventPayload) against one delta tick
// (JSON.parse + TickStreamDecoder.decode), and JSON.parse alone.
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize, resolve } from 'node:path';
import type { Page } from 'playwright-core';
// first, as in the page (main.tsx): zod decides JIT or not when a schema is built
import '../../src-renderer/src/zod-config.js';
import { TickStreamDecoder, TickStreamEncoder, type FleetSnapshot, type TelemetryTick } from '../../src-preload/contract/index.js';
import { parseEventPayload } from '../../src-renderer/src/transport/envelope.js';
import { SseParser } from '../../src-renderer/src/transport/sse-parser.js';
import { launchChromium } from '../helpers/browser.js';
import { assertBuilt, bridgeCall, startConsole, type RunningConsole } from '../helpers/console-process.js';
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
const BRIDGE = process.argv.includes('--bridge') ? process.argv[process.argv.indexOf('--bridge') + 1] : 'fake';
const VIEW = process.argv.includes('--view') ? process.argv[process.argv.indexOf('--view') + 1]! : 'overview';
const DOWN_FRACTION = process.argv.includes('--down-fraction') ? Number(process.argv[process.argv.indexOf('--down-fraction') + 1]) : 0;
/** The layout chosen before the page loads, as the operator's stored choice would (use-overview-prefs.ts). */
const VIEW_SCRIPT = `localStorage.setItem('gpu-console.fleet-overview', JSON.stringify({ mode: ${JSON.stringify(VIEW === 'cards' ? 'cards' : 'overview')} }));`;
const READY_SELECTOR = VIEW === 'cards' ? '[data-testid^="host-card-"]' : '[data-testid^="ov-tile-"]';
const DEMO_TRAFFIC = process.argv.includes('--demo-traffic') ? process.argv[process.argv.indexOf('--demo-traffic') + 1]! : 'on';
const TOKEN = 'f'.repeat(64);
const RENDERER = (() => {
  const dir = process.argv[process.argv.indexOf('--renderer') + 1];
  return process.argv.includes('--renderer') && dir ? resolve(dir) : join(ROOT, 'out', 'renderer');
})();

const wave = (t: number, period: number, lo: number, hi: number, phase = 0): number =>
  Math.round((lo + ((hi - lo) * (1 + Math.sin((t / 1000 / period) * 2 * Math.PI + phase))) / 2) * 10) / 10;

function snapshot(t: number): FleetSnapshot {
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
    const down = DOWN_FRACTION > 0 && h % Math.round(1 / DOWN_FRACTION) === 0;
    if (down) for (const s of services) Object.assign(s, { stale: true, staleReason: 'SSH reconnecting: SSH_TIMEOUT', health: 'unknown' });
    hosts.push({
      label,
      address: `ops@10.0.${h}.1:22`,
      state: down ? 'reconnecting' : 'connected',
      lastError: down ? { code: 'SSH_TIMEOUT', message: 'no SSH handshake within 15000 ms', at: t - 5_000 } : null,
      nextRetryAt: down ? t + 4_000 : null,
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
  return { at: t, hosts } as FleetSnapshot;
}

function telemetryTick(t: number): TelemetryTick {
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
/** Each SSE client with its own encoder, as the real bridge keeps one per connection. */
const sse = new Map<ServerResponse, TickStreamEncoder>();
let ticking: 'off' | 'whole' | 'delta' = 'off';

const server = createServer((req, res) => {
  void (async () => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname.startsWith('/api/')) {
      if (req.headers['x-gpu-console-token'] !== TOKEN) return res.writeHead(401).end();
      if (url.pathname === '/api/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
        res.write(': hello\n\n');
        sse.set(res, new TickStreamEncoder());
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

const wireBytes = { whole: 0, delta: 0, ticks: { whole: 0, delta: 0 } };
const timer = setInterval(() => {
  if (ticking === 'off') return;
  const t = Date.now();
  const fleetTick = snapshot(t);
  const tele = telemetryTick(t);
  for (const [c, encoder] of sse) {
    if (ticking === 'whole') encoder.resync();
    const frame = `event: fleet.tick\ndata: ${JSON.stringify(encoder.encode('fleet.tick', fleetTick))}\n\nevent: telemetry.tick\ndata: ${JSON.stringify(encoder.encode('telemetry.tick', tele))}\n\n`;
    wireBytes[ticking] += Buffer.byteLength(frame);
    wireBytes.ticks[ticking]++;
    c.write(frame);
  }
}, 1000);

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
}

interface Probe {
  frames: number[];
  longTasks: number[];
  mutations: number;
  tilesTouched: number;
  tileSets: number;
}

const PROBE_SCRIPT = `
  window.__probe = { frames: [], longTasks: [], mutations: 0, tilesTouched: 0, tileSets: 0 };
  window.__probeReset = () => { window.__probe = { frames: [], longTasks: [], mutations: 0, tilesTouched: 0, tileSets: 0 }; };
  // DOM mutations, and how many distinct overview tiles they touched per batch (one batch per tick, about).
  new MutationObserver((records) => {
    const tiles = new Set();
    for (const r of records) {
      const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
      const tile = el && el.closest ? el.closest('.ov-tile') : null;
      if (tile) tiles.add(tile);
    }
    window.__probe.mutations += records.length;
    if (tiles.size > 0) { window.__probe.tilesTouched += tiles.size; window.__probe.tileSets++; }
  }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
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
function pairedMs(a: () => void, b: () => void, batches = 31, perBatch = 10, warmup = 50): [number, number] {
  for (let i = 0; i < warmup; i++) {
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

/** One fleet.tick through the renderer's own read paths, in this process (same V8 as the page). */
function parseFigures(): void {
  const t0 = Date.now();
  const text = JSON.stringify(snapshot(t0));
  const fail = (message: string): never => {
    throw new Error(`bench payload rejected: ${message}`);
  };
  // a chain of delta ticks one second apart, decoded in order (each needs the state before it)
  const encoder = new TickStreamEncoder();
  const chain = Array.from({ length: 1 + 50 + 31 * 10 + 1 }, (_, i) => JSON.stringify(encoder.encode('fleet.tick', snapshot(t0 + i * 1000))));
  const decoder = new TickStreamDecoder();
  let next = 0;
  const decodeNext = (): void => {
    if (next >= chain.length) throw new Error('bench: delta chain exhausted');
    const r = decoder.decode('fleet.tick', JSON.parse(chain[next++]!));
    if (!r.ok) fail(r.message);
  };
  decodeNext(); // the keyframe
  const [whole, delta] = pairedMs(
    () => parseEventPayload('fleet.tick', JSON.parse(text), fail),
    decodeNext,
    31,
    10,
    50,
  );
  const [json] = pairedMs(
    () => JSON.parse(text),
    () => undefined,
  );
  const deltaKiB = chain.slice(1).reduce((n, c) => n + c.length, 0) / (chain.length - 1) / 1024;
  console.log(
    `fleet.tick read, median per tick: whole state (${(text.length / 1024).toFixed(0)} KiB) JSON.parse ${json.toFixed(2)} ms, + parseEventPayload ${whole.toFixed(2)} ms;` +
      ` delta tick (${deltaKiB.toFixed(0)} KiB) JSON.parse + decode ${delta.toFixed(2)} ms (${(delta / whole).toFixed(2)}× the whole state)`,
  );
}

const phase = async (page: Page, seconds: number): Promise<Probe> => {
  await page.evaluate('window.__probeReset()');
  await new Promise((r) => setTimeout(r, seconds * 1000));
  return page.evaluate<Probe>('window.__probe');
};

/** The phase's length from its own frames (the probe's rAF intervals add up to it). */
const SECONDS_OF = (p: Probe): number => Math.max(1, p.frames.reduce((a, b) => a + b, 0) / 1000);

const report = (name: string, p: Probe): number => {
  const dropped = p.frames.filter((d) => d > 1.5 * (1000 / 60)).length;
  console.log(
    `${name.padEnd(13)} frames=${p.frames.length} interval p50=${pct(p.frames, 0.5).toFixed(1)} ms p95=${pct(p.frames, 0.95).toFixed(1)} ms max=${Math.max(...p.frames).toFixed(1)} ms` +
      ` dropped(>25 ms)=${((100 * dropped) / Math.max(1, p.frames.length)).toFixed(1)}% longtasks=${p.longTasks.length} (max ${p.longTasks.length ? Math.max(...p.longTasks).toFixed(0) : 0} ms, total ${p.longTasks.reduce((a, b) => a + b, 0).toFixed(0)} ms)` +
      (p.tileSets > 0 ? ` DOM mutations/s=${(p.mutations / SECONDS_OF(p)).toFixed(0)} tiles touched per update=${(p.tilesTouched / p.tileSets).toFixed(1)}` : ''),
  );
  return pct(p.frames, 0.95);
};

const verdict = (p95: number): string => `target p95 ≤ 16.7 ms (one 60 Hz frame): ${p95 <= 16.7 + 0.5 ? 'met' : 'MISSED'}`;

/** Runs `during` under a CDP CPU profile when --profile is given. */
async function profiled<T>(page: Page, during: () => Promise<T>): Promise<T> {
  if (!PROFILE) return during();
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  const out = await during();
  printProfile((await cdp.send('Profiler.stop')).profile as CpuProfile);
  return out;
}

/** Transport warnings the page logs (a refused tick, a failed resync): there should be none. */
function watchWarnings(page: Page): string[] {
  const warnings: string[] = [];
  page.on('console', (msg) => {
    if (msg.text().includes('transport]')) warnings.push(msg.text());
  });
  return warnings;
}

async function fakeBridge(): Promise<void> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  const warnings = watchWarnings(page);
  // a string, not a function: tsx's name helpers do not exist in the page
  await page.addInitScript(PROBE_SCRIPT);
  await page.addInitScript(VIEW_SCRIPT);
  await page.goto(`http://127.0.0.1:${port}/#token=${TOKEN}`);
  await page.waitForSelector(READY_SELECTOR, { timeout: 30_000 });
  const shown = await page.locator(READY_SELECTOR).count();

  console.log(
    `renderer frame times, fake bridge: ${HOSTS} hosts × ${GPUS} GPUs${DOWN_FRACTION > 0 ? ` (${Math.round(DOWN_FRACTION * 100)} % down)` : ''}, ${VIEW}: ${shown} ${VIEW === 'cards' ? 'host cards mounted (the rest off screen)' : 'tiles'}, fleet.tick + telemetry.tick once a second`,
  );
  const base = report('baseline', await phase(page, BASELINE_S));
  ticking = 'whole';
  const whole = report('whole ticks', await phase(page, SECONDS));
  ticking = 'delta';
  await new Promise((r) => setTimeout(r, 1500)); // the switch's first tick is a delta against a keyframe
  const delta = report('delta ticks', await profiled(page, () => phase(page, SECONDS)));
  const kib = (k: 'whole' | 'delta') => (wireBytes[k] / Math.max(1, wireBytes.ticks[k]) / 1024).toFixed(1);
  console.log(`on the wire per tick (fleet.tick + telemetry.tick, SSE): whole ${kib('whole')} KiB, delta ${kib('delta')} KiB`);
  console.log(`p95 ratio to baseline: whole ${(whole / base).toFixed(2)}, delta ${(delta / base).toFixed(2)}; delta ticks: ${verdict(delta)}; transport warnings: ${warnings.length}`);
  for (const w of warnings.slice(0, 5)) console.log(`  ${w}`);

  clearInterval(timer);
  for (const c of sse.keys()) c.end();
  await browser.close();
  server.close();
}

/** A second subscriber of the real bridge: bytes per tick on the wire, and the whole state they decode to. */
function countWire(ui: string): { stop(): Promise<void>; reset(): void; figures(): { ticks: number; wire: Record<string, number>; whole: Record<string, number>; refused: number } } {
  const url = new URL(ui);
  const token = new URLSearchParams(url.hash.slice(1)).get('token')!;
  const abort = new AbortController();
  const parser = new SseParser();
  const decoder = new TickStreamDecoder();
  let f = { ticks: 0, wire: { 'fleet.tick': 0, 'telemetry.tick': 0 } as Record<string, number>, whole: { 'fleet.tick': 0, 'telemetry.tick': 0 } as Record<string, number>, refused: 0 };
  const done = (async () => {
    const res = await fetch(`${url.origin}/api/events`, { headers: { 'x-gpu-console-token': token }, signal: abort.signal });
    const text = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      for (const m of parser.push(text.decode(chunk, { stream: true }))) {
        if (m.event !== 'fleet.tick' && m.event !== 'telemetry.tick') continue;
        const r = decoder.decode(m.event, JSON.parse(m.data));
        if (!r.ok) {
          f.refused++;
          continue;
        }
        if (m.event === 'fleet.tick') f.ticks++;
        f.wire[m.event]! += Buffer.byteLength(`event: ${m.event}\ndata: ${m.data}\n\n`);
        f.whole[m.event]! += Buffer.byteLength(`event: ${m.event}\ndata: ${JSON.stringify(r.state)}\n\n`);
      }
    }
  })().catch((error: unknown) => {
    if (!abort.signal.aborted) throw error;
  });
  return {
    stop: async () => {
      abort.abort();
      await done;
    },
    reset: () => {
      f = { ticks: 0, wire: { 'fleet.tick': 0, 'telemetry.tick': 0 }, whole: { 'fleet.tick': 0, 'telemetry.tick': 0 }, refused: f.refused };
    },
    figures: () => f,
  };
}

async function realBridge(): Promise<void> {
  assertBuilt();
  const dataDir = mkdtempSync(join(tmpdir(), 'gc-frames-'));
  let consoleProc: RunningConsole | null = null;
  try {
    consoleProc = await startConsole(['--demo-hosts', String(HOSTS), '--demo-traffic', DEMO_TRAFFIC, '--data-dir', dataDir, '--ui-port', '0', '--proxy-port', '0'], 180_000);
    const browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    const warnings = watchWarnings(page);
    await page.addInitScript(PROBE_SCRIPT);
    await page.setContent('<!doctype html><title>baseline</title><p>baseline</p>');
    await page.evaluate(PROBE_SCRIPT); // init scripts run on navigations, not on setContent
    const base = report('baseline', await phase(page, BASELINE_S));

    await page.addInitScript(VIEW_SCRIPT);
    await page.goto(consoleProc.ui);
    await page.waitForSelector(READY_SELECTOR, { timeout: 60_000 });
    // cards mount only near the viewport (LazyHostCard): ask the bridge whether every host is connected
    const t0 = Date.now();
    for (;;) {
      const snap = await bridgeCall<FleetSnapshot>(consoleProc.ui, 'fleet.snapshot', {});
      const connected = snap.ok ? snap.data.hosts.filter((h) => h.state === 'connected').length : 0;
      if (connected >= HOSTS) break;
      if (Date.now() - t0 > 180_000) {
        console.log(`  gave up waiting for every host to connect: ${connected}/${HOSTS}`);
        break;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
    const shown = await page.locator(READY_SELECTOR).count();
    const wire = countWire(consoleProc.ui);
    await new Promise((r) => setTimeout(r, 5000)); // one keyframe, then deltas only
    wire.reset();
    console.log(
      `renderer frame times, real bridge (gpu-console serve --demo-hosts ${HOSTS}, demo traffic ${DEMO_TRAFFIC}), ${VIEW}: ${shown} ${VIEW === 'cards' ? `host cards mounted (of ${HOSTS}; the rest are placeholders off screen)` : 'tiles'}, connected after ${((Date.now() - t0) / 1000).toFixed(0)} s`,
    );
    const live = report('real ticks', await profiled(page, () => phase(page, SECONDS)));
    const f = wire.figures();
    await wire.stop();
    const per = (bytes: number | undefined) => `${((bytes ?? 0) / Math.max(1, f.ticks) / 1024).toFixed(1)} KiB`;
    const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
    console.log(
      `on the wire per tick (${f.ticks} ticks, SSE): fleet.tick ${per(f.wire['fleet.tick'])} (whole state ${per(f.whole['fleet.tick'])}),` +
        ` telemetry.tick ${per(f.wire['telemetry.tick'])} (whole ${per(f.whole['telemetry.tick'])}); together ${per(sum(f.wire))} vs ${per(sum(f.whole))}` +
        ` = ${((100 * sum(f.wire)) / Math.max(1, sum(f.whole))).toFixed(1)} %; refused by the counting decoder: ${f.refused}`,
    );
    console.log(`p95 ratio real/baseline = ${(live / base).toFixed(2)}; ${verdict(live)}; transport warnings in the page: ${warnings.length}`);
    for (const w of warnings.slice(0, 5)) console.log(`  ${w}`);
    await browser.close();
  } finally {
    const code = await consoleProc?.stop();
    if (code !== 0 && code !== undefined) console.log(`  the console exited ${code}`);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  parseFigures();
  if (BRIDGE === 'real') {
    clearInterval(timer);
    await realBridge();
  } else if (BRIDGE === 'fake') await fakeBridge();
  else throw new Error(`--bridge fake|real, not ${BRIDGE}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
