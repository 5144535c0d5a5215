// Telemetry over time: every fleet tick is recorded in the series store
// (1 s in memory, 10 s / 5 min on disk), fed to the alert engine, and pushed
// to the UI as one `telemetry.tick`. Alerts are audited and notified.
// Each tick carries the fleet's derived figures (latency percentiles, prefix
// hits, KV tokens), the proxy's queue figures per class, and live cost per 1M
// output tokens from generation rates. Cost summaries integrate the series
// (all traffic, proxy or not); per model and per client they come from the
// proxy's request rows. Baselines (manual or from a benchmark) are audited.
import {
  BaselineSchema,
  hostSeries,
  type BaselineLevel,
  serviceSeries,
  type CostSummary,
  type CostSummaryQuery,
  type HostCost,
  type ProxyFigure,
  type ProxyStats,
  type SeriesQuery,
  type SeriesResult,
  type TelemetryTick,
} from '../../../src-preload/contract/index.js';
import { AlertEngine, alertTickFromValues, hostAlertSettingsOf, withReadings, type AlertThresholds, type HostAlertTick, type HostHealthAlertInput, type LogFailureInput } from '../alerts/index.js';
import { DisposableStore, type Clock, type Disposable, type Logger } from '../base/index.js';
import type { EventSink } from '../channel.js';
import type { ConfigService } from '../config/index.js';
import { RollingCost, costShares, hostCost, spanFromRequestRow, windowUsage, type RequestSpan, type RequestSpanRow, type WindowCostSources } from '../cost/index.js';
import type { Notices } from '../notify/index.js';
import type { Store } from '../store/index.js';
import { causeOf, hostValuesOf, type FleetReadings, type HostReadings, type HostValues } from './host-values.js';
import { SeriesStore } from './series-store.js';

const BASELINES_SETTING = 'alerts.baselines';
const WINDOW_MS: Record<CostSummaryQuery['window'], number> = { '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 };

/** A round's state as telemetry and the health alerts read it (the fleet's FleetState satisfies it). */
export interface TelemetryReadings extends FleetReadings {
  readonly hosts: readonly (HostReadings & HostHealthAlertInput)[];
}

/** What telemetry reads from the fleet (FleetService satisfies it): its state at the end of each poll round. */
export interface TelemetryFleet {
  onDidRound(listener: (state: TelemetryReadings) => void): Disposable;
}

/** Failure lines found in services' logs (the logs capability's LogWatch satisfies it). */
export interface LogFailureSource {
  onDidFindFailure(listener: (found: LogFailureInput) => void): Disposable;
}

/** Where the proxy's per-class figures come from (ProxyService satisfies it). */
export interface ProxyStatsSource {
  snapshot(): ProxyStats;
}

export interface TelemetryServiceDeps {
  store: Store;
  config: ConfigService;
  fleet: TelemetryFleet;
  proxy: ProxyStatsSource | null;
  /**
   * The proxy's answered requests of a window, for the cost split (the proxy's requestWindows():
   * the requests table is the proxy's, and telemetry may not import the proxy, which imports it).
   */
  requests: { answered(fromMs: number, toMs: number): readonly RequestSpanRow[] };
  notices: Notices;
  emit: EventSink;
  clock: Clock;
  logger: Logger;
  /** Failure lines from services' logs (log_failure alerts); none: no log alerts. */
  logFailures?: LogFailureSource | null;
  /** When the console started. Not read any more: cost windows count only the time the readings cover. */
  startedAt?: number;
  alertThresholds?: Partial<AlertThresholds>;
  /** Monthly budgets and spend this month (BudgetService satisfies it); without one the gate reads the query's budget only. */
  budget?: { monthlyUsdFor(host: string): number | null; spentThisMonthUsd(host: string): number | null };
}

/**
 * `svc.<serviceId>.proxy_<class>_{wait,ttft}_p{50,95}_s` for each upstream of the host, and
 * `svc.<serviceId>.proxy_{ttft,e2e}_p{50,95}_s` over all classes (the latency a server without
 * histograms shows, chooseLatency in the contract).
 */
export function proxyValues(host: string, stats: ProxyStats, out: HostValues = {}): HostValues {
  const s = (ms: number | null): number | null => (ms === null ? null : ms / 1000);
  for (const u of stats.upstreams) {
    if (u.label !== host) continue;
    const name = (f: ProxyFigure) => serviceSeries(u.serviceId, f);
    out[name('proxy_queued')] = u.queued;
    for (const c of u.classes) {
      out[name(`proxy_${c.class}_wait_p50_s`)] = s(c.waitP50Ms);
      out[name(`proxy_${c.class}_wait_p95_s`)] = s(c.waitP95Ms);
      out[name(`proxy_${c.class}_ttft_p50_s`)] = s(c.ttftP50Ms);
      out[name(`proxy_${c.class}_ttft_p95_s`)] = s(c.ttftP95Ms);
    }
    const l = u.latency;
    out[name('proxy_ttft_p50_s')] = s(l?.ttftP50Ms ?? null);
    out[name('proxy_ttft_p95_s')] = s(l?.ttftP95Ms ?? null);
    out[name('proxy_e2e_p50_s')] = s(l?.e2eP50Ms ?? null);
    out[name('proxy_e2e_p95_s')] = s(l?.e2eP95Ms ?? null);
  }
  return out;
}

/**
 * A host's telemetry is stale when its SSH session is not up or a scrape failed this tick.
 * For the alerts (`forAlerts`), a service whose health is down is not the host's staleness:
 * service_down says it, so a server that stops pages once, not also as a stale host.
 */
function staleReasonOf(host: HostReadings, forAlerts = false): string | null {
  const { state, lastError } = host.session;
  if (state !== 'connected') return `SSH ${state}${lastError ? `: ${lastError.code}` : ''}`;
  if (host.gpus.stale !== null) return causeOf(host.gpus.stale);
  const stale = host.services.find((s) => s.stale !== null && !(forAlerts && s.health === 'down'));
  return stale?.stale ? `${stale.id}: ${causeOf(stale.stale)}` : null;
}

/**
 * One host's alert input for a round: its values, its SSH session, each service's health and
 * sleep, the proxy's figures for its upstreams, its GPUs' critical temperatures. The scenario
 * replayer (test/replay) feeds its traces through this same mapping.
 */
export function alertTickOf(host: TelemetryReadings['hosts'][number], values: HostValues, proxy: ProxyStats | null, modelOf: (serviceId: string) => string | null): HostAlertTick {
  return withReadings(alertTickFromValues(host.label, staleReasonOf(host, true), values, modelOf), host, proxy?.upstreams ?? []);
}

/**
 * The baselines as stored, each keeping the time it was set. A row that cannot
 * be read is logged and handed back, so the next write keeps it as it was.
 */
function restoreBaselines(alerts: AlertEngine, store: Store, logger: Logger): unknown[] {
  const rows = store.settings.get<unknown>(BASELINES_SETTING) ?? [];
  const unreadable: unknown[] = [];
  for (const row of Array.isArray(rows) ? rows : []) {
    const b = BaselineSchema.safeParse(row);
    if (b.success) {
      alerts.restoreBaseline(b.data);
      // Kept and listed, never compared: an aggregate at an unknown load says nothing about one sequence's speed.
      if (b.data.levels === undefined) logger.warn('a stored baseline has no per-sequence levels: kept, not compared until it is set again', { model: b.data.model });
    } else {
      unreadable.push(row);
      logger.warn('kept an unreadable stored baseline aside', { setting: BASELINES_SETTING, issue: b.error.issues[0]?.message ?? 'invalid' });
    }
  }
  return unreadable;
}

export class TelemetryService implements Disposable {
  readonly series: SeriesStore;
  readonly alerts: AlertEngine;
  private readonly disposables = new DisposableStore();
  private readonly rolling = new Map<string, RollingCost>();
  readonly costSummary: (query: CostSummaryQuery) => CostSummary;
  /** Every cost figure of `host` over [fromMs, toMs) cut at now: what `cost.summary` answers for that window (reports read it). */
  /** `series`: where the window's readings are read (a report hands the rows it already holds); default the store. */
  readonly hostCostOver: (host: string, fromMs: number, toMs: number, series?: (q: SeriesQuery) => SeriesResult) => HostCost;
  private readonly unreadableBaselines: unknown[];

  constructor(private readonly deps: TelemetryServiceDeps) {
    const { store, clock, config } = deps;
    const series = (this.series = new SeriesStore({ db: store.db, clock, logger: deps.logger.child('series'), health: store.health }));
    series.start();
    this.disposables.add(series);
    const settingsOf = (label: string) => hostAlertSettingsOf(config.current.hosts.find((h) => h.label === label)?.alerts, config.current.alerts);
    const alerts = (this.alerts = new AlertEngine(clock, deps.alertThresholds, settingsOf, () => config.current));
    this.disposables.add(alerts);
    this.unreadableBaselines = restoreBaselines(alerts, store, deps.logger);
    // Alert events are annotated, audited, pushed and paged by the alert book (alerts/alert-ops.ts), built after this service.
    this.disposables.add(deps.fleet.onDidRound((state) => this.onRound(state)));
    if (deps.logFailures) this.disposables.add(deps.logFailures.onDidFindFailure((found) => alerts.observeLogFailure(found)));

    const spansBetween = (fromMs: number, toMs: number): RequestSpan[] =>
      deps.requests.answered(fromMs, toMs).map(spanFromRequestRow).filter((s): s is RequestSpan => s !== null);
    const costSources: WindowCostSources = { series: (q) => series.query(q), requestSpans: spansBetween, now: () => clock.now(), pollIntervalMs: () => config.current.telemetry?.pollIntervalMs ?? 1000 };
    const priceOf = (label: string) => config.current.hosts.find((h) => h.label === label)?.pricePerHourUsd ?? null;
    // One function for the host view and evidence reports: the same window gives the same figures.
    const costOver = (host: string, fromMs: number, toMs: number, budget: { monthlyUsd: number | null; spentUsd: number | null }, src = costSources): HostCost =>
      hostCost({ host, pricePerHourUsd: priceOf(host), usage: windowUsage(src, host, fromMs, toMs), monthlyBudgetUsd: budget.monthlyUsd, spentThisMonthUsd: budget.spentUsd });
    this.hostCostOver = (host, fromMs, toMs, read) => costOver(host, fromMs, toMs, { monthlyUsd: null, spentUsd: null }, read ? { ...costSources, series: read } : costSources);

    function costSummary(query: CostSummaryQuery): CostSummary {
      const now = clock.now();
      const toMs = Math.min(query.endMs ?? now, now);
      const fromMs = toMs - WINDOW_MS[query.window];
      const window = { fromMs, toMs };
      const spans = spansBetween(fromMs, toMs);
      const hosts = config.current.hosts.filter((h) => !query.host || h.label === query.host);
      return {
        at: now,
        window: query.window,
        hosts: hosts.map((h) =>
          costOver(h.label, fromMs, toMs, {
            monthlyUsd: query.monthlyBudgetUsd ?? deps.budget?.monthlyUsdFor(h.label) ?? null,
            spentUsd: deps.budget?.spentThisMonthUsd(h.label) ?? null,
          }),
        ),
        byModel: costShares(spans, (s) => s.model ?? 'unknown', priceOf, window),
        byClient: costShares(spans, (s) => s.client, priceOf, window),
      };
    }

    this.costSummary = costSummary;
  }

  private rollingFor(label: string): RollingCost {
    let r = this.rolling.get(label);
    if (r === undefined) this.rolling.set(label, (r = new RollingCost()));
    return r;
  }

  private onRound(snapshot: TelemetryReadings): void {
    const { config } = this.deps;
    const modelOf = (label: string) => (serviceId: string) =>
      config.current.hosts.find((h) => h.label === label)?.services.find((s) => s.id === serviceId)?.model ?? null;
    const tick: TelemetryTick = { at: snapshot.at, hosts: [] };
    const alertTicks: HostAlertTick[] = [];
    let proxy: ProxyStats | null = null;
    try {
      proxy = this.deps.proxy?.snapshot() ?? null;
    } catch (err) {
      this.deps.logger.warn('proxy stats unavailable for telemetry', { error: err instanceof Error ? err.message : String(err) });
    }
    for (const host of snapshot.hosts) {
      const values = hostValuesOf(host);
      const live = host.services.filter((s) => s.stale === null);
      const cost = this.rollingFor(host.label).push(
        snapshot.at,
        host.config.pricePerHourUsd ?? null,
        live.map((s) => ({ id: s.id, genTokPerS: values[serviceSeries(s.id, 'gen_tok_s')] ?? null, running: values[serviceSeries(s.id, 'running')] ?? null })),
      );
      values[hostSeries('cost_usage_usd_per_mtok')] = cost.usageBasedUsdPerMTok;
      values[hostSeries('cost_reserved_usd_per_mtok')] = cost.reservationBasedUsdPerMTok;
      for (const s of host.services) values[serviceSeries(s.id, 'cost_usd_per_mtok')] = cost.perService.get(s.id) ?? null;
      if (proxy !== null) proxyValues(host.label, proxy, values);
      const staleReason = staleReasonOf(host);
      this.recordSeries(host.label, snapshot.at, values);
      tick.hosts.push({ host: host.label, staleReason, values });
      alertTicks.push(alertTickOf(host, values, proxy, modelOf(host.label)));
    }
    this.alerts.observe(alertTicks);
    this.alerts.observeHealth(snapshot.hosts);
    this.deps.emit('telemetry.tick', tick);
  }

  /** History is kept best-effort: a host first seen while the data folder is full has no row id yet, and its tick still goes out. */
  private recordSeries(host: string, at: number, values: HostValues): void {
    try {
      this.series.record(host, at, values);
    } catch (err) {
      this.deps.logger.warn('telemetry history not recorded for this round', { host, error: err instanceof Error ? err.message : String(err) });
    }
  }

  /**
   * A model's baseline: a benchmark's per-sequence `levels`, or one level of a manual figure
   * (`tokPerS` aggregate with `concurrency` requests running, default 1).
   */
  setBaseline(model: string, tokPerS: number, source: 'manual' | 'benchmark', actor: string, opts: { levels?: readonly BaselineLevel[]; concurrency?: number } = {}): ReturnType<AlertEngine['setBaseline']> {
    const given = opts.levels !== undefined && opts.levels.length > 0 ? [...opts.levels] : [{ concurrency: opts.concurrency ?? 1, perSeqTokPerS: tokPerS / (opts.concurrency ?? 1) }];
    // A share that rounds to 0 (or is not a number) would be a level nothing can be compared with: left out.
    const levels = given.filter((l) => Number.isFinite(l.perSeqTokPerS) && l.perSeqTokPerS > 0);
    // Audited first: a change the log cannot record is not made.
    this.deps.store.audit.append({ type: 'alerts.baseline.set', actor, target: model, payload: { tokPerS, source, levels } });
    const baseline = this.alerts.setBaseline(model, tokPerS, source, levels);
    this.deps.store.settings.set(BASELINES_SETTING, [...this.alerts.listBaselines(), ...this.unreadableBaselines]);
    return baseline;
  }

  dispose(): Promise<void> {
    return this.disposables.dispose();
  }
}
