// One chart of the host view. Its points come from the HostSeriesFeed through
// Chart's imperative feed: live ticks never re-render this component.
import { memo, useCallback, useMemo, useRef } from 'react';
import { Chart, type ChartUpdate } from '../../components/Chart.js';
import type { EChartsCoreOption } from '../../components/echarts.js';
import type { PanelDef, Point } from './host-panels.js';
import type { HostSeriesFeed } from './host-series-feed.js';
import { panelBaseOption, panelDataUpdate, type ChartTheme } from './panel-option.js';

export interface HostChartPanelProps {
  readonly panel: PanelDef;
  readonly feed: HostSeriesFeed;
  readonly theme: ChartTheme;
  readonly group: string;
  /** Changes when the feed was reloaded (range change): rebuilds the base option. */
  readonly version: number;
  /** The title shown (e.g. naming GTT on an AMD host); default the panel's. */
  readonly title?: string;
}

export const HostChartPanel = memo(function HostChartPanel({ panel, feed, theme, group, version, title = panel.title }: HostChartPanelProps): React.JSX.Element {
  const option = useMemo<EChartsCoreOption>(
    () => panelBaseOption(panel, theme, feed.linesOf(panel.id), feed.window()),
    // `version` stands for the feed's content: it changes after each reload
    [panel, theme, feed, version],
  );
  const sectionRef = useRef<HTMLElement>(null);
  const subscribe = useCallback(
    (apply: ChartUpdate) => {
      const mark = (lines: ReadonlyMap<string, Point[]>) => {
        // for tests and tools: how much data the chart holds, written outside React
        if (sectionRef.current) Object.assign(sectionRef.current.dataset, dataSummary(lines));
      };
      mark(feed.linesOf(panel.id));
      return feed.subscribe(panel.id, (lines, window) => {
        apply(panelDataUpdate(lines, window, panel));
        mark(lines);
      });
    },
    [feed, panel],
  );
  return (
    <section ref={sectionRef} className="host-chart" data-testid={`host-chart-${panel.id}`} aria-label={title}>
      <h3 className="host-chart__title">{title}</h3>
      <Chart className="host-chart__canvas" option={option} subscribe={subscribe} group={group} ariaLabel={`${title}, ${panel.unit}`} />
    </section>
  );
});

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
