// The two relays the proxy benchmarks compare, each run as a child role:
// 'bare', the yardstick — Node's http server relaying through an undici Pool,
// nothing else (no checks, no accounting) — and 'proxy', the app's ProxyServer
// wired as the app wires it, with every feature on. Each prints
// `READY <origin> [token]` and exits in order on SIGTERM.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Pool } from 'undici';
import { exitWithParent } from './children.js';

/** The yardstick: relays the upstream's answer as it arrives (SSE included), nothing else. */
export function runBareRelay(upstreamUrl: string): void {
  const pool = new Pool(upstreamUrl, { connections: 256, pipelining: 1, keepAliveTimeout: 10_000 });
  const server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      pool.request({ path: req.url ?? '/', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(body.length) }, body }).then(
        (up) => {
          const headers: Record<string, string> = {};
          for (const name of ['content-type', 'content-length']) {
            const v = up.headers[name];
            if (typeof v === 'string') headers[name] = v;
          }
          res.writeHead(up.statusCode, headers);
          up.body.on('data', (c: Buffer) => res.write(c));
          up.body.on('end', () => res.end());
          up.body.on('error', () => res.destroy());
        },
        () => {
          res.writeHead(502);
          res.end();
        },
      );
    });
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`READY http://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
  // An orderly exit, so that --cpu-prof (PROXY_BENCH_PROF_ROLE=bare) writes its profile.
  process.on('SIGTERM', () => process.exit(0));
  exitWithParent();
}

export interface ProxyRelayOptions {
  upstreamUrl: string;
  /** For the SQLite file. */
  dir: string;
  model: string;
  slots: number;
}

/**
 * The proxy with every feature on: token check, priority pool, usage capture (include_usage
 * injected and stripped for streams), batched request rows in a SQLite file (with token
 * last-use stamps), and the 1 s stats snapshot the app emits. PROXY_BENCH_NOLOG=1: no request log.
 */
export async function runProxyRelay(o: ProxyRelayOptions): Promise<void> {
  const { ConfigSchema } = await import('../../../src-main/core/config/index.js');
  const { ModelRegistry, ProxyServer, RequestLog, createTokenRepository } = await import('../../../src-main/core/proxy/index.js');
  const { openStore } = await import('../../../src-main/core/store/index.js');
  const { silentLogger, systemClock } = await import('../../../src-main/core/base/index.js');
  const config = ConfigSchema.parse({
    hosts: [
      {
        label: 'bench',
        // PROXY_BENCH_LIMITS=1 (--limits): a priced host, so the token's budget has a spend to compare.
        ...(process.env.PROXY_BENCH_LIMITS ? { pricePerHourUsd: 2 } : {}),
        ssh: { host: '127.0.0.1', user: 'x', agent: true },
        services: [{ id: 'up', kind: 'vllm', remotePort: 8000, model: o.model, slots: o.slots }],
      },
    ],
    proxy: {
      queueBound: { interactive: 100_000 },
      // PROXY_BENCH_TRACES=1 (--traces): per-model shaping and timeouts on, as a config would set them (the bench's max_tokens 8 is within the ceiling).
      ...(process.env.PROXY_BENCH_TRACES ? { models: { [o.model]: { maxTokens: { default: 16, ceiling: 4096 }, timeouts: { headersMs: 600_000, idleMs: 300_000, totalMs: 3_600_000 } } } } : {}),
    },
  });
  const store = openStore({ file: join(o.dir, 'bench.db') });
  const tokens = createTokenRepository(store.db, systemClock);
  // PROXY_BENCH_LIMITS=1 (--limits): the token has an allow-list, rpm and tpm buckets too large to refuse, and a budget.
  const benchLimits = process.env.PROXY_BENCH_LIMITS
    ? { models: [o.model], rpm: 1_000_000_000, tpm: 1_000_000_000, budgetUsd: 1_000_000, budgetAction: 'refuse' as const, expiresAt: Date.now() + 86_400_000 }
    : undefined;
  const { token } = tokens.create('bench', 'interactive', benchLimits);
  // As the app wires it: token last-use stamped per flushed batch, a stats snapshot every second.
  const log = new RequestLog({ db: store.db, clock: systemClock, logger: silentLogger, onFlushed: (clients, at) => tokens.touch(clients, at) });
  // PROXY_BENCH_CAPTURE=failures (--capture-failures): captured requests on for failures, as a config would set it.
  const captures = process.env.PROXY_BENCH_CAPTURE ? await benchCaptures(config, store, o.dir) : null;
  const limits = benchLimits ? await benchClientLimits(config, store, tokens) : null;
  const proxy = await ProxyServer.start({
    port: 0,
    limits: limits?.limits ?? null,
    capture: captures?.recorder ?? null,
    settings: config.proxy,
    registry: ModelRegistry.fromConfig(config),
    tokens,
    requestLog: process.env.PROXY_BENCH_NOLOG ? null : log,
    resolver: { resolve: () => ({ ok: true, url: o.upstreamUrl }) },
  });
  const tick = setInterval(() => proxy.snapshot(), 1_000);
  exitWithParent();
  process.stdout.write(`READY ${proxy.origin} ${token}\n`);
  process.on('SIGTERM', () => {
    clearInterval(tick);
    void proxy.close(100).then(() => {
      log.dispose();
      void captures?.dispose();
      limits?.budget.dispose();
      const rows = (store.db.prepare('SELECT COUNT(*) AS n FROM requests').get() as { n: number }).n;
      process.stderr.write(`proxy rows written: ${rows}, answered: ${proxy.answeredCount}\n`);
      store.close();
      process.exit(0);
    });
  });
}

/** The console's Captures over the bench's store, with `proxy.capture` on for failures only. */
async function benchCaptures(config: import('../../../src-main/core/config/index.js').Config, store: import('../../../src-main/core/store/index.js').Store, dir: string) {
  const { ConfigService } = await import('../../../src-main/core/config/index.js');
  const { Captures } = await import('../../../src-main/core/proxy/index.js');
  const { silentLogger, systemClock } = await import('../../../src-main/core/base/index.js');
  const withCapture = { ...config, proxy: { ...config.proxy, capture: { ...config.proxy.capture, enabled: true, failures: true, sampleRate: 0 } } };
  const service = new ConfigService({ path: join(dir, 'none.yaml'), home: dir, initial: withCapture });
  return new Captures({ store, config: service, secrets: null, clock: systemClock, logger: silentLogger });
}

/** The console's per-client limits over the bench's store: the request path's checks and the month's spend recomputed every 60 s, as the app runs them. */
async function benchClientLimits(
  config: import('../../../src-main/core/config/index.js').Config,
  store: import('../../../src-main/core/store/index.js').Store,
  tokens: import('../../../src-main/core/proxy/index.js').TokenRepository,
) {
  const { ClientBudget, ClientLimits, requestWindows } = await import('../../../src-main/core/proxy/index.js');
  const { silentLogger, systemClock } = await import('../../../src-main/core/base/index.js');
  const { performance } = await import('node:perf_hooks');
  const budget = new ClientBudget({
    windows: requestWindows(store.db),
    config: { current: config },
    budgets: () => new Map(tokens.list().filter((t) => t.revokedAt === null && t.limits.budgetUsd !== null).map((t) => [t.name, t.limits])),
    audit: store.audit,
    settings: store.settings,
    notices: null,
    clock: systemClock,
    logger: silentLogger,
  });
  budget.refresh();
  return { budget, limits: new ClientLimits({ clock: systemClock, mono: () => performance.now(), settings: config.proxy }, budget) };
}
