// Fills a real console store with a fleet's history, through the app's own
// write paths: SeriesStore.record/flush/prune for telemetry (so the tiers,
// blobs and columns are exactly what the app writes), RequestLog.add for the
// proxy's request rows and AuditLog.append for the hash-chained audit log.
// Simulated time runs forward once and the three tables are written
// interleaved, as a running console would write them. Deterministic: every
// value comes from one seeded PRNG and the plan.
import { statSync } from 'node:fs';
import { toDisposable, silentLogger, type Clock } from '../../../src-main/core/base/index.js';
import { RequestLog, type RequestRecord } from '../../../src-main/core/proxy/request-log.js';
import type { Store } from '../../../src-main/core/store/index.js';
import { SeriesStore, costValues, gpuValues, serviceValues, type HostValues } from '../../../src-main/core/telemetry/index.js';
import { createPrng } from '../../../src-main/demo/text-gen.js';

export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;
const T10_MS = 10_000;
const T5M_MS = 300_000;
/** The series store's tiers (series-store.ts defaults): 10 s rows 7 days, 5 min rows 90 days. */
export const RETENTION_10S_MS = 7 * DAY_MS;
export const RETENTION_5M_MS = 90 * DAY_MS;
/** The request log's default retention (config proxy.requestLog): 30 days, 1,000,000 rows. */
export const REQUEST_RETENTION_MS = 30 * DAY_MS;
export const REQUEST_MAX_ROWS = 1_000_000;

export interface GrowthPlan {
  days: number;
  hosts: number;
  gpus: number;
  requests: number;
  audit: number;
  seed: number;
  /** End of the simulated history (ms epoch, a multiple of 5 min). */
  endMs: number;
}

export interface ModelDef {
  serviceId: string;
  model: string;
  slots: number;
}

export const MODELS: readonly ModelDef[] = [
  { serviceId: 'qwen', model: 'Qwen3.6-27B-FP8', slots: 32 },
  { serviceId: 'llama', model: 'Llama-3.3-70B-Instruct-FP8', slots: 16 },
  { serviceId: 'gemma', model: 'Gemma-3-27B-it', slots: 32 },
  { serviceId: 'coder', model: 'Qwen3-Coder-30B-A3B', slots: 24 },
];

export const CLIENTS: readonly { name: string; class: 'interactive' | 'system' | 'batch' }[] = [
  ...Array.from({ length: 12 }, (_, i) => ({ name: `notebook-${i}`, class: 'interactive' as const })),
  ...Array.from({ length: 6 }, (_, i) => ({ name: `svc-${['search', 'triage', 'summarise', 'agent', 'review', 'docs'][i]}`, class: 'system' as const })),
  ...Array.from({ length: 6 }, (_, i) => ({ name: `batch-${i}`, class: 'batch' as const })),
];

export const PRICE_PER_GPU_HOUR_USD = 2.641736;

export function hostLabel(i: number, hosts: number): string {
  return `gpu-${String(i).padStart(String(Math.max(1, hosts - 1)).length, '0')}`;
}

export function modelOf(hostIndex: number): ModelDef {
  return MODELS[hostIndex % MODELS.length]!;
}

/** Seeded and the same on every machine: the demo's mulberry32. */
export const prng = createPrng;

/** A clock the generator sets; its timers never fire (the generator flushes and prunes itself, on simulated time). */
export class SimClock implements Clock {
  constructor(public t: number) {}
  now(): number {
    return this.t;
  }
  setTimeout(): ReturnType<Clock['setTimeout']> {
    return toDisposable(() => {});
  }
  setInterval(): ReturnType<Clock['setInterval']> {
    return toDisposable(() => {});
  }
}

/** The series names a host of this fleet writes, in the order hostValuesFromView produces them. */
export function hostSeriesTemplate(gpus: number, serviceId: string): HostValues {
  const out: HostValues = {};
  gpuValues(Array.from({ length: gpus }, (_, g) => ({ index: g, memoryUsedMiB: 0, memoryTotalMiB: 0, utilizationPct: 0, powerW: 0, temperatureC: 0 })), out);
  serviceValues(serviceId, {
    atMs: 0, running: 0, waiting: 0, kvCachePct: 0, kvTokensInUse: 0, kvCapacityTokens: 0, promptTokPerS: 0, genTokPerS: 0, requestsPerS: 0,
    prefixHitPct: 0, prefixHitScope: 'window', specAcceptancePct: null, promptCacheReusePct: 0, rateBasis: 'counters', perEngine: null,
    ttftP50S: 0, ttftP95S: 0, ttftP95LeS: 0, itlP50S: 0, itlP95S: 0, e2eP50S: 0, e2eP95S: 0, latencySamples: 0,
  }, out);
  out['host.gen_tok_s'] = 0;
  out['host.busy_pct'] = 0;
  costValues(PRICE_PER_GPU_HOUR_USD * gpus, 1, out);
  return out;
}

interface SimHost {
  label: string;
  index: number;
  model: ModelDef;
  phase: number;
  weightsMiB: number;
  values: HostValues;
  gpuKeys: string[][];
  svc: string;
  /** Outages [fromMs, toMs): no samples at all (host unreachable). */
  outages: [number, number][];
  nextOutage: number;
  /** For the retention checks: samples per 10 s bucket start and distinct 5 min buckets. */
  rows10: number[];
  last5m: number;
  rows5m: number[];
}

export interface FillProgress {
  phase: string;
  simulatedMs: number;
  totalMs: number;
}

export interface FillResult {
  startMs: number;
  denseFromMs: number;
  endMs: number;
  seriesPerHost: number;
  samplesRecorded: number;
  telemetryRowsWritten: number;
  telemetryRowsPruned: number;
  droppedRows: number;
  requestRowsWritten: number;
  requestRowsOld: number;
  requestFromMs: number;
  auditAppended: number;
  /** Largest -wal file seen after any write, and when. */
  walMaxBytes: number;
  walMaxAt: string;
  wallMs: { telemetry: number; requests: number; audit: number; total: number };
  /** Expected rows per tier once pruned at endMs (per host), for the retention check. */
  expected: { host: string; rows10: number; rows5m: number; deleted10: number; deleted5m: number }[];
}

/**
 * Simulated history (the store's clock is `clock`, set to each event's time): from endMs − days − 1 day (the extra day lies past the 5 min tier's 90 days, so the
 * hourly prune has something to delete at full size), one sample per host every 5 min until the 10 s tier's
 * 7 days begin, then one every 10 s. Requests fill the last 29 days (inside the request log's 30-day
 * retention, with a day to spare for a console started later), plus 1 % older rows that its retention
 * must delete; audit events spread over the whole span.
 */
export async function fillStore(store: Store, clock: SimClock, plan: GrowthPlan, onProgress?: (p: FillProgress) => void): Promise<FillResult> {
  const t0 = performance.now();
  const rng = prng(plan.seed);
  const { endMs } = plan;
  const startMs = align(endMs - plan.days * DAY_MS - DAY_MS, T5M_MS);
  const denseFromMs = align(endMs - Math.min(plan.days, 7) * DAY_MS, T5M_MS);
  const walFile = `${store.file}-wal`;
  let walMaxBytes = 0;
  let walMaxAt = '';
  const sampleWal = (at: string) => {
    let size = 0;
    try {
      size = statSync(walFile).size;
    } catch {
      // in memory, or not created yet
    }
    if (size > walMaxBytes) {
      walMaxBytes = size;
      walMaxAt = at;
    }
  };

  const series = new SeriesStore({ db: store.db, clock });
  const hosts: SimHost[] = Array.from({ length: plan.hosts }, (_, i) => {
    const model = modelOf(i);
    const values = hostSeriesTemplate(plan.gpus, model.serviceId);
    const outages: [number, number][] = [];
    // ~3 % of host-days have a 10–60 min outage (a reboot, a lost link): gaps the health section must show
    for (let d = startMs; d < endMs; d += DAY_MS) {
      if (rng() < 0.03) {
        const from = align(d + rng() * DAY_MS, T10_MS);
        outages.push([from, from + align(600_000 + rng() * 3_000_000, T10_MS)]);
      }
    }
    return {
      label: hostLabel(i, plan.hosts),
      index: i,
      model,
      phase: rng() * 0.6,
      weightsMiB: 30_000 + Math.floor(rng() * 20_000),
      values,
      gpuKeys: Array.from({ length: plan.gpus }, (_, g) => ['vram_used_mib', 'vram_total_mib', 'util_pct', 'power_w', 'temp_c'].map((k) => `gpu.${g}.${k}`)),
      svc: `svc.${model.serviceId}.`,
      outages,
      nextOutage: 0,
      rows10: [],
      last5m: -1,
      rows5m: [],
    };
  });

  // Requests: ts_i = from + (i + u) · span / n, so rows are in arrival order (seq order = ts order, as the proxy writes them).
  const requestOld = Math.round(plan.requests / 100);
  const requestFromMs = endMs - 29 * DAY_MS;
  const oldFromMs = endMs - REQUEST_RETENTION_MS - DAY_MS;
  const oldToMs = endMs - REQUEST_RETENTION_MS - HOUR_MS;
  const log = new RequestLog({ db: store.db, clock: new SimClock(endMs), logger: silentLogger, batchSize: 512 });
  let reqIndex = 0;
  const reqCount = requestOld + plan.requests;
  const reqTs = (i: number): number =>
    i < requestOld
      ? oldFromMs + (i + 0.5) * ((oldToMs - oldFromMs) / Math.max(1, requestOld))
      : requestFromMs + (i - requestOld + 0.5) * ((endMs - requestFromMs) / Math.max(1, plan.requests));
  let auditIndex = 0;
  const auditTs = (i: number): number => Math.floor(startMs + (i + 0.5) * ((endMs - startMs) / Math.max(1, plan.audit)));

  let samples = 0;
  let pruned = 0;
  let tTelemetry = 0;
  let tRequests = 0;
  let tAudit = 0;
  let nextPrune = startMs + HOUR_MS;
  let nextFlush = startMs;
  let nextProgress = 0;
  for (let t = startMs; t < endMs; ) {
    const step = t < denseFromMs ? T5M_MS : T10_MS;
    const tEnd = t + step;
    let a = performance.now();
    while (reqIndex < reqCount && reqTs(reqIndex) < tEnd) {
      log.add(requestRecord(reqIndex, Math.floor(reqTs(reqIndex)), rng, plan.hosts));
      reqIndex++;
    }
    let b = performance.now();
    tRequests += b - a;
    while (auditIndex < plan.audit && auditTs(auditIndex) < tEnd) {
      clock.t = auditTs(auditIndex);
      store.audit.append(auditEvent(auditIndex, rng, hosts));
      auditIndex++;
    }
    a = performance.now();
    tAudit += a - b;
    for (const h of hosts) {
      while (h.nextOutage < h.outages.length && h.outages[h.nextOutage]![1] <= t) h.nextOutage++;
      const o = h.outages[h.nextOutage];
      if (o && t >= o[0] && t < o[1]) continue;
      fillValues(h, t, rng, plan.gpus);
      series.record(h.label, t + 1000, h.values);
      samples++;
      h.rows10.push(t / 1000);
      const b5 = Math.floor(t / T5M_MS);
      if (b5 !== h.last5m) {
        h.last5m = b5;
        h.rows5m.push(b5 * 300);
      }
    }
    t = tEnd;
    clock.t = t;
    // The app flushes every 10 s and prunes every hour; the generator batches 10 simulated minutes per flush.
    if (t >= nextFlush) {
      series.flush();
      sampleWal('telemetry flush');
      nextFlush = t + (t < denseFromMs ? HOUR_MS : 600_000);
    }
    if (t >= nextPrune) {
      pruned += series.prune(t);
      sampleWal('hourly prune');
      nextPrune += HOUR_MS;
    }
    b = performance.now();
    tTelemetry += b - a;
    if (onProgress && b >= nextProgress) {
      onProgress({ phase: t < denseFromMs ? '5 min samples' : '10 s samples', simulatedMs: t - startMs, totalMs: endMs - startMs });
      nextProgress = b + 5_000;
    }
  }
  log.dispose();
  sampleWal('request log flush');
  // Closes the open buckets and writes them, as a console stopping would.
  series.dispose();
  const droppedRows = series.droppedRows;
  const rowsWritten = series.rowsWritten;
  sampleWal('final flush');

  const cut10 = Math.floor((endMs - RETENTION_10S_MS) / 1000);
  const cut5m = Math.floor((endMs - RETENTION_5M_MS) / 1000);
  const expected = hosts.map((h) => {
    const kept10 = h.rows10.filter((s) => s >= cut10).length;
    const kept5m = h.rows5m.filter((s) => s >= cut5m).length;
    return { host: h.label, rows10: kept10, rows5m: kept5m, deleted10: h.rows10.length - kept10, deleted5m: h.rows5m.length - kept5m };
  });
  return {
    startMs,
    denseFromMs,
    endMs,
    seriesPerHost: Object.keys(hosts[0]?.values ?? {}).length,
    samplesRecorded: samples,
    telemetryRowsWritten: rowsWritten,
    telemetryRowsPruned: pruned,
    droppedRows,
    requestRowsWritten: log.writtenCount,
    requestRowsOld: requestOld,
    requestFromMs,
    auditAppended: auditIndex,
    walMaxBytes,
    walMaxAt,
    wallMs: { telemetry: tTelemetry, requests: tRequests, audit: tAudit, total: performance.now() - t0 },
    expected,
  };
}

function align(ms: number, step: number): number {
  return Math.floor(ms / step) * step;
}

function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v;
}

const TAU = 2 * Math.PI;

/** A diurnal load with per-host phase and noise; GPUs, service and cost figures follow it. */
function fillValues(h: SimHost, t: number, rng: () => number, gpus: number): void {
  const v = h.values;
  const day = (t % DAY_MS) / DAY_MS;
  const load = clamp(0.5 + 0.4 * Math.sin(TAU * (day - 0.3) + h.phase) + 0.15 * (rng() - 0.5), 0.02, 1);
  for (let g = 0; g < gpus; g++) {
    const k = h.gpuKeys[g]!;
    const u = clamp(load * 100 * (0.9 + 0.2 * rng()), 0, 100);
    v[k[0]!] = Math.round(h.weightsMiB + load * 28_000 + rng() * 200);
    v[k[1]!] = 81_559;
    v[k[2]!] = Math.round(u);
    v[k[3]!] = Math.round((90 + 6 * u + rng() * 20) * 100) / 100;
    v[k[4]!] = Math.round(32 + 0.4 * u + rng() * 3);
  }
  const slots = h.model.slots;
  const running = Math.round(slots * load);
  const gen = load * 1_600 * (0.9 + 0.2 * rng());
  const p = h.svc;
  v[p + 'running'] = running;
  v[p + 'waiting'] = load > 0.85 ? Math.round((load - 0.85) * 60) : 0;
  v[p + 'kv_pct'] = load * 92;
  v[p + 'kv_tokens'] = Math.round(load * 0.92 * 450_000);
  v[p + 'kv_capacity_tokens'] = 450_000;
  v[p + 'prompt_tok_s'] = gen * 6;
  v[p + 'gen_tok_s'] = gen;
  v[p + 'finished_req_s'] = gen / 180;
  v[p + 'prefix_hit_pct'] = 35 + 25 * rng();
  v[p + 'prompt_cache_pct'] = 30 + 20 * rng();
  v[p + 'spec_accept_pct'] = null; // no speculative decoding: a column that is always unknown (NaN on disk)
  v[p + 'ttft_p50_s'] = 0.12 + 0.5 * load * load;
  v[p + 'ttft_p95_s'] = 0.4 + 1.8 * load * load;
  v[p + 'itl_p50_s'] = 0.018 + 0.02 * load;
  v[p + 'itl_p95_s'] = 0.03 + 0.05 * load;
  v[p + 'e2e_p50_s'] = 3 + 6 * load;
  v[p + 'e2e_p95_s'] = 9 + 20 * load;
  v['host.gen_tok_s'] = gen;
  v['host.busy_pct'] = running > 0 ? 100 : 0;
  costValues(PRICE_PER_GPU_HOUR_USD * gpus, gen, v);
}

const HEX = '0123456789abcdef';

function requestRecord(i: number, ts: number, rng: () => number, hostCount: number): RequestRecord {
  const client = CLIENTS[Math.floor(rng() * CLIENTS.length)]!;
  const hostIndex = Math.floor(rng() * hostCount);
  const model = modelOf(hostIndex);
  const r = rng();
  // 96 % answered, then the proxy's usual refusals and upstream failures
  const [status, errorCode] =
    r < 0.96 ? [200, null] : r < 0.98 ? [429, 'queue_full'] : r < 0.99 ? [502, 'upstream_unreachable'] : r < 0.995 ? [503, 'draining'] : [504, 'upstream_timeout'];
  const ok = status === 200;
  const stream = rng() < 0.7;
  const tokensIn = ok ? 200 + Math.floor(rng() * 6_000) : null;
  const tokensOut = ok ? 20 + Math.floor(rng() * 900) : null;
  const queueMs = Math.round(rng() * rng() * 2_000 * 10) / 10;
  const ttftMs = ok && stream ? Math.round((80 + rng() * 900) * 10) / 10 : null;
  const totalMs = ok ? Math.round((queueMs + 300 + (tokensOut ?? 0) * 25 * (0.8 + 0.4 * rng())) * 10) / 10 : Math.round(queueMs * 10) / 10;
  let id = '';
  for (let k = 0; k < 24; k++) id += HEX[Math.floor(rng() * 16)];
  return {
    id: `${id}${i.toString(16).padStart(8, '0')}`,
    ts,
    client: client.name,
    class: client.class,
    endpoint: rng() < 0.9 ? '/v1/chat/completions' : '/v1/completions',
    model: model.model,
    upstream: status === 503 || status === 429 ? null : `${hostLabel(hostIndex, hostCount)}/${model.serviceId}`,
    stream,
    status,
    errorCode,
    queueMs,
    ttftMs,
    totalMs,
    tokensIn,
    tokensOut,
    bytesIn: 400 + (tokensIn ?? 100) * 4,
    bytesOut: ok ? (tokensOut ?? 0) * (stream ? 40 : 5) : 120,
    replayed: false,
  };
}

const ALERT_KINDS = ['kv_cache_high', 'queue_high', 'gpu_temp_high', 'service_down', 'vram_high'] as const;

/** The audit mix a fleet produces: connection edges, alerts, lifecycle steps, tokens, config and console events. */
function auditEvent(i: number, rng: () => number, hosts: SimHost[]): Parameters<Store['audit']['append']>[0] {
  const h = hosts[Math.floor(rng() * hosts.length)]!;
  const target = `${h.label}/${h.model.serviceId}`;
  const r = rng();
  if (r < 0.3) {
    const lost = i % 2 === 0;
    return lost
      ? { type: 'host.connection.lost', actor: 'system', target: h.label, payload: { state: 'reconnecting', message: 'keepalive timeout' } }
      : { type: 'host.connection.up', actor: 'system', target: h.label, payload: { state: 'connected', after: 'reconnecting' } };
  }
  if (r < 0.65) {
    const kind = ALERT_KINDS[Math.floor(rng() * ALERT_KINDS.length)]!;
    const event = rng() < 0.5 ? 'raised' : rng() < 0.3 ? 'changed' : 'cleared';
    return {
      type: `alert.${event}`,
      actor: 'system',
      target,
      payload: { kind, severity: rng() < 0.2 ? 'critical' : 'warning', message: `${kind.replace(/_/g, ' ')} on ${target}`, value: Math.round(rng() * 1000) / 10, threshold: 90 },
    };
  }
  if (r < 0.85) {
    const steps = ['lifecycle.proposed', 'lifecycle.approved', 'lifecycle.running', 'lifecycle.step', 'lifecycle.verified'] as const;
    return {
      type: steps[i % steps.length]!,
      actor: i % 5 === 1 ? 'operator:alice' : i % 5 === 0 ? 'policy:idle-sleep' : 'system',
      target,
      payload: { actionId: `a${(i >> 2).toString(36)}`, kind: ['sleep', 'wake', 'restart'][i % 3], step: i % 5, note: 'synthetic' },
    };
  }
  if (r < 0.93) {
    return { type: 'proxy.token.created', actor: 'operator:bob', target: CLIENTS[i % CLIENTS.length]!.name, payload: { prefix: `gpc_${(i % 4096).toString(16)}`, maxClass: 'batch' } };
  }
  if (r < 0.97) return { type: 'config.reloaded', actor: 'system', target: null, payload: { hosts: hosts.length, changed: ['proxy.upstreams'] } };
  return { type: i % 2 ? 'console.started' : 'console.stopped', actor: 'system', target: null, payload: { version: '0.0.0-bench', mode: 'web' } };
}
