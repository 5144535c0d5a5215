// The one echarts wrapper: init once, setOption lazily, follow the element's
// size, dispose on unmount. High-rate data arrives through `subscribe`, which
// calls setOption directly — no React render per sample.
import { useEffect, useRef } from 'react';
import { init, type ECharts, type EChartsCoreOption } from './echarts.js';

export type ChartUpdate = (option: EChartsCoreOption) => void;

export interface ChartProps {
  /** Base option; applied on mount and whenever its identity changes (memoise it). */
  readonly option: EChartsCoreOption;
  /** Imperative feed: called once with an `apply` function; returns its own unsubscribe. */
  readonly subscribe?: (apply: ChartUpdate) => () => void;
  readonly className?: string;
  readonly ariaLabel: string;
  /** echarts connect group: charts of one group share the tooltip and crosshair. */
  readonly group?: string;
}

export function Chart({ option, subscribe, className, ariaLabel, group }: ChartProps): React.JSX.Element {
  const elementRef = useRef<HTMLDivElement>(null);
  const chartRef = useRef<ECharts | null>(null);

  useEffect(() => {
    const element = elementRef.current;
    if (element === null) return undefined;
    const chart = init(element, undefined, { renderer: 'canvas' });
    chartRef.current = chart;
    const observer = new ResizeObserver(() => chart.resize());
    observer.observe(element);
    return () => {
      observer.disconnect();
      chartRef.current = null;
      chart.dispose();
    };
  }, []);

  useEffect(() => {
    const chart = chartRef.current;
    if (chart !== null) chart.group = group ?? '';
  }, [group]);

  useEffect(() => {
    chartRef.current?.setOption(option, { lazyUpdate: true });
  }, [option]);

  useEffect(() => {
    if (subscribe === undefined) return undefined;
    return subscribe((update) => {
      const chart = chartRef.current;
      if (chart !== null && !chart.isDisposed()) chart.setOption(update, { lazyUpdate: true });
    });
  }, [subscribe]);

  return <div ref={elementRef} className={className} role="img" aria-label={ariaLabel} />;
}
