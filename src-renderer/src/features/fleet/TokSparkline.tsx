// Generation tok/s over the last two minutes. The points come from TokHistory
// through Chart's imperative feed: ticks never re-render this component.
import { useCallback, useMemo } from 'react';
import { useAppStore, useServices } from '../../app/app-context.js';
import { Chart, type ChartUpdate } from '../../components/Chart.js';
import type { EChartsCoreOption } from '../../components/echarts.js';
import { chartPalette } from '../../components/chart-palette.js';
import { serviceKey, type TokPoint } from './tok-history.js';

export interface TokSparklineProps {
  readonly label: string;
  readonly serviceId: string;
}

function seriesUpdate(points: readonly TokPoint[], atMs: number, windowMs: number): EChartsCoreOption {
  return {
    xAxis: { min: atMs - windowMs, max: atMs },
    series: [{ data: points.map(([at, value]) => [at, value]) }],
  };
}

export function TokSparkline({ label, serviceId }: TokSparklineProps): React.JSX.Element {
  const { tokHistory } = useServices();
  const theme = useAppStore((s) => s.ui.theme);
  const key = serviceKey(label, serviceId);

  const option = useMemo<EChartsCoreOption>(() => {
    const palette = chartPalette(theme);
    const at = tokHistory.latestAt ?? 0;
    return {
      animation: false,
      grid: { left: 1, right: 1, top: 3, bottom: 2 },
      xAxis: { type: 'time', show: false, min: at - tokHistory.windowMs, max: at },
      yAxis: { type: 'value', show: false, min: 0, splitLine: { show: false } },
      series: [
        {
          type: 'line',
          showSymbol: false,
          connectNulls: false,
          silent: true,
          lineStyle: { width: 1.5, color: palette.line },
          areaStyle: { color: palette.area },
          data: tokHistory.points(key).map(([t, v]) => [t, v]),
        },
      ],
    };
  }, [theme, tokHistory, key]);

  const subscribe = useCallback(
    (apply: ChartUpdate) => tokHistory.subscribe(key, (points, atMs) => apply(seriesUpdate(points, atMs, tokHistory.windowMs))),
    [tokHistory, key],
  );

  return <Chart className="sparkline" option={option} subscribe={subscribe} ariaLabel={`Generation tokens per second for ${serviceId}, last two minutes`} />;
}
