// Benchmark (prints figures; not a test) of the series store under a fleet's
// load: synthetic nvidia-smi CSV and vLLM /metrics text for 64 hosts × 8 GPUs
// go through the sources' parsers, the derivation and the SeriesStore on a
// real SQLite file, on a FakeClock that advances one second per round — so
// simulated hours run in minutes. The pipeline the app runs, through real SSH
// sessions, is measured by test/bench/telemetry-fleet.ts.
//
//   node --expose-gc --import tsx test/bench/telemetry-store.ts [--minutes 10] [--hosts 64] [--gpus 8]
//
// Figures: main-thread CPU per simulated second (% of one core; target < 15 %),
// memory after each simulated minute (flat once the series exist: the rings are
// preallocated), persisted bytes per host-day (from a 7-day backfill of one
// host), and chart-query times (7 days: target < 100 ms).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { FakeClock } from '../../src-main/core/base/index.js';
import { openStore } from '../../src-main/core/store/index.js';
import {
  NvidiaSmiSource,
  SeriesStore,
  ServiceDeriver,
  VllmHttpSource,
  costValues,
  gpuValues,
  serviceValues,
  type ExecRunner,
  type HttpGet,
  type HostValues,
} from '../../src-main/core/telemetry/index.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const MINUTES = arg('minutes', 10);
const HOSTS = arg('hosts', 64);
const GPUS = arg('gpus', 8);
const gc = (globalThis as { gc?: () => void }).gc;

const TTFT_LE = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560];
const E2E_LE = [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];
const ITL_LE = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];

function histogram(name: string, les: number[], n: number, labels: string): string {
  const lines = [`# HELP ${name} Histogram.`, `# TYPE ${name} histogram`];
  let cum = 0;
  les.forEach((le, i) => {
    cum += Math.floor(n / (i + 2));
    lines.push(`${name}_bucket{${labels},le="${le}"} ${Math.min(cum, n)}.0`);
  });
  lines.push(`${name}_bucket{${labels},le="+Inf"} ${n}.0`, `${name}_count{${labels}} ${n}.0`, `${name}_sum{${labels}} ${(n * 0.42).toFixed(3)}`, `${name}_created{${labels}} 1.7e9`);
  return lines.join('\n');
}

/** A vLLM 0.10-shaped exposition (~400 lines, all histogram families a real one has). */
function vllmText(host: number, t: number): string {
  const L = 'engine="0",model_name="qwen"';
  const n = 100 + t * 2 + host;
  const parts = [
    `# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{${L}} ${4 + (t % 3)}.0`,
    `# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{${L}} ${t % 5}.0`,
    `# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{${L}} ${(0.3 + 0.1 * Math.sin(t / 30)).toFixed(4)}`,
    `# TYPE vllm:gpu_cache_usage_perc gauge\nvllm:gpu_cache_usage_perc{${L}} ${(0.3 + 0.1 * Math.sin(t / 30)).toFixed(4)}`,
    `# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total{${L}} ${n * 900}.0\nvllm:prompt_tokens_created{${L}} 1.7e9`,
    `# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{${L}} ${n * 72}.0\nvllm:generation_tokens_created{${L}} 1.7e9`,
    `# TYPE vllm:prefix_cache_queries_total counter\nvllm:prefix_cache_queries_total{${L}} ${n * 900}.0`,
    `# TYPE vllm:prefix_cache_hits_total counter\nvllm:prefix_cache_hits_total{${L}} ${n * 300}.0`,
    `# TYPE vllm:request_success_total counter\n${['stop', 'length', 'abort'].map((r) => `vllm:request_success_total{${L},finished_reason="${r}"} ${r === 'stop' ? n : 0}.0`).join('\n')}`,
    `# TYPE vllm:cache_config_info gauge\nvllm:cache_config_info{block_size="16",cache_dtype="auto",enable_prefix_caching="True",engine="0",gpu_memory_utilization="0.9",num_cpu_blocks="None",num_gpu_blocks="8563"} 1.0`,
    `# TYPE vllm:engine_sleep_state gauge\n${['awake', 'weights_offloaded', 'discard_all'].map((s) => `vllm:engine_sleep_state{${L},sleep_state="${s}"} ${s === 'awake' ? 1 : 0}.0`).join('\n')}`,
    histogram('vllm:time_to_first_token_seconds', TTFT_LE, n, L),
    histogram('vllm:inter_token_latency_seconds', ITL_LE, n * 70, L),
    histogram('vllm:time_per_output_token_seconds', ITL_LE, n * 70, L),
    histogram('vllm:e2e_request_latency_seconds', E2E_LE, n, L),
    histogram('vllm:request_queue_time_seconds', E2E_LE, n, L),
    histogram('vllm:request_prefill_time_seconds', E2E_LE, n, L),
    histogram('vllm:request_decode_time_seconds', E2E_LE, n, L),
    histogram('vllm:request_inference_time_seconds', E2E_LE, n, L),
    histogram('vllm:request_prompt_tokens', [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000], n, L),
    histogram('vllm:request_generation_tokens', [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000], n, L),
    histogram('vllm:iteration_tokens_total', [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384], n * 10, L),
    ...Array.from({ length: 30 }, (_, i) => `# TYPE python_gc_objects_collected_total counter\npython_gc_objects_collected_total{generation="${i}"} ${i * 1000}.0`),
  ];
  return parts.join('\n') + '\n';
}

function nvidiaText(host: number, t: number): string {
  const rows: string[] = [];
  for (let g = 0; g < GPUS; g++) {
    const util = (t * 7 + g * 13 + host) % 101;
    rows.push(`${g}, GPU-${host}-${g}, NVIDIA H100 80GB HBM3, ${60000 + ((t + g) % 100)}, 81559, ${util}, ${(300 + util * 3.5).toFixed(2)}, 700.00, ${40 + (util >> 2)}, Disabled`);
  }
  return rows.join('\n') + '\n';
}

function fmt(n: number, digits = 1): string {
  return n.toFixed(digits);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gpu-console-bench-'));
  const clock = new FakeClock(1_700_000_100_000);
  const store = openStore({ file: join(dir, 'bench.db'), clock });
  const series = new SeriesStore({ db: store.db, clock });
  series.start();

  let genMs = 0;
  let tick = 0;
  const hosts = Array.from({ length: HOSTS }, (_, h) => {
    const label = `gpu-${String(h).padStart(2, '0')}`;
    const exec: ExecRunner = async (command) => {
      if (command.includes('--help-query-gpu')) return { exitCode: 1, stdout: '', stderr: 'not in the bench' };
      const t0 = performance.now();
      const stdout = nvidiaText(h, tick);
      genMs += performance.now() - t0;
      return { exitCode: 0, stdout, stderr: '' };
    };
    const get: HttpGet = async (path) => {
      if (path !== '/metrics') return { status: path === '/health' ? 200 : 404, text: '' };
      const t0 = performance.now();
      const text = vllmText(h, tick);
      genMs += performance.now() - t0;
      return { status: 200, text };
    };
    return {
      label,
      gpus: new NvidiaSmiSource({ id: `${label}/gpus`, exec, clock, appsEvery: 1_000_000 }),
      vllm: new VllmHttpSource({ id: `${label}/qwen`, get, clock }),
      deriver: new ServiceDeriver(),
    };
  });

  const round = async (): Promise<void> => {
    await Promise.all(
      hosts.map(async (h) => {
        const [g, s] = await Promise.all([h.gpus.scrape(), h.vllm.scrape()]);
        const values: HostValues = {};
        if (g.ok && g.gpus) gpuValues(g.gpus, values);
        let gen: number | null = null;
        if (s.ok && s.service) {
          const f = h.deriver.push(s.service, s.atMs);
          serviceValues('qwen', f, values);
          gen = f.genTokPerS;
        }
        costValues(2.641736 * GPUS, gen, values);
        series.record(h.label, clock.now(), values);
      }),
    );
    tick++;
    clock.advance(1000); // flushes every 10 s on the clock
  };

  console.log(`telemetry-store: ${HOSTS} hosts × ${GPUS} GPUs, 1 s polls, ${MINUTES} simulated min (node ${process.version})`);
  console.log(`series per host: ${GPUS * 5} GPU + 15 service + 2 cost`);
  // warm-up (JIT, first series creation), not measured
  for (let i = 0; i < 5; i++) await round();
  gc?.();
  const mem0 = process.memoryUsage();
  console.log(`after warm-up: heapUsed ${fmt(mem0.heapUsed / 1048576)} MiB, rss ${fmt(mem0.rss / 1048576)} MiB, rings ${fmt(series.memoryBytes() / 1048576)} MiB`);

  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  genMs = 0;
  const seconds = MINUTES * 60;
  const roundMs: number[] = [];
  for (let s = 1; s <= seconds; s++) {
    const r0 = performance.now();
    await round();
    const dt = performance.now() - r0;
    roundMs.push(dt);
    if (s % 60 === 0) {
      gc?.();
      const m = process.memoryUsage();
      console.log(
        `  min ${String(s / 60).padStart(2)}: heapUsed ${fmt(m.heapUsed / 1048576)} MiB (Δ ${fmt((m.heapUsed - mem0.heapUsed) / 1048576)}), rss ${fmt(m.rss / 1048576)} MiB, arrayBuffers ${fmt(m.arrayBuffers / 1048576)} MiB, rings ${fmt(series.memoryBytes() / 1048576)} MiB, rows written ${series.rowsWritten}`,
      );
    }
  }
  const cpu = process.cpuUsage(cpu0);
  const wallMs = performance.now() - wall0;
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const sorted = [...roundMs].sort((a, b) => a - b);
  const p = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  console.log(`\nCPU over ${seconds} simulated s (ran in ${fmt(wallMs / 1000)} s wall):`);
  console.log(`  process CPU ${fmt(cpuMs)} ms → ${fmt((cpuMs / (seconds * 1000)) * 100, 2)} % of one core at 1 poll/s (includes synthetic text generation ${fmt(genMs)} ms)`);
  console.log(`  net of generation: ${fmt(((cpuMs - genMs) / (seconds * 1000)) * 100, 2)} % of one core   [target < 15 %]`);
  console.log(`  one round (64 hosts: scrape-parse-derive-record): p50 ${fmt(p(0.5), 2)} ms, p95 ${fmt(p(0.95), 2)} ms, max ${fmt(sorted[sorted.length - 1]!, 2)} ms`);

  // Persisted size: backfill 7 days of one host at 10 s spacing (the 10 s tier's
  // resolution) through record(), then measure the file.
  series.flush();
  store.db.pragma('wal_checkpoint(TRUNCATE)');
  const pageSize = Number(store.db.pragma('page_size', { simple: true }));
  const used = (): number => (Number(store.db.pragma('page_count', { simple: true })) - Number(store.db.pragma('freelist_count', { simple: true }))) * pageSize;
  const before = used();
  const template: HostValues = {};
  {
    const lastValues: HostValues = {};
    gpuValues(Array.from({ length: GPUS }, (_, g) => ({ index: g, memoryUsedMiB: 60000 + g, memoryTotalMiB: 81559, utilizationPct: 50, powerW: 400, temperatureC: 60 })), lastValues);
    Object.assign(template, lastValues);
    for (const k of ['running', 'waiting', 'kv_pct', 'kv_tokens', 'kv_capacity_tokens', 'prompt_tok_s', 'gen_tok_s', 'finished_req_s', 'prefix_hit_pct', 'ttft_p50_s', 'ttft_p95_s', 'itl_p50_s', 'itl_p95_s', 'e2e_p50_s', 'e2e_p95_s']) template[`svc.qwen.${k}`] = 1.5;
    costValues(2.641736 * GPUS, 500, template);
  }
  const histClock = new FakeClock(clock.now() - 7 * 86_400_000);
  const hist = new SeriesStore({ db: store.db, clock: histClock });
  const b0 = performance.now();
  const start = histClock.now();
  for (let t = 0; t < 7 * 86_400_000; t += 10_000) {
    for (const k of Object.keys(template)) template[k] = (template[k] as number) * (0.999 + Math.random() * 0.002);
    hist.record('history-host', start + t, template);
    if (t % 3_600_000 === 0) hist.flush();
  }
  hist.dispose();
  store.db.pragma('wal_checkpoint(TRUNCATE)');
  const perHostDay = (used() - before) / 7;
  const tier = (table: string) =>
    store.db
      .prepare(`SELECT count(*) AS rows, coalesce(sum(length(data)), 0) AS bytes FROM ${table} WHERE host_id = (SELECT id FROM telemetry_hosts WHERE label = 'history-host')`)
      .get() as { rows: number; bytes: number };
  const t10 = tier('telemetry_samples_10s');
  const t5 = tier('telemetry_samples_5m');
  const overhead = (used() - before) / (t10.bytes + t5.bytes);
  const day10 = (t10.bytes / 7) * overhead;
  const day5 = (t5.bytes / 7) * overhead;
  console.log(`\nPersisted (one host, 7 days backfilled in ${fmt((performance.now() - b0) / 1000)} s, ${Object.keys(template).length} series):`);
  console.log(`  ${fmt(perHostDay / 1024)} KiB per host-day = 10 s tier ${fmt(day10 / 1024)} KiB (${t10.rows / 7} rows) + 5 min tier ${fmt(day5 / 1024)} KiB (${t5.rows / 7} rows); page overhead ×${fmt(overhead, 2)}`);
  const retained = HOSTS * (7 * day10 + 90 * day5);
  console.log(`  fleet of ${HOSTS}: ${fmt((perHostDay * HOSTS) / 1048576)} MiB per day; steady state at retention (7 d × 10 s + 90 d × 5 min) ≈ ${fmt(retained / 1073741824, 2)} GiB`);

  // Query times: a fresh store on the same file, so 7 d and 24 h come from disk.
  const q = new SeriesStore({ db: store.db, clock: new FakeClock(start + 7 * 86_400_000) });
  for (const range of ['15m', '1h', '24h', '7d'] as const) {
    const times: number[] = [];
    let points = 0;
    let tiers = '';
    for (let i = 0; i < 15; i++) {
      const t0 = performance.now();
      const r = q.query({ host: 'history-host', range, metrics: ['gpu.*', 'svc.*', 'host.*'] });
      times.push(performance.now() - t0);
      points = r.t.length * r.series.length;
      tiers = r.tiers.join('+');
    }
    times.sort((a, b) => a - b);
    console.log(`  query ${range.padStart(3)}: median ${fmt(times[7]!, 2)} ms, max ${fmt(times[14]!, 2)} ms, ${points} points from ${tiers || 'nothing'}${range === '7d' ? '   [target < 100 ms]' : ''}`);
  }
  // and a live host whose last hour is in memory
  {
    const times: number[] = [];
    for (let i = 0; i < 15; i++) {
      const t0 = performance.now();
      series.query({ host: 'gpu-00', range: '1h' });
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    console.log(`  query  1h on a live host (memory ring): median ${fmt(times[7]!, 2)} ms`);
  }
  q.dispose();
  series.dispose();
  store.close();
  rmSync(dir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
