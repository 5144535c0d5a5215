// Benchmark (prints figures; not a test): streaming as LLMs stream. Many
// concurrent streams, each a long run of small SSE chunks at a decode-like pace
// (default 256 streams × 1,000 chunks at 50 chunks/s, about 20 s a stream),
// through the proxy with usage capture on (the client does not ask for usage:
// the proxy injects stream_options.include_usage, the stub (lib/sse-stub.ts)
// then sends `"usage":null` in every chunk and a usage chunk before [DONE], and
// the proxy strips both again), against the bare Node pass-through (the floor) and the
// direct path, one after the other in the same run.
//   - proxy CPU per chunk: the relay's process CPU (/proc, 10 ms ticks) over the
//     streams' lifetime ÷ chunks relayed, against bare's [target ≤ 1.2×]
//   - added inter-chunk latency: the stub stamps each chunk with its monotonic
//     clock (CLOCK_MONOTONIC, shared by processes on Linux) as it writes it; the
//     client takes the gap it saw between two chunks of a stream minus the gap
//     the stub emitted them at [target: p99 ≤ 1 ms through the proxy]; also the
//     one-way transit (receive − emit) per chunk
// Stub, bare relay and proxy run in their own processes (children from an
// esbuild bundle); the client is this process. Streams start together; each
// stream's chunks are spread over the interval (phase k/streams) unless
// --lockstep, where every stream gets its chunk in the same tick, as one batched
// engine emits a decode step.
//   npx tsx test/bench/proxy-streaming.ts [--streams 256] [--chunks 1000] [--rate 50] [--rounds 1]
//                                         [--targets direct,bare,proxy] [--lockstep] [--tsx]
//   short run: npx tsx test/bench/proxy-streaming.ts --streams 64 --chunks 200
// PROXY_BENCH_PROF=DIR [PROXY_BENCH_PROF_ROLE=proxy,bare]: CPU profiles, summarised at the end (see lib/children.ts).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool, type Dispatcher } from 'undici';
import { childEntry, cpuMs, profiledRoles, startChild, stopChild, type Child } from './lib/children.js';
import { describeDifference, describeProfile, loadProfile, profileFile, type ProfileSummary } from './lib/cpu-profile.js';
import { median, pct, printVerdicts, runContext, verdict, type Verdict } from './lib/figures.js';
import { runBareRelay, runProxyRelay } from './lib/relays.js';
import { nowNs, runSseStub } from './lib/sse-stub.js';

/** The relays' upstream pools hold 256 connections (lib/relays.ts, the proxy's DispatchStage). */
const MAX_STREAMS = 256;

// --- the client (this process) -------------------------------------------------

interface Target {
  name: string;
  /** The relaying process (direct: none). */
  relay: Child | null;
  origin: string;
  headers: Record<string, string>;
}

interface StreamRun {
  /** Receive − emit per chunk, ms. */
  transitMs: Float64Array;
  /** Per chunk after a stream's first: (gap seen at the client) − (gap at the stub), ms. */
  addedGapMs: Float64Array;
  chunks: number;
  /** Reads (data callbacks) at the client: chunks per read above 1 means they queued somewhere on the way. */
  reads: number;
  failures: string[];
  seconds: number;
  cpuMs: { relay: number; stub: number; client: number };
}

const EMIT = '"emit_ns":';

/** One stream: counts its chunks and records their timing; resolves with a failure text or null. */
function oneStream(pool: Pool, t: Target, body: string, chunks: number, out: { transit: Float64Array; gap: Float64Array; n: number; g: number; reads: number }): Promise<string | null> {
  return new Promise((resolve) => {
    let status = 0;
    let pending = '';
    let seen = 0;
    let done = false;
    let prevTransit = NaN;
    let failure: string | null = null;
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart() {},
      onResponseStart(_c, statusCode) {
        status = statusCode;
      },
      onResponseData(_c, chunk) {
        const at = nowNs();
        out.reads++;
        pending += chunk.toString('latin1');
        let start = 0;
        for (let end = pending.indexOf('\n\n'); end >= 0; end = pending.indexOf('\n\n', start)) {
          const event = pending.slice(start, end);
          start = end + 2;
          if (event.startsWith(': ')) continue; // keep-alive comment
          if (event === 'data: [DONE]') {
            done = true;
            continue;
          }
          if (event.includes('"usage"')) failure ??= 'the client got a usage field it did not ask for';
          const k = event.indexOf(EMIT);
          if (k < 0) {
            failure ??= `unexpected event: ${event.slice(0, 120)}`;
            continue;
          }
          const transit = (at - Number(event.slice(k + EMIT.length, event.indexOf('}', k)))) / 1e6;
          seen++;
          out.transit[out.n++] = transit;
          if (!Number.isNaN(prevTransit)) out.gap[out.g++] = transit - prevTransit;
          prevTransit = transit;
        }
        pending = pending.slice(start);
      },
      onResponseEnd() {
        if (status !== 200) resolve(`${t.name}: status ${status}: ${pending.slice(0, 200)}`);
        else if (failure) resolve(`${t.name}: ${failure}`);
        else if (seen !== chunks || !done) resolve(`${t.name}: ${seen} of ${chunks} chunks${done ? '' : ', no [DONE]'}`);
        else resolve(null);
      },
      onResponseError(_c, err) {
        resolve(`${t.name}: ${err.message} after ${seen} chunks`);
      },
    };
    pool.dispatch(
      { origin: t.origin, path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json', ...t.headers }, body, bodyTimeout: 60_000, headersTimeout: 60_000 },
      handler,
    );
  });
}

async function runStreams(pool: Pool, t: Target, stub: Child, streams: number, chunks: number, intervalMs: number, lockstep: boolean): Promise<StreamRun> {
  const out = { transit: new Float64Array(streams * chunks), gap: new Float64Array(streams * chunks), n: 0, g: 0, reads: 0 };
  const before = { relay: t.relay ? cpuMs(t.relay.pid) : 0, stub: cpuMs(stub.pid), client: process.cpuUsage() };
  const t0 = nowNs();
  const failures = (
    await Promise.all(
      Array.from({ length: streams }, (_, k) => {
        const body = JSON.stringify({
          model: 'bench',
          messages: [{ role: 'user', content: 'Write a long story.' }],
          stream: true,
          max_tokens: chunks,
          bench_interval_ms: intervalMs,
          bench_phase_ms: lockstep ? 0 : (k * intervalMs) / streams,
        });
        return oneStream(pool, t, body, chunks, out);
      }),
    )
  ).filter((f): f is string => f !== null);
  const seconds = (nowNs() - t0) / 1e9;
  const client = process.cpuUsage(before.client);
  return {
    transitMs: out.transit.slice(0, out.n).sort(),
    addedGapMs: out.gap.slice(0, out.g).sort(),
    chunks: out.n,
    reads: out.reads,
    failures,
    seconds,
    cpuMs: { relay: t.relay ? cpuMs(t.relay.pid) - before.relay : 0, stub: cpuMs(stub.pid) - before.stub, client: (client.user + client.system) / 1000 },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      streams: { type: 'string', default: '256' },
      chunks: { type: 'string', default: '1000' },
      rate: { type: 'string', default: '50' },
      rounds: { type: 'string', default: '1' },
      targets: { type: 'string', default: 'direct,bare,proxy' },
      lockstep: { type: 'boolean', default: false },
      tsx: { type: 'boolean', default: false },
    },
  });
  const streams = Number(values.streams);
  const chunks = Number(values.chunks);
  const intervalMs = 1000 / Number(values.rate);
  const rounds = Number(values.rounds);
  if (!(streams >= 1 && streams <= MAX_STREAMS)) throw new Error(`--streams must be 1…${MAX_STREAMS} (the relays' upstream pools hold ${MAX_STREAMS} connections)`);
  const wanted = new Set(values.targets.split(','));
  const dir = mkdtempSync(join(tmpdir(), 'gc-bench-stream-'));
  const entry = await childEntry(import.meta.url, values.tsx);
  const stub = await startChild(entry, ['stub']);
  const stubUrl = stub.line[0]!;
  const bare = wanted.has('bare') ? await startChild(entry, ['bare', stubUrl]) : null;
  const proxy = wanted.has('proxy') ? await startChild(entry, ['proxy', stubUrl, dir, String(streams)]) : null;
  const targets: Target[] = [];
  if (wanted.has('direct')) targets.push({ name: 'direct', relay: null, origin: stubUrl, headers: {} });
  if (bare) targets.push({ name: 'bare', relay: bare, origin: bare.line[0]!, headers: {} });
  if (proxy) targets.push({ name: 'proxy', relay: proxy, origin: proxy.line[0]!, headers: { authorization: `Bearer ${proxy.line[1]}` } });
  const pools = new Map(targets.map((t) => [t.name, new Pool(t.origin, { connections: streams, pipelining: 1, keepAliveTimeout: 60_000 })]));

  console.log(
    `proxy streaming — ${streams} streams × ${chunks} chunks at ${values.rate} chunks/s (${((chunks * intervalMs) / 1000).toFixed(0)} s a stream), ` +
      `${values.lockstep ? 'lockstep (one decode tick for all streams)' : 'phases spread over the interval'}, ${rounds} round(s), children ${values.tsx ? 'under tsx' : 'from an esbuild bundle'}`,
  );
  console.log(`at start: ${runContext()}`);
  // Warm-up: every relay's JIT and connections, on short fast streams, before anything is timed.
  for (const t of targets) {
    const w = await runStreams(pools.get(t.name)!, t, stub, streams, 50, 2, values.lockstep);
    if (w.failures.length) throw new Error(`warm-up through ${t.name} failed: ${w.failures[0]}`);
  }
  const results = new Map<string, StreamRun[]>();
  for (let r = 0; r < rounds; r++) {
    for (const t of targets) {
      await sleep(1_000);
      const run = await runStreams(pools.get(t.name)!, t, stub, streams, chunks, intervalMs, values.lockstep);
      (results.get(t.name) ?? results.set(t.name, []).get(t.name)!).push(run);
      for (const f of run.failures.slice(0, 3)) console.log(`  failure: ${f}`);
    }
  }

  const total = streams * chunks;
  console.log('\nper chunk (median over rounds); CPU from /proc over the streams\' lifetime ÷ chunks relayed');
  console.log('target   relay CPU µs   stub CPU µs   client CPU µs   transit p50 / p99 / max ms     added gap p50 / p99 / p99.9 ms   chunks/s   chunks/read   failed streams');
  const m = (name: string, f: (x: StreamRun) => number) => median(results.get(name)!.map(f));
  for (const t of targets) {
    const cell = (f: (x: StreamRun) => number, d: number, w: number) => m(t.name, f).toFixed(d).padStart(w);
    console.log(
      `${t.name.padEnd(8)} ${cell((x) => (x.cpuMs.relay * 1000) / total, 1, 12)}   ${cell((x) => (x.cpuMs.stub * 1000) / total, 1, 11)}   ${cell((x) => (x.cpuMs.client * 1000) / total, 1, 13)}   ` +
        `${cell((x) => pct(x.transitMs, 50), 3, 8)} / ${cell((x) => pct(x.transitMs, 99), 3, 6)} / ${cell((x) => x.transitMs[x.transitMs.length - 1] ?? NaN, 1, 6)}    ` +
        `${cell((x) => pct(x.addedGapMs, 50), 3, 10)} / ${cell((x) => pct(x.addedGapMs, 99), 3, 6)} / ${cell((x) => pct(x.addedGapMs, 99.9), 3, 6)}   ` +
        `${cell((x) => x.chunks / x.seconds, 0, 8)}   ${cell((x) => x.chunks / x.reads, 2, 11)}   ${cell((x) => x.failures.length, 0, 14)}`,
    );
  }
  console.log(
    'a relay whose transit p50 is far above direct\'s falls behind (chunks wait in its queue: a saturated machine); chunks/read above about 1.05 (several chunks of a stream in one read):\n' +
      'it fell behind by more than an interval, and its CPU per chunk then falls, as one read and one write carry several',
  );
  console.log(`\nat end: ${runContext()}`);
  const verdicts: Verdict[] = [];
  if (results.has('proxy') && results.has('bare')) {
    const runsP = results.get('proxy')!;
    const runsB = results.get('bare')!;
    verdicts.push(verdict('proxy CPU per chunk / bare (same run)', median(runsP.map((p, i) => p.cpuMs.relay / runsB[i]!.cpuMs.relay)), '≤', 1.2, '×'));
  }
  if (results.has('proxy')) {
    verdicts.push(verdict('added inter-chunk latency p99, through the proxy', m('proxy', (x) => pct(x.addedGapMs, 99)), '≤', 1, ' ms', 3));
    // The same figure on the paths without the proxy: what the machine and the client add by themselves.
    for (const floor of ['direct', 'bare'].filter((n) => results.has(n))) {
      const runsF = results.get(floor)!;
      const p99 = (x: StreamRun) => pct(x.addedGapMs, 99);
      verdicts.push({
        name: `  beside it: ${floor}'s own p99, and proxy − ${floor}`,
        figure: `${m(floor, p99).toFixed(3)} ms, ${median(results.get('proxy')!.map((p, i) => p99(p) - p99(runsF[i]!))).toFixed(3)} ms`,
        target: 'none, reported',
        pass: null,
      });
    }
    verdicts.push(verdict('failed streams through the proxy', m('proxy', (x) => x.failures.length), '≤', 0, '', 0));
  }
  if (verdicts.length) {
    console.log('targets:');
    printVerdicts(verdicts);
  }

  await Promise.all([...pools.values()].map((p) => p.close()));
  if (bare) await stopChild(bare);
  if (proxy) await stopChild(proxy);
  await stopChild(stub);
  const profiles = new Map<string, ProfileSummary>();
  for (const role of profiledRoles()) {
    const file = profileFile(process.env.PROXY_BENCH_PROF!, role);
    if (file) profiles.set(role, loadProfile(file, entry.bundle));
  }
  for (const [role, p] of profiles) console.log(`\n${role}: ${describeProfile(p)}`);
  if (profiles.has('proxy') && profiles.has('bare')) console.log(`\n${describeDifference(profiles.get('proxy')!, profiles.get('bare')!)}`);
  entry.dispose();
}

const role = process.argv[2];
if (role === 'stub') runSseStub();
else if (role === 'bare') runBareRelay(process.argv[3]!);
else if (role === 'proxy') void runProxyRelay({ upstreamUrl: process.argv[3]!, dir: process.argv[4]!, model: 'bench', slots: Number(process.argv[5]) });
else
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
