// Telemetry over time: every fleet tick is recorded in the series store
// (1 s in memory, 10 s / 5 min on disk), fed to the alert engine, and pushed
// to the UI as one `telemetry.tick`. Alerts are audited and notified.
// Cost figures are computed on demand from config prices and proxy rows.
import type { CostSummary, CostSummaryQuery, HostView, TelemetryTick } from '../../../src-preload/contract/index.js';
import { AlertEngine, alertTickFromValues } from '../alerts/index.js';
import type { AppContext } from '../app-context.js';
import { costShares, hostCost, shareGpuTime, spanFromRequestRow, type RequestSpan } from '../cost/index.js';
import { SeriesStore, hostValuesFromView } from '../telemetry/index.js';

const BASELINES_SETTING = 'alerts.baselines';
const WINDOW_MS: Record<CostSummaryQuery['window'], number> = { '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 };

export interface TelemetryWiring {
  readonly series: SeriesStore;
  readonly alerts: AlertEngine;
  costSummary(query: CostSummaryQuery): CostSummary;
  setBaseline(model: string, tokPerS: number, source: 'manual' | 'benchmark', actor: string): ReturnType<AlertEngine['setBaseline']>;
}

/** A host's telemetry is stale when its SSH session is not up or a scrape failed this tick. */
function staleReasonOf(host: HostView): string | null {
  if (host.state !== 'connected') return `SSH ${host.state}${host.lastError ? `: ${host.lastError.code}` : ''}`;
  if (host.gpuStale) return host.gpuStaleReason ?? 'GPU scrape failed';
  const stale = host.services.find((s) => s.stale);
  return stale ? `${stale.id}: ${stale.staleReason ?? 'scrape failed'}` : null;
}

export async function wireTelemetry(ctx: AppContext): Promise<TelemetryWiring> {
  const { store, clock, fleet, config } = ctx;
  const series = new SeriesStore({ db: store.db, clock, logger: ctx.logger.child('series') });
  series.start();
  ctx.disposables.add(series);

  const alerts = new AlertEngine(clock);
  ctx.disposables.add(alerts);
  for (const b of store.settings.get<{ model: string; tokPerS: number; source: 'manual' | 'benchmark' }[]>(BASELINES_SETTING) ?? []) {
    alerts.setBaseline(b.model, b.tokPerS, b.source);
  }
  ctx.disposables.add(
    alerts.onDidChange((event) => {
      const { alert } = event;
      store.audit.append({
        type: `alert.${event.type}`,
        actor: 'system',
        target: alert.serviceId ? `${alert.host}/${alert.serviceId}` : alert.host,
        payload: { kind: alert.kind, severity: alert.severity, message: alert.message, value: alert.value, threshold: alert.threshold },
      });
      ctx.emit('alert.changed', event);
      if (event.type !== 'cleared') {
        ctx.notify({
          key: `alert:${alert.id}`,
          severity: alert.severity === 'critical' ? 'critical' : 'warning',
          title: `${alert.host}: ${alert.kind.replace('_', ' ')}`,
          body: alert.message,
          route: `hosts/${alert.host}`,
        });
      }
    }),
  );

  const modelOf = (label: string) => (serviceId: string) =>
    config.current.hosts.find((h) => h.label === label)?.services.find((s) => s.id === serviceId)?.model ?? null;

  ctx.disposables.add(
    fleet.onDidTick((snapshot) => {
      const tick: TelemetryTick = { at: snapshot.at, hosts: [] };
      for (const host of snapshot.hosts) {
        const values = hostValuesFromView(host);
        const staleReason = staleReasonOf(host);
        series.record(host.label, snapshot.at, values);
        tick.hosts.push({ host: host.label, staleReason, values });
      }
      alerts.observe(tick.hosts.map((h) => alertTickFromValues(h.host, h.staleReason, h.values, modelOf(h.host))));
      ctx.emit('telemetry.tick', tick);
    }),
  );

  const requestRows = store.db.prepare<[number], { ts: number; total_ms: number; model: string | null; client: string; tokens_out: number | null; upstream: string | null }>(
    'SELECT ts, total_ms, model, client, tokens_out, upstream FROM requests WHERE ts >= ? AND status < 400',
  );

  function costSummary(query: CostSummaryQuery): CostSummary {
    const now = clock.now();
    const fromMs = now - WINDOW_MS[query.window];
    const window = { fromMs, toMs: now };
    const spans = requestRows.all(fromMs).map(spanFromRequestRow).filter((s): s is RequestSpan => s !== null);
    const { busySecondsByHost } = shareGpuTime(spans, window);
    const hosts = config.current.hosts.filter((h) => !query.host || h.label === query.host);
    const priceOf = (label: string) => config.current.hosts.find((h) => h.label === label)?.pricePerHourUsd ?? null;
    return {
      at: now,
      window: query.window,
      hosts: hosts.map((h) => {
        const hostSpans = spans.filter((s) => s.host === h.label);
        const tokens = hostSpans.reduce((n, s) => n + (s.completionTokens ?? 0), 0);
        return hostCost({
          host: h.label,
          pricePerHourUsd: h.pricePerHourUsd ?? null,
          outputTokens: hostSpans.length ? tokens : null,
          busySeconds: busySecondsByHost.get(h.label) ?? (hostSpans.length ? 0 : null),
          reservedSeconds: (now - Math.max(fromMs, ctx.startedAt)) / 1000,
          monthlyBudgetUsd: query.monthlyBudgetUsd ?? null,
        });
      }),
      byModel: costShares(spans, (s) => s.model ?? 'unknown', priceOf, window),
      byClient: costShares(spans, (s) => s.client, priceOf, window),
    };
  }

  return {
    series,
    alerts,
    costSummary,
    setBaseline: (model, tokPerS, source, actor) => {
      const baseline = alerts.setBaseline(model, tokPerS, source);
      store.settings.set(BASELINES_SETTING, alerts.listBaselines());
      store.audit.append({ type: 'alerts.baseline.set', actor, target: model, payload: { tokPerS, source } });
      return baseline;
    },
  };
}
