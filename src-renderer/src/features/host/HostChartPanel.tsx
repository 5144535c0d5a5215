// One chart of the host view. Its points come from the HostSeriesFeed through
// Chart's imperative feed: live ticks never re-render this component, except
// when the set of legend entries, the empty-state reason or the fitted window
// start changes (rare).
import { memo, useCallback, useMemo, useRef, useState } from 'react';
import { Chart, type ChartUpdate } from '../../components/Chart.js';
import type { EChartsCoreOption } from '../../components/echarts.js';
import type { ServiceKind } from '../../../../src-preload/contract/latency.js';
import { emptyReason, type PanelDef, type Point } from './host-panels.js';
import { latencyPanelView } from './host-latency.js';
import type { ChartWindow, HostSeriesFeed } from './host-series-feed.js';
import { formatTick, legendEntries, panelBaseOption, panelDataUpdate, yAxisScale, type ChartTheme, type LegendEntry } from './panel-option.js';
import { formatTime } from '../../format/format.js';

export interface HostChartPanelProps {
  readonly panel: PanelDef;
  readonly feed: HostSeriesFeed;
  readonly theme: ChartTheme;
  readonly group: string;
  /** Changes when the feed was reloaded (range change): rebuilds the base option. */
  readonly version: number;
  /** The title shown (e.g. naming GTT on an AMD host); default the panel's. */
  readonly title?: string;
  /** Each service's server kind: the latency chart says why a service has no figure in its words. */
  readonly serviceKinds?: Readonly<Record<string, ServiceKind>>;
}

interface Shown {
  legend: LegendEntry[];
  reason: string | null;
  since: number | null;
  /** Where a line's figures come from when not from the server ("coder: measured at the proxy"). */
  notes: readonly string[];
}

/** The lines a panel draws: the latency panel picks, per service, the server's or the proxy's. */
function panelView(panel: PanelDef, lines: ReadonlyMap<string, Point[]>, kinds: Readonly<Record<string, ServiceKind>>): { lines: ReadonlyMap<string, Point[]>; reason: string | null; notes: readonly string[] } {
  if (panel.id !== 'latency') return { lines, reason: emptyReason(panel, lines), notes: [] };
  const v = latencyPanelView(lines, kinds);
  return { lines: v.lines, reason: v.reason ?? emptyReason(panel, v.lines), notes: v.notes };
}

type PanelView = ReturnType<typeof panelView>;

function shownOf(panel: PanelDef, v: PanelView, window: ChartWindow, palette: readonly string[]): Shown {
  return { legend: legendEntries(panel, v.lines, palette), reason: v.reason, since: window.fitted ? window.fromMs : null, notes: v.notes };
}

const sameShown = (a: Shown, b: Shown): boolean =>
  a.reason === b.reason &&
  a.since === b.since &&
  a.notes.join('\n') === b.notes.join('\n') &&
  a.legend.length === b.legend.length &&
  a.legend.every((e, i) => e.id === b.legend[i]!.id && e.color === b.legend[i]!.color);

const NO_KINDS: Readonly<Record<string, ServiceKind>> = {};


export const HostChartPanel = memo(function HostChartPanel({ panel, feed, theme, group, version, title = panel.title, serviceKinds = NO_KINDS }: HostChartPanelProps): React.JSX.Element {
  const option = useMemo<EChartsCoreOption>(
    () => panelBaseOption(panel, theme, panelView(panel, feed.linesOf(panel.id), serviceKinds).lines, feed.window()),
    // `version` stands for the feed's content: it changes after each reload
    [panel, theme, feed, version, serviceKinds],
  );
  const sectionRef = useRef<HTMLElement>(null);
  const [shown, setShown] = useState<Shown>(() => shownOf(panel, panelView(panel, feed.linesOf(panel.id), serviceKinds), feed.window(), theme.series));
  const subscribe = useCallback(
    (apply: ChartUpdate) => {
      const mark = (v: PanelView, window: ChartWindow) => {
        // for tests and tools: how much data the chart holds and its axes, written outside React
        if (sectionRef.current) Object.assign(sectionRef.current.dataset, dataSummary(v.lines), axisSummary(panel, v.lines, window));
        const next = shownOf(panel, v, window, theme.series);
        setShown((prev) => (sameShown(prev, next) ? prev : next));
      };
      mark(panelView(panel, feed.linesOf(panel.id), serviceKinds), feed.window());
      return feed.subscribe(panel.id, (lines, window) => {
        const v = panelView(panel, lines, serviceKinds);
        apply(panelDataUpdate(v.lines, window, panel));
        mark(v, window);
      });
    },
    [feed, panel, theme, serviceKinds],
  );
  return (
    <section ref={sectionRef} className="host-chart" data-testid={`host-chart-${panel.id}`} aria-label={title} data-empty={shown.reason === null ? undefined : 'true'}>
      <h3 className="host-chart__title">
        {title}
        {shown.since !== null && (
          <span className="host-chart__since" data-testid="chart-since" title="Less data than the chosen range: the time axis starts at the first sample">
            {' '}
            · since {formatTime(shown.since)}
          </span>
        )}
        {shown.notes.length > 0 && (
          <span className="host-chart__since" data-testid="latency-basis" title="The server keeps no latency histograms: these lines are what the console's proxy measured for the model, from each request's arrival (queue wait included); TTFT from streamed answers">
            {' '}
            · {shown.notes.join(' · ')}
          </span>
        )}
      </h3>
      <div style={{ position: 'relative' }}>
        <Chart className="host-chart__canvas" option={option} subscribe={subscribe} group={group} ariaLabel={`${title}, ${panel.unit}`} />
        {shown.reason !== null && (
          <p className="host-chart__empty" data-testid="chart-empty" role="status" style={{ position: 'absolute', inset: 0, display: 'flex', alignItems: 'center', justifyContent: 'center', margin: 0, padding: '0 16px', textAlign: 'center', color: theme.muted, background: theme.bg, fontSize: 13 }}>
            {shown.reason}
          </p>
        )}
      </div>
      {shown.reason === null && shown.legend.length > 0 && (
        <ul className="host-chart__legend" data-testid="chart-legend" style={{ display: 'flex', flexWrap: 'wrap', gap: '2px 12px', listStyle: 'none', margin: '4px 0 0', padding: 0, fontSize: 11, color: theme.muted }}>
          {shown.legend.map((e) => (
            <li key={e.id} style={{ display: 'inline-flex', alignItems: 'center', gap: 4 }}>
              <span aria-hidden="true" style={{ display: 'inline-block', width: 12, height: 0, borderTop: `2px ${e.dashed ? 'dashed' : 'solid'} ${e.color}` }} />
              {e.name}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
});

/** `data-x-min` / `data-x-max`: the time axis; `data-y-ticks`: the y tick values in stored units. */
function axisSummary(panel: PanelDef, lines: ReadonlyMap<string, Point[]>, window: ChartWindow): { xMin: string; xMax: string; yTicks: string; yLabels: string } {
  const y = yAxisScale(panel, lines);
  return { xMin: String(window.fromMs), xMax: String(window.toMs), yTicks: y.ticks.join(','), yLabels: y.ticks.map((t) => formatTick(t, panel.unit, y.step)).join('|') };
}

/** `data-points`: known points over all lines; `data-last-max`: the largest latest known value. */
function dataSummary(lines: ReadonlyMap<string, Point[]>): { points: string; lastMax: string } {
  let points = 0;
  let lastMax: number | null = null;
  for (const pts of lines.values()) {
    let last: number | null = null;
    for (const p of pts) {
      if (p[1] !== null) {
        points++;
        last = p[1];
      }
    }
    if (last !== null && (lastMax === null || last > lastMax)) lastMax = last;
  }
  return { points: String(points), lastMax: lastMax === null ? '' : String(lastMax) };
}
