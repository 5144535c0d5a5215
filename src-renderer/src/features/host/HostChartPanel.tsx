// One chart of the host view. Its points come from the HostSeriesFeed through
// Chart's imperative feed: live ticks never re-render this component.
import { memo, useCallback, useMemo } from 'react';
import { Chart, type ChartUpdate } from '../../components/Chart.js';
import type { EChartsCoreOption } from '../../components/echarts.js';
import type { PanelDef } from './host-panels.js';
import type { HostSeriesFeed } from './host-series-feed.js';
import { panelBaseOption, panelDataUpdate, type ChartTheme } from './panel-option.js';

export interface HostChartPanelProps {
  readonly panel: PanelDef;
  readonly feed: HostSeriesFeed;
  readonly theme: ChartTheme;
  readonly group: string;
  /** Changes when the feed was reloaded (range change): rebuilds the base option. */
  readonly version: number;
}

export const HostChartPanel = memo(function HostChartPanel({ panel, feed, theme, group, version }: HostChartPanelProps): React.JSX.Element {
  const option = useMemo<EChartsCoreOption>(
    () => panelBaseOption(panel, theme, feed.linesOf(panel.id), feed.window()),
    // `version` stands for the feed's content: it changes after each reload
    [panel, theme, feed, version],
  );
  const subscribe = useCallback(
    (apply: ChartUpdate) => feed.subscribe(panel.id, (lines, window) => apply(panelDataUpdate(lines, window))),
    [feed, panel.id],
  );
  return (
    <section className="host-chart" data-testid={`host-chart-${panel.id}`} aria-label={panel.title}>
      <h3 className="host-chart__title">{panel.title}</h3>
      <Chart className="host-chart__canvas" option={option} subscribe={subscribe} group={group} ariaLabel={`${panel.title}, ${panel.unit}`} />
    </section>
  );
});
