// Benchmark (prints figures; not a test): what the proxy adds on top of a
// minimal, fast OpenAI-compatible upstream, against the direct path and
// against Debian's nginx as a plain streaming reverse proxy, in one run.
//   - concurrency 1: added latency p50/p99 (through X minus direct), non-streaming and streaming
//   - concurrency 64: requests/s, and the proxy's share of nginx's
// The proxy runs with every feature on: token check, priority pool, usage
// capture (include_usage injected and stripped for streams), batched request rows
// in a SQLite file. Upstream, proxy and nginx each run in their own process.
//   npx tsx test/bench/proxy-overhead.ts [--requests N] [--rounds N]
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  const log = new RequestLog({ db: store.db, clock: systemClock, logger: silentLogger });
  const proxy = await ProxyServer.start({
    port: 0,
    settings: config.proxy,
    registry: ModelRegistry.fromConfig(config),
    tokens,
    requestLog: log,
    resolver: { resolve: () => ({ ok: true, url: upstreamUrl }) },
  });
  process.stdout.write(`READY ${proxy.origin} ${token}\n`);
  process.on('SIGTERM', () => {
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

function startChild(args: string[]): Promise<{ child: ChildProcess; line: string[] }> {
  const prof = process.env.PROXY_BENCH_PROF && args[0] === 'proxy' ? ['--cpu-prof', '--cpu-prof-dir', process.env.PROXY_BENCH_PROF] : [];
  const child = spawn(process.execPath, [...prof, '--import', 'tsx', new URL(import.meta.url).pathname, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
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

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

interface Target {
  name: string;
  origin: string;
  headers: Record<string, string>;
}

function bodyFor(stream: boolean): string {
  return JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8, ...(stream ? { stream: true } : {}) });
}

async function run(t: Target, stream: boolean, concurrency: number, requests: number): Promise<{ times: number[]; rps: number }> {
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
  await Promise.all(Array.from({ length: Math.max(concurrency * 2, 50) }, one));
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
  const { values } = parseArgs({ options: { requests: { type: 'string', default: '3000' }, rounds: { type: 'string', default: '3' } } });
  const requests = Number(values.requests);
  const rounds = Number(values.rounds);
  const dir = mkdtempSync(join(tmpdir(), 'gc-bench-proxy-'));
  const upstream = await startChild(['upstream']);
  const upstreamUrl = `http://127.0.0.1:${upstream.line[0]}`;
  const proxy = await startChild(['proxy', upstreamUrl, dir]);
  const nginx = await startNginx(Number(upstream.line[0]), dir);
  const targets: Target[] = [
    { name: 'direct', origin: upstreamUrl, headers: {} },
    { name: 'proxy', origin: proxy.line[0]!, headers: { authorization: `Bearer ${proxy.line[1]}` } },
  ];
  if (nginx) targets.push({ name: 'nginx', origin: `http://127.0.0.1:${nginx.port}`, headers: {} });
  else console.log('nginx not found (apt-get install nginx-light): the nginx column is skipped');

  console.log(`proxy overhead — ${requests} requests per cell, ${rounds} rounds (median), upstream streams ${CHUNKS} chunks`);
  for (const stream of [false, true]) {
    const p50: Record<string, number[]> = {};
    const p99: Record<string, number[]> = {};
    const rps: Record<string, number[]> = {};
    for (let r = 0; r < rounds; r++) {
      for (const t of targets) {
        const c1 = await run(t, stream, 1, requests);
        (p50[t.name] ??= []).push(pct(c1.times, 50));
        (p99[t.name] ??= []).push(pct(c1.times, 99));
        const c64 = await run(t, stream, 64, requests * 3);
        (rps[t.name] ??= []).push(c64.rps);
      }
    }
    const d50 = median(p50['direct']!);
    const d99 = median(p99['direct']!);
    console.log(`\n${stream ? 'streaming' : 'non-streaming'}  (direct: p50 ${d50.toFixed(3)} ms, p99 ${d99.toFixed(3)} ms, ${median(rps['direct']!).toFixed(0)} req/s at c=64)`);
    console.log('target   c=1 added p50   c=1 added p99   c=64 req/s   vs nginx');
    for (const t of targets.filter((x) => x.name !== 'direct')) {
      const a50 = median(p50[t.name]!) - d50;
      const a99 = median(p99[t.name]!) - d99;
      const r = median(rps[t.name]!);
      const ratio = nginx ? `${((r / median(rps['nginx']!)) * 100).toFixed(0)}%` : '—';
      console.log(`${t.name.padEnd(8)} ${a50.toFixed(3).padStart(10)} ms   ${a99.toFixed(3).padStart(10)} ms   ${r.toFixed(0).padStart(10)}   ${ratio.padStart(6)}`);
    }
  }
  console.log('\ntargets (issue 4): c=1 added p50 ≤ 0.3 ms, p99 ≤ 1.5 ms; c=64 req/s ≥ 80% of nginx');
  nginx?.child.kill('SIGTERM');
  proxy.child.kill('SIGTERM');
  await new Promise((r) => proxy.child.once('exit', r));
  upstream.child.kill('SIGTERM');
}

const role = process.argv[2];
if (role === 'upstream') void runUpstream();
else if (role === 'proxy') void runProxy(process.argv[3]!, process.argv[4]!);
else
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
