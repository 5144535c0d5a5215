import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FleetSnapshot } from '../../../src-preload/contract/index.js';
import type { App } from '../../../src-main/core/app.js';
import { silentLogger } from '../../../src-main/core/base/index.js';
import { ConfigSchema, type ConfigInput } from '../../../src-main/core/config/index.js';
import {
  ClientLimits,
  ModelRegistry,
  ProxyServer,
  RequestLog,
  createTokenRepository,
  type ClientSpend,
  type TokenRepository,
  type UpstreamResolver,
} from '../../../src-main/core/proxy/index.js';
import { openStore, type Store } from '../../../src-main/core/store/index.js';
import type { DemoFleet } from '../../../src-main/demo/index.js';
import { startDemoConsole as startConsoleOnDemo } from '../../helpers/demo-console.js';

/** The whole console on the demo fleet (real SSH, tunnels, simulators), proxy on a free port. */
export async function startDemoConsole(options: { decodeSpeedFactor?: number } = {}): Promise<{ app: App; demo: DemoFleet; dir: string; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'gc-proxy-'));
  const c = await startConsoleOnDemo({ dataDir: dir, fleet: { timeScale: 1000, decodeSpeedFactor: options.decodeSpeedFactor ?? 20 }, pollIntervalMs: 200, proxyPort: 0 });
  return {
    app: c.app,
    demo: c.demo,
    dir,
    close: async () => {
      await c.dispose();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const allUp = (s: FleetSnapshot) =>
  s.hosts.length > 0 && s.hosts.every((h) => h.state === 'connected' && h.services.every((v) => v.tunnel.state === 'up'));

/** Resolves once every demo tunnel is up (event-driven). */
export function waitForTunnels(app: App, timeoutMs = 15_000): Promise<void> {
  if (allUp(app.fleet.snapshot())) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void sub.dispose();
      reject(new Error('tunnels did not come up'));
    }, timeoutMs);
    const sub = app.fleet.onDidTick((s) => {
      if (!allUp(s)) return;
      clearTimeout(timer);
      void sub.dispose();
      resolve();
    });
  });
}

export type StubHandler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

/** A loopback upstream whose behaviour each test chooses (stall, reset, 429, 5xx, stream). */
export async function startStub(handler: StubHandler): Promise<{ url: string; server: Server; requests: number; close(): Promise<void> }> {
  const state = { requests: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.requests++;
      handler(req, res, Buffer.concat(chunks));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    server,
    get requests() {
      return state.requests;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface StubProxy {
  proxy: ProxyServer;
  store: Store;
  log: RequestLog;
  tokens: TokenRepository;
  token(name?: string, maxClass?: 'interactive' | 'system' | 'batch'): string;
  rows(): number;
  close(): Promise<void>;
}

/** A ProxyServer in front of stub upstreams (one service per entry), with an in-memory store. */
export async function startStubProxy(
  upstreams: Array<{ label: string; id: string; model: string; url: string; slots?: number; aliases?: string[] }>,
  proxy: ConfigInput['proxy'] = {},
  resolver?: UpstreamResolver,
  options: { file?: string; retention?: { maxAgeMs: number; maxRows: number }; offPrem?: OffPremCounter; spend?: ClientSpend } = {},
): Promise<StubProxy> {
  const config = ConfigSchema.parse({
    hosts: upstreams.map((u) => ({
      label: u.label,
      ssh: { host: '127.0.0.1', user: 'x', agent: true },
      services: [{ id: u.id, kind: 'vllm', remotePort: 8000, model: u.model, aliases: u.aliases ?? [], slots: u.slots ?? 4 }],
    })),
    proxy,
  });
  const store = openStore({ file: options.file ?? ':memory:' });
  const tokens = createTokenRepository(store.db, { now: () => Date.now(), setTimeout: (f, ms) => { const h = setTimeout(f, ms); return { dispose: () => clearTimeout(h) }; }, setInterval: (f, ms) => { const h = setInterval(f, ms); return { dispose: () => clearInterval(h) }; } });
  const log = new RequestLog({
    db: store.db,
    clock: systemClockForTests,
    logger: silentLogger,
    flushIntervalMs: 50,
    ...(options.retention ? { retention: () => options.retention! } : {}),
  });
  const urls = new Map(upstreams.map((u) => [`${u.label}/${u.id}`, u.url]));
  const server = await ProxyServer.start({
    port: 0,
    settings: config.proxy,
    registry: ModelRegistry.fromConfig(config),
    tokens,
    requestLog: log,
    resolver: resolver ?? { resolve: (spec) => ({ ok: true, url: urls.get(spec.key)! }) },
    offPrem: options.offPrem ?? null,
    // As the console runs it: tokens' limits checked on every request (none set: nothing refused).
    limits: new ClientLimits({ clock: systemClockForTests, mono: () => performance.now(), settings: config.proxy }, options.spend ?? null),
  });
  let n = 0;
  return {
    proxy: server,
    store,
    log,
    tokens,
    token: (name = `t${++n}`, maxClass = 'interactive') => tokens.create(name, maxClass).token,
    rows: () => {
      log.flush();
      return (store.db.prepare('SELECT COUNT(*) AS n FROM requests').get() as { n: number }).n;
    },
    close: async () => {
      await server.close(500);
      log.dispose();
      store.close();
    },
  };
}

import { systemClock as systemClockForTests, type OffPremCounter } from '../../../src-main/core/base/index.js';

/** Sends `text` as it is on a fresh socket to `origin` and resolves with all it answered (3 s at most). */
export function rawHttp(origin: string, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(Number(new URL(origin).port), '127.0.0.1', () => s.write(text));
    let out = '';
    s.on('data', (c) => (out += c.toString()));
    s.on('end', () => resolve(out));
    s.on('error', reject);
    s.setTimeout(3000, () => {
      s.destroy();
      resolve(out);
    });
  });
}
