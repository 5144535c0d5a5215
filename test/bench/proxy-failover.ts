// Benchmark (prints figures; not a test): failover between two replicas of one
// model under load. Two stub upstreams (lib/sse-stub.ts, each in its own
// process) serve the same model; the proxy (in this process) has a registry of
// two UpstreamSpec entries for it and a resolver that maps each to its own
// upstream. Clients stream chat completions without pause; mid-run the replica
// that has served the most is killed (SIGKILL).
//   - failed requests among those that had not begun streaming (no content chunk
//     reached the client before the failure) [target 0]; requests cut after they
//     began streaming are counted apart (nothing can save those)
//   - time until the dead replica is skipped: from the kill until the proxy marks
//     it failing (its snapshot, read every 20 ms), and the connection attempts
//     that still reach it — each replica sits behind a loopback TCP forwarder
//     that counts them and, once the replica is gone, accepts and closes at once,
//     as an SSH local forward does when the far end refuses (how the app reaches
//     a replica). --refuse: the forwarder stops listening too (connection
//     refused; attempts are then not counted)
// Scenarios (both by default): 'prefill' — the replica sends nothing, not even
// headers, until its first token; 'headers-first' — status and headers at once,
// tokens after the prefill, as vLLM's server does.
// The resolver always answers ready (the fleet learns that an engine died only
// at its next poll): what is measured is the proxy's own failover.
//   npx tsx test/bench/proxy-failover.ts [--clients 32] [--slots 16] [--seconds 12] [--kill-at 4]
//                                        [--ttft-ms 150] [--chunks 20] [--interval-ms 20]
//                                        [--scenario both|prefill|headers-first] [--refuse] [--tsx]
import { mkdtempSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool, type Dispatcher } from 'undici';
import { silentLogger, systemClock } from '../../src-main/core/base/index.js';
import { ConfigSchema } from '../../src-main/core/config/index.js';
import { ModelRegistry, ProxyServer, RequestLog, createTokenRepository, defaultCaps, type UpstreamSpec } from '../../src-main/core/proxy/index.js';
import { openStore } from '../../src-main/core/store/index.js';
import { childEntry, startChild, type Child, type ChildEntry } from './lib/children.js';
import { pct, printVerdicts, runContext, verdict, type Verdict } from './lib/figures.js';
import { runSseStub } from './lib/sse-stub.js';

const MODEL = 'llm';
const monoMs = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A loopback TCP forwarder in front of one replica: counts connection attempts (ms, monotonic). */
class Forwarder {
  readonly attempts: number[] = [];
  private readonly sockets = new Set<Socket>();
  private server!: Server;
  port = 0;

  constructor(private readonly targetPort: number) {}

  async listen(): Promise<void> {
    this.server = createServer((client) => {
      this.attempts.push(monoMs());
      const up = connect(this.targetPort, '127.0.0.1');
      this.sockets.add(client).add(up);
      const end = () => {
        client.destroy();
        up.destroy();
        this.sockets.delete(client);
        this.sockets.delete(up);
      };
      client.on('error', end).on('close', end);
      up.on('error', end).on('close', end);
      client.pipe(up);
      up.pipe(client);
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as { port: number }).port;
  }

  /** Stops listening and cuts every connection (new ones are then refused by the kernel). */
  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((r) => this.server.close(() => r()));
  }
}

interface Outcome {
  startMs: number;
  endMs: number;
  ttftMs: number | null;
  status: number;
  /** Content chunks the client got. */
  chunks: number;
  /** ok | failed before streaming | cut mid-stream */
  kind: 'ok' | 'early' | 'cut';
  code: string | null;
  upstream: string;
}

/** One streaming request; classified by whether any content chunk reached the client before it failed. */
function request(pool: Pool, token: string, body: string, chunks: number): Promise<Outcome> {
  const startMs = monoMs();
  return new Promise((resolve) => {
    let status = 0;
    let upstream = '';
    let text = '';
    let seen = 0;
    let ttftMs: number | null = null;
    let code: string | null = null;
    let done = false;
    const settle = (failed: boolean, why: string | null) => {
      const kind = !failed && seen === chunks && done ? 'ok' : seen > 0 ? 'cut' : 'early';
      resolve({ startMs, endMs: monoMs(), ttftMs, status, chunks: seen, kind, code: kind === 'ok' ? null : (code ?? why ?? `incomplete (${seen} of ${chunks} chunks)`), upstream });
    };
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart() {},
      onResponseStart(_c, statusCode, headers) {
        status = statusCode;
        const u = headers['x-upstream'];
        upstream = typeof u === 'string' ? u : '';
      },
      onResponseData(_c, chunk) {
        text += chunk.toString('utf8');
        let start = 0;
        for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n', start)) {
          const event = text.slice(start, end);
          start = end + 2;
          if (event === 'data: [DONE]') done = true;
          else if (event.startsWith('data: {"error"') || status !== 200) {
            const m = /"code":"([a-z_]+)"/.exec(event);
            code = m ? m[1]! : 'error';
          } else if (event.includes('"delta"')) {
            if (seen++ === 0) ttftMs = monoMs() - startMs;
          }
        }
        text = text.slice(start);
        if (status !== 200 && code === null) {
          const m = /"code":"([a-z_]+)"/.exec(text);
          if (m) code = m[1]!;
        }
      },
      onResponseEnd() {
        settle(status !== 200 || code !== null, status !== 200 ? `status ${status}` : null);
      },
      onResponseError(_c, err) {
        settle(true, (err as { code?: string }).code ?? err.message);
      },
    };
    pool.dispatch(
      {
        path: '/v1/chat/completions',
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body,
        headersTimeout: 60_000,
        bodyTimeout: 60_000,
      },
      handler,
    );
  });
}

interface Options {
  clients: number;
  slots: number;
  seconds: number;
  killAtS: number;
  ttftMs: number;
  chunks: number;
  intervalMs: number;
  headersFirst: boolean;
  refuse: boolean;
}

function spec(label: string, slots: number): UpstreamSpec {
  return { key: `${label}/vllm`, label, serviceId: 'vllm', kind: 'vllm', model: MODEL, aliases: [], slots, caps: defaultCaps(slots), apiKeyRef: null, weight: 1 };
}

async function scenario(entry: ChildEntry, o: Options): Promise<Verdict[]> {
  const stubs: Child[] = [await startChild(entry, ['stub']), await startChild(entry, ['stub'])];
  const forwarders = stubs.map((s) => new Forwarder(Number(new URL(s.line[0]!).port)));
  for (const f of forwarders) await f.listen();
  const specs = [spec('gpu-a', o.slots), spec('gpu-b', o.slots)];
  const urls = new Map(specs.map((s, i) => [s.key, `http://127.0.0.1:${forwarders[i]!.port}`]));
  const config = ConfigSchema.parse({ hosts: [] });
  const dir = mkdtempSync(join(tmpdir(), 'gc-bench-failover-'));
  const store = openStore({ file: join(dir, 'bench.db') });
  const tokens = createTokenRepository(store.db, systemClock);
  const { token } = tokens.create('bench', 'interactive');
  const log = new RequestLog({ db: store.db, clock: systemClock, logger: silentLogger });
  const proxy = await ProxyServer.start({
    port: 0,
    settings: config.proxy,
    registry: new ModelRegistry(specs),
    tokens,
    requestLog: log,
    resolver: { resolve: (s) => ({ ok: true, url: urls.get(s.key)! }) },
  });
  const pool = new Pool(proxy.origin, { connections: o.clients, pipelining: 1 });
  const body = JSON.stringify({
    model: MODEL,
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
    max_tokens: o.chunks,
    bench_interval_ms: o.intervalMs,
    bench_ttft_ms: o.ttftMs,
    bench_headers_first: o.headersFirst,
  });

  const outcomes: Outcome[] = [];
  const t0 = monoMs();
  const deadline = t0 + o.seconds * 1000;
  const clients = Array.from({ length: o.clients }, async () => {
    while (monoMs() < deadline) outcomes.push(await request(pool, token, body, o.chunks));
  });

  // The kill: the replica that has served the most so far (the stringent case; a tie: the first).
  await sleep(o.killAtS * 1000);
  const served = specs.map((s) => outcomes.filter((x) => x.upstream === s.key).length);
  const victim = served[1]! > served[0]! ? 1 : 0;
  const dead = specs[victim]!;
  const killMs = monoMs();
  stubs[victim]!.child.kill('SIGKILL');
  if (o.refuse) await forwarders[victim]!.close();
  let failingAtMs: number | null = null;
  const failingSpans: Array<[number, number]> = [];
  const watch = setInterval(() => {
    const failing = proxy.snapshot().upstreams.find((u) => u.upstream === dead.key)?.failing === true;
    const last = failingSpans[failingSpans.length - 1];
    if (failing) {
      failingAtMs ??= monoMs() - killMs;
      if (last && last[1] === -1) return;
      failingSpans.push([monoMs() - killMs, -1]);
    } else if (last && last[1] === -1) last[1] = monoMs() - killMs;
  }, 20);
  await Promise.all(clients);
  clearInterval(watch);
  const snap = proxy.snapshot();
  await pool.close();
  await proxy.close(1_000);
  log.dispose();
  store.close();
  for (const s of stubs) s.child.kill('SIGKILL');
  for (const [i, f] of forwarders.entries()) if (!(o.refuse && i === victim)) await f.close();

  // --- figures ---
  const before = outcomes.filter((x) => x.startMs < killMs);
  const after = outcomes.filter((x) => x.startMs >= killMs);
  const count = (xs: Outcome[], k: Outcome['kind']) => xs.filter((x) => x.kind === k).length;
  const inFlightAtKill = outcomes.filter((x) => x.startMs < killMs && x.endMs >= killMs);
  const codes = new Map<string, number>();
  for (const x of outcomes) if (x.kind !== 'ok') codes.set(`${x.kind}:${x.code}`, (codes.get(`${x.kind}:${x.code}`) ?? 0) + 1);
  const early = count(outcomes, 'early');
  console.log(`  requests: ${outcomes.length} (${before.length} started before the kill, ${after.length} after; ${inFlightAtKill.length} in flight at the kill)`);
  console.log(`  served per replica before the kill: ${specs.map((s, i) => `${s.key} ${served[i]}`).join(', ')}; killed ${dead.key} at +${((killMs - t0) / 1000).toFixed(1)} s`);
  console.log(`  outcome         before kill   after kill`);
  for (const k of ['ok', 'early', 'cut'] as const) {
    const name = { ok: 'ok', early: 'failed, not begun streaming', cut: 'cut mid-stream' }[k];
    console.log(`  ${name.padEnd(28)} ${String(count(before, k)).padStart(6)}   ${String(count(after, k)).padStart(10)}`);
  }
  if (codes.size) console.log(`  failures by kind:code: ${[...codes].map(([k, n]) => `${k} ×${n}`).join(', ')}`);
  const ttft = (xs: Outcome[]) => xs.map((x) => x.ttftMs).filter((x): x is number => x !== null).sort((a, b) => a - b);
  const tb = ttft(before);
  const ta = ttft(after);
  console.log(`  client TTFT p50 / p99 ms: before kill ${pct(tb, 50).toFixed(0)} / ${pct(tb, 99).toFixed(0)}, after ${pct(ta, 50).toFixed(0)} / ${pct(ta, 99).toFixed(0)} (replica prefill ${o.ttftMs} ms)`);
  const attempts = forwarders[victim]!.attempts.filter((a) => a >= killMs).map((a) => a - killMs);
  // Bursts: attempts less than 250 ms apart belong together (the first is the kill itself; later ones re-probes).
  const bursts: Array<{ from: number; to: number; n: number }> = [];
  for (const a of attempts) {
    const b = bursts[bursts.length - 1];
    if (b && a - b.to < 250) {
      b.to = a;
      b.n++;
    } else bursts.push({ from: a, to: a, n: 1 });
  }
  const skippedAfterMs = bursts.length ? bursts[0]!.to : null;
  if (o.refuse) console.log('  connection attempts on the dead replica: not counted (--refuse: the kernel refuses them)');
  else {
    console.log(
      `  connection attempts on the dead replica after the kill: ${attempts.length}` +
        (bursts.length ? ` in ${bursts.length} burst(s): ${bursts.map((b) => `+${b.from.toFixed(0)}…${b.to.toFixed(0)} ms ×${b.n}`).join(', ')}` : ''),
    );
  }
  console.log(
    `  the proxy marked ${dead.key} failing at ${failingAtMs === null ? 'never' : `+${failingAtMs.toFixed(0)} ms`}` +
      (failingSpans.length ? ` (failing spans: ${failingSpans.map(([a, b]) => `+${a.toFixed(0)}…${b < 0 ? 'end' : `${b.toFixed(0)}`} ms`).join(', ')})` : ''),
  );
  const routed = snap.upstreams.map((u) => `${u.upstream} ${u.routed ?? '?'}${u.failing ? ' (failing)' : ''}`).join(', ');
  console.log(`  proxy: routed ${routed}; failovers ${snap.failovers ?? '?'}`);
  const skipped = failingAtMs ?? (skippedAfterMs !== null && bursts.length > 1 ? skippedAfterMs : NaN);
  return [
    verdict(`failed requests that had not begun streaming`, early, '≤', 0, '', 0),
    { name: 'time until the dead replica is skipped (marked failing)', figure: Number.isFinite(skipped) ? `${skipped.toFixed(0)} ms` : 'never', target: 'none, reported', pass: null },
  ];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      clients: { type: 'string', default: '32' },
      slots: { type: 'string', default: '16' },
      seconds: { type: 'string', default: '12' },
      'kill-at': { type: 'string', default: '4' },
      'ttft-ms': { type: 'string', default: '150' },
      chunks: { type: 'string', default: '20' },
      'interval-ms': { type: 'string', default: '20' },
      scenario: { type: 'string', default: 'both' },
      refuse: { type: 'boolean', default: false },
      tsx: { type: 'boolean', default: false },
    },
  });
  const base = {
    clients: Number(values.clients),
    slots: Number(values.slots),
    seconds: Number(values.seconds),
    killAtS: Number(values['kill-at']),
    ttftMs: Number(values['ttft-ms']),
    chunks: Number(values.chunks),
    intervalMs: Number(values['interval-ms']),
    refuse: values.refuse,
  };
  const scenarios = values.scenario === 'both' ? ['prefill', 'headers-first'] : [values.scenario];
  const entry = await childEntry(import.meta.url, values.tsx);
  console.log(
    `proxy failover — 2 replicas × ${base.slots} slots of one model, ${base.clients} streaming clients for ${base.seconds} s, the busier replica killed at +${base.killAtS} s; ` +
      `answers: prefill ${base.ttftMs} ms then ${base.chunks} chunks every ${base.intervalMs} ms; dead replica ${base.refuse ? 'refuses connections' : 'accepts and closes (as behind an SSH forward)'}`,
  );
  console.log(`at start: ${runContext()}`);
  const verdicts: Verdict[] = [];
  for (const name of scenarios) {
    if (name !== 'prefill' && name !== 'headers-first') throw new Error(`--scenario: both, prefill or headers-first, not ${name}`);
    console.log(`\nscenario ${name}: ${name === 'prefill' ? 'nothing (not even headers) before the first token' : 'status and headers at once, tokens after the prefill (as vLLM)'}`);
    for (const v of await scenario(entry, { ...base, headersFirst: name === 'headers-first' })) verdicts.push({ ...v, name: `${name}: ${v.name}` });
  }
  console.log(`\nat end: ${runContext()}`);
  console.log('targets:');
  printVerdicts(verdicts);
  entry.dispose();
}

const role = process.argv[2];
if (role === 'stub') runSseStub();
else
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
