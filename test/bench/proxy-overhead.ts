// Benchmark (prints figures; not a test): what the proxy adds on top of a
// minimal, fast OpenAI-compatible upstream, against the direct path and
// against Debian's nginx as a plain streaming reverse proxy, in one run.
//   - concurrency 1: added latency p50/p99 (through X minus direct), non-streaming and streaming
//   - concurrency 64: requests/s, and the proxy's share of nginx's
// The proxy runs with every feature on: token check, priority pool, usage
// capture (include_usage injected and stripped for streams), batched request rows
// in a SQLite file (with token last-use stamps), and the 1 s stats snapshot the
// app emits. 'bare' is the yardstick: a minimal Node `http` + undici pass-through
// (no checks, no accounting) in its own process, so the proxy's figures can be
// judged against what Node itself costs. Upstream, bare, proxy and nginx each
// run in their own process; the children run from an esbuild bundle (as the app
// does), not through tsx (--tsx to compare).
// Each table also prints CPU µs per request at c=64 for the relaying process, the upstream and
// the load generator (from /proc): on a shared 2-core machine that is steadier than wall time.
//   npx tsx test/bench/proxy-overhead.ts [--requests N] [--rounds N] [--targets direct,bare,proxy,nginx] [--tsx]
// Diagnostics: PROXY_BENCH_PROF=DIR (CPU profile of the proxy child; PROXY_BENCH_PROF_ROLE=bare for
// the yardstick), PROXY_BENCH_NOLOG=1 (the proxy without its request log), PROXY_BENCH_PROXY_FLAGS="…"
// (Node/V8 flags for the proxy and bare children; default --no-allocation-site-pretenuring, as shipped).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

const CHUNKS = 8;

// --- child roles -------------------------------------------------------------

async function runUpstream(): Promise<void> {
  const body = JSON.stringify({
    id: 'c',
    object: 'chat.completion',
    created: 1,
    model: 'bench',
    choices: [{ index: 0, message: { role: 'assistant', content: 'hello world' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
  });
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const text = Buffer.concat(parts).toString();
      if (!text.includes('"stream":true')) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
        return;
      }
      const usage = text.includes('"include_usage":true');
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let out = '';
      for (let i = 0; i < CHUNKS; i++) {
        out += `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"bench","choices":[{"index":0,"delta":{"content":"t${i}"},"finish_reason":null}]${usage ? ',"usage":null' : ''}}\n\n`;
      }
      if (usage) out += 'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"bench","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":8,"total_tokens":13}}\n\n';
      res.end(out + 'data: [DONE]\n\n');
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`READY ${(server.address() as AddressInfo).port}\n`));
}

/** The yardstick: Node's http server relaying through an undici Pool, nothing else. */
async function runBare(upstreamUrl: string): Promise<void> {
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
}

async function runProxy(upstreamUrl: string, dir: string): Promise<void> {
  const { ConfigSchema } = await import('../../src-main/core/config/index.js');
  const { ModelRegistry, ProxyServer, RequestLog, createTokenRepository } = await import('../../src-main/core/proxy/index.js');
  const { openStore } = await import('../../src-main/core/store/index.js');
  const { silentLogger, systemClock } = await import('../../src-main/core/base/index.js');
  const config = ConfigSchema.parse({
    hosts: [{ label: 'bench', ssh: { host: '127.0.0.1', user: 'x', agent: true }, services: [{ id: 'up', kind: 'vllm', remotePort: 8000, model: 'bench', slots: 128 }] }],
    proxy: { queueBound: { interactive: 100_000 } },
  });
  const store = openStore({ file: join(dir, 'bench.db') });
  const tokens = createTokenRepository(store.db, systemClock);
  const { token } = tokens.create('bench', 'interactive');
  // As the app wires it: token last-use stamped per flushed batch, a stats snapshot every second.
  const log = new RequestLog({ db: store.db, clock: systemClock, logger: silentLogger, onFlushed: (clients, at) => tokens.touch(clients, at) });
  const proxy = await ProxyServer.start({
    port: 0,
    settings: config.proxy,
    registry: ModelRegistry.fromConfig(config),
    tokens,
    requestLog: process.env.PROXY_BENCH_NOLOG ? null : log,
    resolver: { resolve: () => ({ ok: true, url: upstreamUrl }) },
  });
  const tick = setInterval(() => proxy.snapshot(), 1_000);
  process.stdout.write(`READY ${proxy.origin} ${token}\n`);
  process.on('SIGTERM', () => {
    clearInterval(tick);
    void proxy.close(100).then(() => {
      log.dispose();
      const rows = (store.db.prepare('SELECT COUNT(*) AS n FROM requests').get() as { n: number }).n;
      process.stderr.write(`proxy rows written: ${rows}, answered: ${proxy.answeredCount}\n`);
      store.close();
      process.exit(0);
    });
  });
}

// --- driver ------------------------------------------------------------------

/** Bundles this file (children run from it, as the app runs from its build) unless --tsx. */
async function childEntry(tsx: boolean): Promise<string[]> {
  const self = fileURLToPath(import.meta.url);
  if (tsx) return ['--import', 'tsx', self];
  const { build } = await import('esbuild');
  const out = join(dirname(self), '../../node_modules/.cache/gpu-console-bench/proxy-overhead.mjs');
  mkdirSync(dirname(out), { recursive: true });
  await build({ entryPoints: [self], outfile: out, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'error' });
  return [out];
}

function startChild(entry: string[], args: string[]): Promise<{ child: ChildProcess; line: string[] }> {
  // PROXY_BENCH_PROF=DIR: CPU profile of the proxy (or bare, PROXY_BENCH_PROF_ROLE=bare) child.
  const prof = process.env.PROXY_BENCH_PROF && args[0] === (process.env.PROXY_BENCH_PROF_ROLE ?? 'proxy') ? ['--cpu-prof', '--cpu-prof-dir', process.env.PROXY_BENCH_PROF] : [];
  // The Node relays (proxy and the bare yardstick) run with the V8 flag the shipped entry points set
  // (bin/gpu-console.js, shell/main.ts); PROXY_BENCH_PROXY_FLAGS replaces it (e.g. "--allocation-site-pretenuring"
  // for V8's default).
  const flags = args[0] === 'proxy' || args[0] === 'bare' ? (process.env.PROXY_BENCH_PROXY_FLAGS ?? '--no-allocation-site-pretenuring').split(' ').filter(Boolean) : [];
  const child = spawn(process.execPath, [...flags, ...prof, ...entry, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /READY (.+)\n/.exec(out);
      if (m) resolve({ child, line: m[1]!.split(' ') });
    });
    child.once('exit', (code) => reject(new Error(`child ${args[0]} exited ${code}`)));
  });
}

function startNginx(upstreamPort: number, dir: string): Promise<{ child: ChildProcess; port: number } | null> {
  const bin = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => spawnSync(p, ['-v']).status === 0);
  if (!bin) return Promise.resolve(null);
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `worker_processes 1;
daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  upstream model { server 127.0.0.1:${upstreamPort}; keepalive 256; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://model;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_request_buffering off;
    }
  }
}
`,
  );
  const child = spawn(bin, ['-c', conf, '-p', dir], { stdio: ['ignore', 'inherit', 'inherit'] });
  return new Promise((resolve) => {
    const probe = async (left: number): Promise<void> => {
      try {
        const p = new Pool(`http://127.0.0.1:${port}`);
        await (await p.request({ path: '/', method: 'POST', body: '{}' })).body.dump();
        await p.close();
        resolve({ child, port });
      } catch {
        if (left <= 0) resolve(null);
        else setTimeout(() => void probe(left - 1), 100);
      }
    };
    void probe(50);
  });
}

/** User + system CPU ms of a process so far (Linux /proc; 0 elsewhere). */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}
const CLOCK_TICKS = 100;

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

interface Target {
  name: string;
  /** The process doing the relaying (direct: none), for its CPU time per request. */
  pid: number | null;
  origin: string;
  headers: Record<string, string>;
}

function bodyFor(stream: boolean): string {
  return JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8, ...(stream ? { stream: true } : {}) });
}

async function run(t: Target, stream: boolean, concurrency: number, requests: number, warmup = Math.max(concurrency * 2, 200)): Promise<{ times: number[]; rps: number }> {
  const pool = new Pool(t.origin, { connections: concurrency, pipelining: 1, keepAliveTimeout: 60_000 });
  const body = bodyFor(stream);
  const headers = { 'content-type': 'application/json', ...t.headers };
  const one = async (): Promise<number> => {
    const start = process.hrtime.bigint();
    const res = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers, body });
    const text = await res.body.text();
    if (res.statusCode !== 200 || (stream && !text.endsWith('data: [DONE]\n\n'))) throw new Error(`${t.name}: ${res.statusCode} ${text.slice(0, 200)}`);
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  // Warm the connections (and, for the first cell, the relay's JIT) without timing it.
  for (let done = 0; done < warmup; done += concurrency) await Promise.all(Array.from({ length: concurrency }, one));
  const times: number[] = [];
  let left = requests;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) times.push(await one());
    }),
  );
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  await pool.close();
  return { times: times.sort((a, b) => a - b), rps: requests / seconds };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '3000' },
      rounds: { type: 'string', default: '3' },
      targets: { type: 'string', default: 'direct,bare,proxy,nginx' },
      tsx: { type: 'boolean', default: false },
    },
  });
  const requests = Number(values.requests);
  const rounds = Number(values.rounds);
  const wanted = new Set(['direct', ...values.targets.split(',')]);
  const dir = mkdtempSync(join(tmpdir(), 'gc-bench-proxy-'));
  const entry = await childEntry(values.tsx);
  const upstream = await startChild(entry, ['upstream']);
  const upstreamUrl = `http://127.0.0.1:${upstream.line[0]}`;
  const bare = wanted.has('bare') ? await startChild(entry, ['bare', upstreamUrl]) : null;
  const proxy = wanted.has('proxy') ? await startChild(entry, ['proxy', upstreamUrl, dir]) : null;
  const nginx = wanted.has('nginx') ? await startNginx(Number(upstream.line[0]), dir) : null;
  const targets: Target[] = [{ name: 'direct', pid: null, origin: upstreamUrl, headers: {} }];
  if (bare) targets.push({ name: 'bare', pid: bare.child.pid!, origin: bare.line[0]!, headers: {} });
  if (proxy) targets.push({ name: 'proxy', pid: proxy.child.pid!, origin: proxy.line[0]!, headers: { authorization: `Bearer ${proxy.line[1]}` } });
  if (nginx) targets.push({ name: 'nginx', pid: nginx.child.pid!, origin: `http://127.0.0.1:${nginx.port}`, headers: {} });
  else if (wanted.has('nginx')) console.log('nginx not found (apt-get install nginx-light): the nginx column is skipped');

  // Every relay runs the same warm-up first (both kinds of request, both concurrencies), so that no
  // target's first cell measures its JIT compiling and re-optimising.
  for (const t of targets) for (const stream of [false, true]) for (const c of [1, 64]) await run(t, stream, c, 0, 3_000);
  console.log(`proxy overhead — ${requests} requests per cell, ${rounds} rounds (median), upstream streams ${CHUNKS} chunks, children ${values.tsx ? 'under tsx' : 'from an esbuild bundle'}`);
  for (const stream of [false, true]) {
    const p50: Record<string, number[]> = {};
    const p99: Record<string, number[]> = {};
    const rps: Record<string, number[]> = {};
    const cpu: Record<string, Array<{ client: number; upstream: number; relay: number }>> = {};
    for (let r = 0; r < rounds; r++) {
      for (const t of targets) {
        const c1 = await run(t, stream, 1, requests);
        (p50[t.name] ??= []).push(pct(c1.times, 50));
        (p99[t.name] ??= []).push(pct(c1.times, 99));
        const before = { up: cpuMs(upstream.child.pid!), relay: t.pid ? cpuMs(t.pid) : 0, client: process.cpuUsage() };
        const c64 = await run(t, stream, 64, requests * 3);
        (rps[t.name] ??= []).push(c64.rps);
        const client = process.cpuUsage(before.client);
        const per = (ms: number) => (ms * 1000) / (requests * 3);
        (cpu[t.name] ??= []).push({
          client: per((client.user + client.system) / 1000),
          upstream: per(cpuMs(upstream.child.pid!) - before.up),
          relay: t.pid ? per(cpuMs(t.pid) - before.relay) : 0,
        });
      }
    }
    // Added latency and throughput ratios are taken per round (the cells of one round run back to back,
    // so they share the machine's load at the time) and the median over rounds is printed.
    const perRound = (xs: number[], base: number[], f: (a: number, b: number) => number) => median(xs.map((x, i) => f(x, base[i]!)));
    const pctOf = (r: number[], base: string) => (rps[base] ? `${(perRound(r, rps[base], (a, b) => a / b) * 100).toFixed(0)}%` : '—');
    console.log(
      `\n${stream ? 'streaming' : 'non-streaming'}  (direct: p50 ${median(p50['direct']!).toFixed(3)} ms, p99 ${median(p99['direct']!).toFixed(3)} ms, ${median(rps['direct']!).toFixed(0)} req/s at c=64)`,
    );
    console.log('target   c=1 added p50   c=1 added p99   c=64 req/s   vs nginx   vs bare');
    for (const t of targets.filter((x) => x.name !== 'direct')) {
      const a50 = perRound(p50[t.name]!, p50['direct']!, (a, b) => a - b);
      const a99 = perRound(p99[t.name]!, p99['direct']!, (a, b) => a - b);
      const r = median(rps[t.name]!);
      console.log(
        `${t.name.padEnd(8)} ${a50.toFixed(3).padStart(10)} ms   ${a99.toFixed(3).padStart(10)} ms   ${r.toFixed(0).padStart(10)}   ${pctOf(rps[t.name]!, 'nginx').padStart(8)}   ${pctOf(rps[t.name]!, 'bare').padStart(7)}`,
      );
    }
    console.log('CPU per request at c=64 (µs; /proc, 10 ms ticks): target   relay   upstream   client');
    for (const t of targets) {
      const xs = cpu[t.name]!;
      const m = (f: (x: (typeof xs)[number]) => number) => median(xs.map(f)).toFixed(0).padStart(8);
      console.log(`${' '.repeat(46)}${t.name.padEnd(8)} ${m((x) => x.relay)} ${m((x) => x.upstream)}  ${m((x) => x.client)}`);
    }
  }
  console.log('\ntargets (issue 4): c=1 added p50 ≤ 0.3 ms, p99 ≤ 1.5 ms; c=64 req/s ≥ 80% of nginx');
  nginx?.child.kill('SIGTERM');
  bare?.child.kill('SIGTERM');
  if (proxy) {
    proxy.child.kill('SIGTERM');
    await new Promise((r) => proxy.child.once('exit', r));
  }
  upstream.child.kill('SIGTERM');
}

const role = process.argv[2];
if (role === 'upstream') void runUpstream();
else if (role === 'bare') void runBare(process.argv[3]!);
else if (role === 'proxy') void runProxy(process.argv[3]!, process.argv[4]!);
else
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
