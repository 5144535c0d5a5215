import { assert, type Clock } from '../base/index.js';
import type { UpstreamClient } from '../upstream/index.js';
import { ConfigSchema, type HostTelemetryConfig, type PrometheusSourceConfig, type ServiceConfig } from '../config/index.js';
import { PrometheusErrorCode, TelemetryErrorCode } from './errors.js';
import { FLEET_GPU_SERIES } from './fleet-exposition.js';
import { PrometheusClient, fillMatchers, type PromResult, type PromSample } from './prometheus-api.js';
import { DCGM, GPU_SERIES_NAMES, gpuReadingsFromSeries } from './prometheus-gpu-series.js';
import type { MetricFamily, MetricSample } from './prometheus.js';
import type { ServiceReading, SourceReading } from './readings.js';
import { serviceReadingFromFamilies } from './reading-from-metrics.js';
import { staleFromError, staleReason, type TelemetrySource } from './source.js';

// A host's GPUs or one model service, read from a Prometheus that already
// scrapes them (ARCHITECTURE §8) instead of through the console's tunnels.
//
// One instant query per scrape, of three parts joined with `or`:
//   - the series: a service's whole `vllm:*` / `llamacpp:*` exposition (no
//     `_created`) plus `up`; a host's DCGM_FI_DEV_* and gpu_console_gpu_* series;
//   - `timestamp(up)` (GPUs: of the memory series), tagged with the label
//     gpu_console_part="scraped_at": when Prometheus last scraped the target;
//   - GPUs only: `up == 0` of the host's targets, tagged "down", for the reason.
// (`or` matches label sets without the metric name, so `up` rides in the
// first selector and the timestamps carry a tag of their own.) The series are
// rebuilt into MetricFamily[] (histograms from `_bucket{le}`, `_sum`, `_count`)
// and handed to the same readers as a direct scrape, so the figures are the
// same; the API carries no TYPE, and the readers do not need it.
//
// A reading's `atMs` is when Prometheus scraped the target, on the console's
// clock (the skew to Prometheus's clock is measured once from the query's
// evaluation time and kept while it stays within a second). Two scrapes that
// see the same Prometheus sample so give the same `atMs`, and the counter
// rates derived from successive readings are exact whatever Prometheus's
// scrape interval — rather than 0 then a spike.
//
// The range query earns its place in `backfill()`: the same expression over
// the last window, stepped, gives the readings Prometheus already holds, so the
// derivation (rates, windowed percentiles) has a baseline at once instead of
// after one or two Prometheus scrape intervals. It is not run per scrape.
//
// Every failure is a stale reading with a coded reason: Prometheus down
// (TELEMETRY_SCRAPE_FAILED), slow (TELEMETRY_SCRAPE_TIMEOUT), an error answer
// (TELEMETRY_PROMETHEUS_QUERY_ERROR, TELEMETRY_HTTP_STATUS), garbage
// (TELEMETRY_UNPARSEABLE, TELEMETRY_NOT_METRICS), nothing matching
// (TELEMETRY_PROMETHEUS_NO_DATA), the target's scrape failing (`up` 0,
// TELEMETRY_PROMETHEUS_TARGET_DOWN), samples older than `staleAfterMs`
// (TELEMETRY_PROMETHEUS_STALE). Answers are capped (8 MiB) and time-boxed
// (`timeoutMs`, also sent to Prometheus as the query timeout).

export interface PrometheusApiSourceOptions {
  /** e.g. 'gpu-a/gpus' or 'gpu-a/qwen'. */
  id: string;
  clock: Clock;
  /** The client of `prometheus.url` (the fleet keeps one per URL). */
  client: UpstreamClient;
  /** Already merged: fleet-wide + host override (see mergePrometheusConfig). */
  prometheus: PrometheusSourceConfig;
  /** The host label (fills `{host}` in the matchers). */
  host: string;
  target: { kind: 'gpus' } | { kind: 'service'; service: ServiceConfig };
  /** Cap on one answer. Default 8 MiB. */
  maxBytes?: number;
}

const PART = 'gpu_console_part';
const PREFIX: Record<ServiceConfig['kind'], string | null> = { vllm: 'vllm:', 'llama-server': 'llamacpp:', sglang: 'sglang:', tei: 'te_', openai: null };

/** The series prefix of a kind; none for openai, whose series the console does not know (the fleet reads its health through the tunnel). */
function prefixOf(kind: ServiceConfig['kind']): string {
  const prefix = PREFIX[kind];
  assert(prefix !== null, `no Prometheus series are known for a ${kind} service`);
  return prefix;
}
/** Most steps one backfill asks for (Prometheus itself refuses more than 11 000 points per series). */
const MAX_BACKFILL_STEPS = 240;
const SKEW_TOLERANCE_MS = 1_000;

const tag = (part: 'scraped_at' | 'down', expr: string): string => `label_replace(${expr}, "${PART}", "${part}", "", "")`;

/** The series of one evaluation time. */
interface QueryEvaluation {
  tMs: number;
  samples: PromSample[];
}

/** `job/instance` (or the label set) of a target, for reasons and for matching its series. */
function targetName(labels: Record<string, string>): string {
  const job = labels['job'];
  const instance = labels['instance'];
  if (job !== undefined || instance !== undefined) return `${job ?? '?'}/${instance ?? '?'}`;
  return Object.entries(labels)
    .filter(([k]) => k !== '__name__' && k !== PART)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

const sameTarget = (a: Record<string, string>, b: Record<string, string>): boolean => a['job'] === b['job'] && a['instance'] === b['instance'];

/**
 * MetricFamily[] out of query-API series (each with `__name__`): `x_bucket{le}`,
 * `x_sum`, `x_count` of one histogram go to family `x`; a name ending `_total`
 * is a counter; the rest is untyped (the query API carries no TYPE).
 */
export function familiesFromSeries(samples: readonly PromSample[]): MetricFamily[] {
  const histograms = new Set<string>();
  for (const s of samples) {
    const name = s.labels['__name__'] ?? '';
    if (name.endsWith('_bucket') && s.labels['le'] !== undefined) histograms.add(name.slice(0, -'_bucket'.length));
  }
  const families = new Map<string, MetricFamily>();
  for (const s of samples) {
    const name = s.labels['__name__'];
    if (name === undefined) continue;
    const base = name.replace(/_(bucket|sum|count)$/, '');
    const histogram = base !== name && histograms.has(base) && (name.endsWith('_bucket') ? s.labels['le'] !== undefined : true);
    const familyName = histogram ? base : name;
    let f = families.get(familyName);
    if (!f) {
      f = { name: familyName, type: histogram ? 'histogram' : name.endsWith('_total') ? 'counter' : 'untyped', help: '', samples: [] };
      families.set(familyName, f);
    }
    const labels = { ...s.labels };
    delete labels['__name__'];
    const sample: MetricSample = { name, labels, value: s.value };
    f.samples.push(sample);
  }
  return [...families.values()];
}

/**
 * The Prometheus block a host reads from: the fleet-wide `telemetry.prometheus`
 * with the fields the host's `telemetry.prometheus` names put over it, defaults
 * filled by the config schema itself; null when neither gives a URL (or the
 * result does not pass the schema).
 */
export function mergePrometheusConfig(fleet: PrometheusSourceConfig | undefined, host: HostTelemetryConfig['prometheus']): PrometheusSourceConfig | null {
  const override = Object.fromEntries(Object.entries(host ?? {}).filter(([, v]) => v !== undefined));
  const input = { ...fleet, ...override };
  if (input.url === undefined) return null;
  const parsed = ConfigSchema.safeParse({ telemetry: { prometheus: input } });
  return parsed.success ? (parsed.data.telemetry.prometheus ?? null) : null;
}

export class PrometheusApiSource implements TelemetrySource {
  readonly kind = 'prometheus-api' as const;
  readonly id: string;
  /** What is read, for the UI's "where from" line: `prometheus http://… {host="gpu-a",service="qwen"}`. */
  readonly detail: string;
  private readonly client: PrometheusClient;
  private readonly matchers: string;
  private readonly expr: string;
  private skewMs: number | null = null;

  constructor(private readonly options: PrometheusApiSourceOptions) {
    this.id = options.id;
    const p = options.prometheus;
    this.client = new PrometheusClient({ client: options.client, timeoutMs: p.timeoutMs, maxBytes: options.maxBytes });
    const t = options.target;
    if (t.kind === 'service') {
      const m = fillMatchers(p.serviceMatch, { host: options.host, service: t.service.id, model: t.service.model, port: String(t.service.remotePort) });
      this.matchers = m;
      this.expr = `{__name__=~"up|${prefixOf(t.service.kind)}.+",__name__!~".+_created",${m}} or ${tag('scraped_at', `timestamp(up{${m}})`)}`;
    } else {
      const m = fillMatchers(p.hostMatch, { host: options.host });
      this.matchers = m;
      this.expr = [
        `{__name__=~"${GPU_SERIES_NAMES.join('|')}",${m}}`,
        tag('scraped_at', `timestamp(${DCGM.fbUsed}{${m}}) or timestamp(${FLEET_GPU_SERIES.memoryUsedBytes}{${m}})`),
        tag('down', `up{${m}} == 0`),
      ].join(' or ');
    }
    this.detail = `prometheus ${this.client.where} {${this.matchers}}`;
  }

  /** The PromQL this source runs (instant per scrape, stepped in backfill). */
  get query(): string {
    return this.expr;
  }

  async scrape(signal?: AbortSignal): Promise<SourceReading> {
    let result: PromResult;
    try {
      result = await this.client.instant(this.expr, signal);
    } catch (err) {
      const at = this.options.clock.now();
      return { ok: false, atMs: at, stale: staleFromError(err, at) };
    }
    const evalMs = result.series[0]?.points[0]?.tMs ?? null;
    if (evalMs !== null) this.measureSkew(evalMs);
    const samples = result.series.flatMap((s) => (s.points[0] ? [{ labels: s.labels, value: s.points[0].value }] : []));
    return this.read({ tMs: evalMs ?? this.toPrometheusTime(this.options.clock.now()), samples }, result.unreadable);
  }

  /**
   * The readings Prometheus already holds for the last `windowMs`, oldest
   * first, one per Prometheus scrape (steps that saw the same scrape give one
   * reading). Only good readings; [] when there are none or the query fails
   * (the next scrape says why). One range query, at most 240 steps.
   */
  async backfill(options: { windowMs: number; stepMs?: number; signal?: AbortSignal }): Promise<SourceReading[]> {
    const endMs = this.toPrometheusTime(this.options.clock.now());
    const stepMs = Math.max(1_000, options.stepMs ?? 5_000, Math.ceil(options.windowMs / MAX_BACKFILL_STEPS));
    let result: PromResult;
    try {
      result = await this.client.range(this.expr, { startMs: endMs - options.windowMs, endMs, stepMs }, options.signal);
    } catch {
      return [];
    }
    const steps = new Map<number, PromSample[]>();
    for (const s of result.series) {
      for (const p of s.points) {
        let list = steps.get(p.tMs);
        if (!list) steps.set(p.tMs, (list = []));
        list.push({ labels: s.labels, value: p.value });
      }
    }
    const readings: SourceReading[] = [];
    for (const tMs of [...steps.keys()].sort((a, b) => a - b)) {
      const r = this.read({ tMs, samples: steps.get(tMs)! }, 0);
      const last = readings[readings.length - 1];
      if (r.ok && (last === undefined || r.atMs > last.atMs)) readings.push(r);
    }
    return readings;
  }

  private read(ev: QueryEvaluation, unreadable: number): SourceReading {
    return this.options.target.kind === 'service' ? this.readService(ev, this.options.target.service, unreadable) : this.readGpus(ev, unreadable);
  }

  private readService(ev: QueryEvaluation, service: ServiceConfig, unreadable: number): SourceReading {
    const prefix = prefixOf(service.kind);
    const ups = ev.samples.filter((s) => s.labels['__name__'] === 'up' && s.labels[PART] === undefined);
    const scraped = ev.samples.filter((s) => s.labels[PART] === 'scraped_at');
    let data = ev.samples.filter((s) => s.labels['__name__']?.startsWith(prefix) === true);
    if (ups.length === 0 && data.length === 0) {
      return this.stale(PrometheusErrorCode.NO_DATA, `Prometheus at ${this.client.where} has no series matching {${this.matchers}}`);
    }
    let health: ServiceReading['health'] = 'unknown';
    let scrapedAtMs: number | null = null;
    let target: Record<string, string> = {};
    if (ups.length > 0) {
      // Several targets may match (two jobs scraping one server): read one, the same each time.
      const healthy = ups.filter((u) => u.value === 1).sort((a, b) => (targetName(a.labels) < targetName(b.labels) ? -1 : 1));
      const chosen = healthy[0];
      if (chosen === undefined) {
        return this.stale(
          PrometheusErrorCode.TARGET_DOWN,
          `Prometheus cannot scrape ${ups.map((u) => targetName(u.labels)).join(', ')} (up = 0); its figures are stale`,
        );
      }
      health = 'ok';
      target = chosen.labels;
      data = data.filter((s) => sameTarget(s.labels, chosen.labels));
      const at = scraped.find((s) => sameTarget(s.labels, chosen.labels));
      scrapedAtMs = at === undefined ? null : Math.round(at.value * 1000);
      if (data.length === 0) {
        return this.stale(PrometheusErrorCode.NO_DATA, `Prometheus scrapes ${targetName(chosen.labels)} (up = 1) but it has no ${prefix}* series`);
      }
    }
    const tooOld = this.tooOld(ev.tMs, scrapedAtMs, target);
    if (tooOld) return tooOld;
    const families = familiesFromSeries(data);
    const base = serviceReadingFromFamilies(service.kind, families);
    return { ok: true, atMs: this.toLocalTime(scrapedAtMs ?? ev.tMs), service: { ...base, health }, unreadable };
  }

  private readGpus(ev: QueryEvaluation, unreadable: number): SourceReading {
    const names = new Set(GPU_SERIES_NAMES);
    const data = ev.samples.filter((s) => s.labels[PART] === undefined && names.has(s.labels['__name__'] ?? ''));
    const down = ev.samples.filter((s) => s.labels[PART] === 'down');
    if (data.length === 0) {
      if (down.length > 0) {
        return this.stale(PrometheusErrorCode.TARGET_DOWN, `no GPU series: Prometheus cannot scrape ${down.map((d) => targetName(d.labels)).join(', ')} (up = 0)`);
      }
      return this.stale(PrometheusErrorCode.NO_DATA, `Prometheus at ${this.client.where} has no GPU series (DCGM_FI_DEV_*, gpu_console_gpu_*) matching {${this.matchers}}`);
    }
    const read = gpuReadingsFromSeries(data, this.options.prometheus.gpuLabel);
    if (read.gpus.length === 0) {
      return this.stale(TelemetryErrorCode.UNPARSEABLE, `GPU series matching {${this.matchers}} carry no GPU index in label "${this.options.prometheus.gpuLabel}"`);
    }
    const times = ev.samples.filter((s) => s.labels[PART] === 'scraped_at').map((s) => Math.round(s.value * 1000));
    const scrapedAtMs = times.length > 0 ? Math.max(...times) : null;
    const tooOld = this.tooOld(ev.tMs, scrapedAtMs, {});
    if (tooOld) return tooOld;
    return { ok: true, atMs: this.toLocalTime(scrapedAtMs ?? ev.tMs), gpus: read.gpus, unreadable: unreadable + read.unreadable };
  }

  private tooOld(evalMs: number, scrapedAtMs: number | null, target: Record<string, string>): SourceReading | null {
    if (scrapedAtMs === null) return null;
    const ageMs = evalMs - scrapedAtMs;
    if (ageMs <= this.options.prometheus.staleAfterMs) return null;
    const who = Object.keys(target).length > 0 ? ` ${targetName(target)}` : ' these series';
    return this.stale(
      PrometheusErrorCode.STALE,
      `Prometheus last scraped${who} ${Math.round(ageMs / 1000)} s ago (more than ${Math.round(this.options.prometheus.staleAfterMs / 1000)} s); the figures are that old`,
    );
  }

  private stale(code: string, message: string): SourceReading {
    const at = this.options.clock.now();
    return { ok: false, atMs: at, stale: staleReason(code, message, at) };
  }

  /** Our clock minus Prometheus's, from an answer's evaluation time (kept while it moves less than a second). */
  private measureSkew(evalMs: number): void {
    const estimate = this.options.clock.now() - evalMs;
    if (this.skewMs === null || Math.abs(estimate - this.skewMs) > SKEW_TOLERANCE_MS) this.skewMs = estimate;
  }

  private toLocalTime(prometheusMs: number): number {
    return prometheusMs + (this.skewMs ?? 0);
  }

  private toPrometheusTime(localMs: number): number {
    return localMs - (this.skewMs ?? 0);
  }
}
