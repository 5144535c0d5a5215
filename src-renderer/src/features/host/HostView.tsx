// One host over time: echarts series (VRAM per GPU, utilisation, power,
// temperature, KV %, running/waiting, tok/s, TTFT/e2e p50·p95, cost) for
// 15 min / 1 h / 24 h / 7 d, with a crosshair and tooltip shared by all charts.
// Data comes through props typed by the telemetry contract, so the view can be
// connected to either transport; live ticks go to the charts without a render.
import './host-view.css';
import { useCallback, useEffect, useMemo, useState } from 'react';
import type { Alert } from '../../../../src-preload/contract/alerts.js';
import type {
  CostSummary,
  CostSummaryQuery,
  SeriesQuery,
  SeriesRange,
  SeriesResult,
  TelemetryTick,
} from '../../../../src-preload/contract/telemetry.js';
import type { GpuVendor } from '../../../../src-preload/contract/fleet.js';
import type { ServiceKind } from '../../../../src-preload/contract/latency.js';
import { AlertList } from './AlertList.js';
import { readChartTheme } from './chart-theme.js';
import { connect, disconnect } from './echarts-host.js';
import { CostFigures } from './CostFigures.js';
import { HostChartPanel } from './HostChartPanel.js';
import { HOST_HEALTH_PANELS, HOST_PANELS, isLiveRange, panelPatterns, panelTitle, type PanelDef } from './host-panels.js';
import { HostSeriesFeed } from './host-series-feed.js';
import { RangePicker } from './RangePicker.js';
const COST_REFRESH_MS = 5_000;
const ALL_PANELS: readonly PanelDef[] = [...HOST_PANELS, ...HOST_HEALTH_PANELS];

export interface HostViewProps {
  readonly label: string;
  /** Changes re-read the CSS variables (canvas needs concrete colours). */
  readonly theme: 'dark' | 'light';
  readonly loadSeries: (query: SeriesQuery) => Promise<SeriesResult>;
  /** `telemetry.tick` events; returns the unsubscribe. */
  readonly subscribeTicks?: (listener: (tick: TelemetryTick) => void) => () => void;
  readonly loadCost?: (query: CostSummaryQuery) => Promise<CostSummary>;
  readonly alerts?: readonly Alert[];
  readonly initialRange?: SeriesRange;
  /** How often ranges that do not move live (24 h, 7 d) are queried again. Default 60 s. */
  readonly reloadEveryMs?: number;
  /** The host's GPU vendor: AMD hosts' memory chart names GTT. */
  readonly gpuVendor?: GpuVendor | null;
  /** The host's current figures (GPUs, services), shown above the charts; it renders on its own, not with the charts. */
  readonly details?: React.ReactNode;
  /** Each service's server kind: which latency it has (histograms or the proxy's), said in its words. */
  readonly serviceKinds?: Readonly<Record<string, ServiceKind>>;
}

type LoadState = { kind: 'loading' } | { kind: 'ready' } | { kind: 'error'; message: string };

export function HostView({
  label,
  theme,
  loadSeries,
  subscribeTicks,
  loadCost,
  alerts = [],
  initialRange = '1h',
  reloadEveryMs = 60_000,
  gpuVendor = null,
  details = null,
  serviceKinds,
}: HostViewProps): React.JSX.Element {
  const [range, setRange] = useState<SeriesRange>(initialRange);
  const [load, setLoad] = useState<LoadState>({ kind: 'loading' });
  const [version, setVersion] = useState(0);
  const [cost, setCost] = useState<CostSummary | null>(null);
  const feed = useMemo(() => new HostSeriesFeed(label, ALL_PANELS, initialRange), [label, initialRange]);

  const chartTheme = useMemo(() => readChartTheme(theme), [theme]);
  const group = `host-charts-${label}`;

  useEffect(() => {
    connect(group);
    return () => disconnect(group);
  }, [group]);

  useEffect(() => {
    let cancelled = false;
    const run = (): void => {
      loadSeries({ host: label, range, metrics: panelPatterns(ALL_PANELS) })
        .then((result) => {
          if (cancelled) return;
          feed.load(result);
          setLoad({ kind: 'ready' });
          setVersion((v) => v + 1);
        })
        .catch((err: unknown) => {
          if (!cancelled) setLoad({ kind: 'error', message: err instanceof Error ? err.message : String(err) });
        });
    };
    setLoad({ kind: 'loading' });
    run();
    const timer = isLiveRange(range) ? null : setInterval(run, reloadEveryMs);
    return () => {
      cancelled = true;
      if (timer !== null) clearInterval(timer);
    };
  }, [feed, label, range, loadSeries, reloadEveryMs]);

  useEffect(() => {
    if (subscribeTicks === undefined) return undefined;
    return subscribeTicks((tick) => {
      const host = tick.hosts.find((h) => h.host === label);
      if (host !== undefined) feed.pushTick(host, tick.at);
    });
  }, [feed, label, subscribeTicks]);

  // Bumped when the operator changes the host's budget: the cost figures that divide by it load again at once.
  const [costVersion, setCostVersion] = useState(0);
  const budgetChanged = useCallback(() => setCostVersion((n) => n + 1), []);
  useEffect(() => {
    if (loadCost === undefined) return undefined;
    let cancelled = false;
    const run = () => {
      loadCost({ window: range === '7d' ? '7d' : '24h', host: label })
        .then((c) => {
          if (!cancelled) setCost(c);
        })
        .catch(() => {
          if (!cancelled) setCost(null);
        });
    };
    run();
    // estimates move with traffic; a few seconds' lag is fine for them
    const timer = setInterval(run, COST_REFRESH_MS);
    return () => {
      cancelled = true;
      clearInterval(timer);
    };
  }, [loadCost, label, range, costVersion]);

  const hostCost = cost?.hosts.find((h) => h.host === label) ?? null;
  const hostAlerts = alerts.filter((a) => a.host === label);

  return (
    <div className="host-view" data-testid="host-view" data-host={label}>
      <header className="host-view__header">
        <h2 className="host-view__title">{label}</h2>
        <RangePicker value={range} onChange={setRange} />
        {load.kind === 'loading' ? <span className="muted" data-testid="host-loading">loading…</span> : null}
        {load.kind === 'error' ? (
          <span className="host-view__error" role="alert" data-testid="host-error">
            {load.message}
          </span>
        ) : null}
      </header>
      <AlertList alerts={hostAlerts} />
      {loadCost !== undefined ? <CostFigures cost={hostCost} onBudgetChanged={budgetChanged} /> : null}
      {details}
      <div className="host-view__grid">
        {HOST_PANELS.map((panel) => (
          <HostChartPanel
            key={panel.id}
            panel={panel}
            feed={feed}
            theme={chartTheme}
            group={group}
            version={version}
            title={panelTitle(panel, gpuVendor)}
            serviceKinds={serviceKinds}
          />
        ))}
      </div>
      <section className="host-view__health-charts" aria-labelledby={`${group}-health`} data-testid="host-health-charts">
        <h3 id={`${group}-health`} className="host-view__section-title">
          Host health over time
        </h3>
        <div className="host-view__grid">
          {HOST_HEALTH_PANELS.map((panel) => (
            <HostChartPanel key={panel.id} panel={panel} feed={feed} theme={chartTheme} group={group} version={version} />
          ))}
        </div>
      </section>
    </div>
  );
}
