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
// Targets (PASS/MISS at the end): c=64 requests/s ≥ 90 % of bare's in the same round; c=1 added
// (proxy minus direct) p50 ≤ 0.2 ms, p99 ≤ 1.0 ms.
//   npx tsx test/bench/proxy-overhead.ts [--requests N] [--rounds N] [--targets direct,bare,proxy,nginx] [--tsx] [--capture-failures] [--traces] [--limits]
// Diagnostics: PROXY_BENCH_PROF=DIR (CPU profile of the proxy child, summarised at the end;
// PROXY_BENCH_PROF_ROLE=proxy,bare profiles both and prints what the proxy spends beyond the
// yardstick, function by function), PROXY_BENCH_NOLOG=1 (the proxy without its request
// log), PROXY_BENCH_PROXY_FLAGS="…" (Node/V8 flags for the proxy and bare children; default
// --no-allocation-site-pretenuring, as shipped).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { childEntry, cpuMs, exitWithParent, profiledRoles, startChild, stopChild } from './lib/children.js';
import { describeDifference, describeProfile, loadProfile, profileFile, type ProfileSummary } from './lib/cpu-profile.js';
import { median, pct, printVerdicts, runContext, verdict, type Verdict } from './lib/figures.js';
import { runBareRelay, runProxyRelay } from './lib/relays.js';

const CHUNKS = 8;
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

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
  exitWithParent();
}

// --- driver ------------------------------------------------------------------

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
  const traced = process.env.PROXY_BENCH_TRACES === '1';
  let n = 0;
  const one = async (): Promise<number> => {
    const start = process.hrtime.bigint();
    // --traces: a client's own id on every request (unique, as applications send them), and a W3C traceparent.
    const h = traced ? { ...headers, 'x-request-id': `bench-${++n}`, traceparent: TRACEPARENT } : headers;
    const res = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers: h, body });
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

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '3000' },
      rounds: { type: 'string', default: '3' },
      targets: { type: 'string', default: 'direct,bare,proxy,nginx' },
      tsx: { type: 'boolean', default: false },
      // Captured requests on, for failures only (proxy.capture): the success path holds its taps and drops them.
      'capture-failures': { type: 'boolean', default: false },
      // Every request carries X-Request-Id and traceparent (kept, forwarded, stored), and the proxy has proxy.models for the model.
      traces: { type: 'boolean', default: false },
      // Per-client limits on the bench token: allow-list, rpm/tpm buckets that never refuse, a budget (spend recomputed every 60 s), an expiry.
      limits: { type: 'boolean', default: false },
    },
  });
  if (values.traces) process.env.PROXY_BENCH_TRACES = '1';
  if (values.limits) process.env.PROXY_BENCH_LIMITS = '1';
  if (values['capture-failures']) process.env.PROXY_BENCH_CAPTURE = 'failures';
  const requests = Number(values.requests);
  const rounds = Number(values.rounds);
  const wanted = new Set(['direct', ...values.targets.split(',')]);
  const dir = mkdtempSync(join(tmpdir(), 'gc-bench-proxy-'));
  const entry = await childEntry(import.meta.url, values.tsx);
  const upstream = await startChild(entry, ['upstream']);
  const upstreamUrl = `http://127.0.0.1:${upstream.line[0]}`;
  const bare = wanted.has('bare') ? await startChild(entry, ['bare', upstreamUrl]) : null;
  const proxy = wanted.has('proxy') ? await startChild(entry, ['proxy', upstreamUrl, dir]) : null;
  const nginx = wanted.has('nginx') ? await startNginx(Number(upstream.line[0]), dir) : null;
  const targets: Target[] = [{ name: 'direct', pid: null, origin: upstreamUrl, headers: {} }];
  if (bare) targets.push({ name: 'bare', pid: bare.pid, origin: bare.line[0]!, headers: {} });
  if (proxy) targets.push({ name: 'proxy', pid: proxy.pid, origin: proxy.line[0]!, headers: { authorization: `Bearer ${proxy.line[1]}` } });
  if (nginx) targets.push({ name: 'nginx', pid: nginx.child.pid!, origin: `http://127.0.0.1:${nginx.port}`, headers: {} });
  else if (wanted.has('nginx')) console.log('nginx not found (apt-get install nginx-light): the nginx column is skipped');

  // Every relay runs the same warm-up first (both kinds of request, both concurrencies), so that no
  // target's first cell measures its JIT compiling and re-optimising.
  for (const t of targets) for (const stream of [false, true]) for (const c of [1, 64]) await run(t, stream, c, 0, 3_000);
  console.log(`proxy overhead — ${requests} requests per cell, ${rounds} rounds (median), upstream streams ${CHUNKS} chunks, children ${values.tsx ? 'under tsx' : 'from an esbuild bundle'}`);
  console.log(`at start: ${runContext()}`);
  const verdicts: Verdict[] = [];
  for (const stream of [false, true]) {
    const p50: Record<string, number[]> = {};
    const p99: Record<string, number[]> = {};
    const rps: Record<string, number[]> = {};
    const cpu: Record<string, Array<{ client: number; upstream: number; relay: number }>> = {};
    for (let r = 0; r < rounds; r++) {
      // direct first (the reference of every round), then the relays, in reverse order every other
      // round: on a shared machine, load that drifts during a round then does not favour one relay.
      const relays = targets.slice(1);
      for (const t of [targets[0]!, ...(r % 2 === 0 ? relays : relays.reverse())]) {
        const c1 = await run(t, stream, 1, requests);
        (p50[t.name] ??= []).push(pct(c1.times, 50));
        (p99[t.name] ??= []).push(pct(c1.times, 99));
        const before = { up: cpuMs(upstream.pid), relay: t.pid ? cpuMs(t.pid) : 0, client: process.cpuUsage() };
        const c64 = await run(t, stream, 64, requests * 3);
        (rps[t.name] ??= []).push(c64.rps);
        const client = process.cpuUsage(before.client);
        const per = (ms: number) => (ms * 1000) / (requests * 3);
        (cpu[t.name] ??= []).push({
          client: per((client.user + client.system) / 1000),
          upstream: per(cpuMs(upstream.pid) - before.up),
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
    if (p50['proxy']) {
      const kind = stream ? 'streaming' : 'non-streaming';
      if (rps['bare']) verdicts.push(verdict(`${kind} c=64 req/s, proxy / bare`, perRound(rps['proxy']!, rps['bare'], (a, b) => a / b) * 100, '≥', 90, ' %', 0));
      verdicts.push(verdict(`${kind} c=1 added p50 (proxy − direct)`, perRound(p50['proxy'], p50['direct']!, (a, b) => a - b), '≤', 0.2, ' ms', 3));
      verdicts.push(verdict(`${kind} c=1 added p99 (proxy − direct)`, perRound(p99['proxy']!, p99['direct']!, (a, b) => a - b), '≤', 1.0, ' ms', 3));
    }
  }
  console.log(`\nat end: ${runContext()}`);
  if (verdicts.length) {
    console.log('targets:');
    printVerdicts(verdicts);
  }
  nginx?.child.kill('SIGTERM');
  if (bare) await stopChild(bare);
  if (proxy) await stopChild(proxy);
  await stopChild(upstream);
  const profiles = new Map<string, ProfileSummary>();
  for (const r of profiledRoles()) {
    const file = profileFile(process.env.PROXY_BENCH_PROF!, r);
    if (file) profiles.set(r, loadProfile(file, entry.bundle));
  }
  for (const [r, p] of profiles) console.log(`\n${r}: ${describeProfile(p)}`);
  if (profiles.has('proxy') && profiles.has('bare')) console.log(`\n${describeDifference(profiles.get('proxy')!, profiles.get('bare')!)}`);
  entry.dispose();
}

const role = process.argv[2];
if (role === 'upstream') void runUpstream();
else if (role === 'bare') runBareRelay(process.argv[3]!);
else if (role === 'proxy') void runProxyRelay({ upstreamUrl: process.argv[3]!, dir: process.argv[4]!, model: 'bench', slots: 128 });
else
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
