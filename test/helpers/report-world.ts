// A small console for tests of what a report says against what the console
// recorded: the real action queue, telemetry (series store, cost summary),
// proxy request log and report service on one SQLite file, driven by a
// FakeClock. The fleet is a snapshot built here; the model servers are one
// loopback HTTP stand-in that answers a restart's checks; a host's restart
// command exits with what the test sets.
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Emitter, FakeClock, silentLogger } from '../../src-main/core/base/index.js';
import { ConfigSchema, ConfigService, type ConfigInput } from '../../src-main/core/config/index.js';
import { LifecycleService, lifecycleTargets } from '../../src-main/core/lifecycle/index.js';
import { RequestLog, requestWindows } from '../../src-main/core/proxy/index.js';
import { createConsoleReport, type ReportService } from '../../src-main/core/report/index.js';
import { openStore, type Store } from '../../src-main/core/store/index.js';
import { TelemetryService } from '../../src-main/core/telemetry/index.js';
import type { ActionView, Evidence, FleetSnapshot, HostView, ReportRequestInput, ServiceView } from '../../src-preload/contract/index.js';
import { ReportRequestSchema } from '../../src-preload/contract/index.js';
import { urlClient } from './upstream.js';
import { fleetStateOf } from './fleet-state.js';

export const WORLD_T0 = Date.UTC(2026, 2, 2, 8, 0, 0);

/** h1 priced and connected, h2 connected without a price, h3 priced and never connected. */
export const WORLD_CONFIG: ConfigInput = {
  hosts: [
    { label: 'h1', ssh: { host: 'h1.lan', user: 'ops', agent: true }, pricePerHourUsd: 2.641736, services: [{ id: 'qwen', kind: 'vllm', remotePort: 8000, model: 'Qwen', restartCommand: 'docker restart {service}' }] },
    { label: 'h2', ssh: { host: 'h2.lan', user: 'ops', agent: true }, services: [{ id: 'gemma', kind: 'vllm', remotePort: 8001, model: 'Gemma', restartCommand: 'docker restart {service}' }] },
    { label: 'h3', ssh: { host: 'h3.lan', user: 'ops', agent: true }, pricePerHourUsd: 1.5, services: [{ id: 'llm', kind: 'vllm', remotePort: 8002, model: 'Llm', restartCommand: 'docker restart {service}' }] },
  ],
};

export const WORLD_UPSTREAMS = ['h1/qwen', 'h2/gemma', 'h3/llm'] as const;
const CONNECTED = new Set(['h1', 'h2']);

export interface ReportWorld {
  clock: FakeClock;
  store: Store;
  dbFile: string;
  lifecycle: LifecycleService;
  telemetry: TelemetryService;
  requests: RequestLog;
  reports: ReportService;
  /** Generation rate (tok/s) each connected host reports now; null: its service is stale (no reading). */
  rates: Map<string, number | null>;
  /** Exit status of the next restart command on each host (default 0). */
  exitCodes: Map<string, number>;
  /** Publishes one fleet snapshot of the current rates (the telemetry service records it). */
  tick(): void;
  /** Moves the clock on by `ms`, publishing a snapshot every `stepMs` on the way. */
  advance(ms: number, stepMs?: number): void;
  /** Waits for an approved action to end, moving the fake clock while its checks run over loopback. */
  settle(id: string): Promise<ActionView>;
  preview(request: ReportRequestInput): Promise<Evidence>;
  close(): Promise<void>;
}

async function startUpstream(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const json = (body: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.url === '/is_sleeping') json({ is_sleeping: false });
      else if (req.url === '/v1/completions') json({ choices: [{ text: ' Paris, and it is a city' }] });
      else if (req.url === '/v1/models') json({ data: [{ id: 'Qwen' }] });
      else json({ ok: true });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function hostView(label: string, rate: number | null | undefined, price: number | null, at: number): HostView {
  const cfg = ConfigSchema.parse(WORLD_CONFIG).hosts.find((h) => h.label === label)!;
  const connected = CONNECTED.has(label);
  const stale = !connected || rate === null || rate === undefined;
  const services = cfg.services.map(
    (s) =>
      ({
        id: s.id, kind: s.kind, model: s.model, aliases: [], slots: 4, remotePort: s.remotePort,
        tunnel: { state: connected ? 'up' : 'down', localUrl: null, lastError: null },
        health: connected ? 'ok' : 'unknown', sleep: 'awake', requestsRunning: stale ? null : rate! > 0 ? 1 : 0, requestsWaiting: stale ? null : 0,
        kvCachePct: null, generationTokensPerS: stale ? null : rate, promptTokensPerS: null, stale, staleReason: stale ? 'no reading' : null,
      }) as unknown as ServiceView,
  );
  return {
    label, address: `ops@${label}.lan:22`, state: connected ? 'connected' : 'disconnected', lastError: null, nextRetryAt: null, hostKeyFingerprint: null,
    gpuModel: null, pricePerHourUsd: price, gpus: [], gpuStale: true, gpuStaleReason: 'no GPU source', updatedAt: connected ? at : null, services,
  } as unknown as HostView;
}

export async function startReportWorld(opts: { dbFile?: string; startMs?: number } = {}): Promise<ReportWorld> {
  const dir = mkdtempSync(join(tmpdir(), 'gc-report-world-'));
  const clock = new FakeClock(opts.startMs ?? WORLD_T0);
  const dbFile = opts.dbFile ?? join(dir, 'console.db');
  const store = openStore({ file: dbFile, clock, logger: silentLogger });
  const config = new ConfigService({ path: join(dir, 'config.yaml'), home: dir, initial: ConfigSchema.parse(WORLD_CONFIG) });
  const upstream = await startUpstream();
  const rates = new Map<string, number | null>();
  const exitCodes = new Map<string, number>();
  const ticks = new Emitter<FleetSnapshot>();
  const priceOf = (label: string) => config.current.hosts.find((h) => h.label === label)?.pricePerHourUsd ?? null;
  const snapshot = (): FleetSnapshot => ({ at: clock.now(), hosts: config.current.hosts.map((h) => hostView(h.label, rates.get(h.label), priceOf(h.label), clock.now())) });
  const fleet = {
    state: () => fleetStateOf(snapshot()),
    upstream: () => urlClient(upstream.url),
    exec: (label: string) => Promise.resolve({ exitCode: exitCodes.get(label) ?? 0, signal: null, stdout: '', stderr: exitCodes.get(label) ? 'Error: no such container' : '', truncated: false }),
  };
  const telemetry = new TelemetryService({
    store, config, clock, logger: silentLogger, proxy: null, requests: requestWindows(store.db), notices: { notify: () => undefined }, emit: () => undefined,
    fleet: { onDidRound: (l) => ticks.on((s) => l(fleetStateOf(s))) },
  });
  const requests = new RequestLog({ db: store.db, clock, logger: silentLogger, flushIntervalMs: 10_000 });
  const lifecycle = new LifecycleService({
    store, clock, logger: silentLogger, targets: () => lifecycleTargets(config.current), fleet,
    proxy: { drain: () => Promise.resolve({ drained: 0, aborted: 0 }), resume: () => undefined, load: () => ({ inFlight: 0, queued: 0 }) },
    onAction: () => undefined, onStanding: () => undefined, notify: () => undefined, osUser: () => 'root',
    // Coarse sweeps and flushes: a fake hour passes in a few hundred timer calls, not thousands.
    options: { pollMs: 250, portReleaseGraceMs: 0, sweepIntervalMs: 10_000 },
  });
  const reports = createConsoleReport({
    store, config, fleet, clock, logger: silentLogger, series: telemetry.series, cost: telemetry, actions: lifecycle,
    secrets: { kind: 'none', persistent: false, get: () => Promise.resolve(null), set: () => Promise.resolve(), delete: () => Promise.resolve(), list: () => Promise.resolve([]) },
    bench: {
      repo: {
        getRun: () => { throw new Error('no bench runs in this world'); },
        runsOverlapping: () => [],
      },
      evaluateRun: () => { throw new Error('no bench runs in this world'); },
      evaluateWindow: (fromMs, toMs) => ({ source: 'proxy traffic', fromMs, toMs, figures: [] }),
    },
    pdf: null, emit: () => undefined, version: 'test', mode: 'web', demo: false, dataDir: dir, home: dir,
  } as Parameters<typeof createConsoleReport>[0]);

  const tick = () => ticks.fire(snapshot());
  const advance = (ms: number, stepMs = 1_000) => {
    for (let left = ms; left > 0; left -= stepMs) {
      clock.advance(Math.min(stepMs, left));
      tick();
    }
  };
  return {
    clock, store, dbFile, lifecycle, telemetry, requests, reports, rates, exitCodes, tick, advance,
    async settle(id) {
      let done: ActionView | null = null;
      const run = lifecycle.settled(id).then((v) => (done = v));
      for (let i = 0; done === null && i < 5_000; i++) {
        advance(500, 500);
        await new Promise((r) => setTimeout(r, 1));
      }
      return await run;
    },
    async preview(request) {
      requests.flush();
      return (await reports.preview(ReportRequestSchema.parse(request), 'operator:test@test')).evidence;
    },
    async close() {
      await lifecycle.dispose();
      requests.dispose();
      await telemetry.dispose();
      await new Promise<void>((resolve) => upstream.server.close(() => resolve()));
      store.close();
    },
  };
}
