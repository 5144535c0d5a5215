// One number from the latest telemetry tick (a fleet-card cell). Subscribes to
// its own series key: a tick re-renders this cell only when its value changed.
import { useCallback, useSyncExternalStore } from 'react';
import { useServices } from '../../app/app-context.js';
import { dataValue } from '../../format/format.js';
import { LiveFigures, liveFiguresFor } from './live-figures.js';

export interface LiveFigureProps {
  readonly host: string;
  readonly metric: string;
  readonly testId: string;
  readonly format: (value: number) => string;
  /** Shown while the figure is unknown (never a 0). */
  readonly unavailable?: string;
  readonly title?: string;
}

export function LiveFigure({ host, metric, testId, format, unavailable = '—', title }: LiveFigureProps): React.JSX.Element {
  const { transport } = useServices();
  const live = liveFiguresFor(transport);
  const key = LiveFigures.key(host, metric);
  const subscribe = useCallback((cb: () => void) => live.subscribe(key, cb), [live, key]);
  const value = useSyncExternalStore(subscribe, () => live.get(key) ?? null);
  return (
    <span data-testid={testId} data-value={dataValue(value)} title={value === null ? `${title ?? metric}: unavailable` : title}>
      {value === null ? unavailable : format(value)}
    </span>
  );
}


export interface BucketBoundFigureProps extends LiveFigureProps {
  /** The histogram bucket bound the percentile falls under (`…_le_s`). */
  readonly boundMetric: string;
}

/**
 * A percentile read from a server's histogram buckets: shown as the bucket's
 * bound ("≤ 250 ms"), all the buckets can say for sure, with PromQL's
 * interpolated estimate in the tooltip — never an interpolation dressed up as
 * a measurement.
 */
export function BucketBoundFigure({ host, metric, boundMetric, testId, format, unavailable = '—', title }: BucketBoundFigureProps): React.JSX.Element {
  const { transport } = useServices();
  const live = liveFiguresFor(transport);
  const key = LiveFigures.key(host, metric);
  const boundKey = LiveFigures.key(host, boundMetric);
  const subscribe = useCallback(
    (cb: () => void) => {
      const offs = [live.subscribe(key, cb), live.subscribe(boundKey, cb)];
      return () => offs.forEach((off) => off());
    },
    [live, key, boundKey],
  );
  const value = useSyncExternalStore(subscribe, () => live.get(key) ?? null);
  const bound = useSyncExternalStore(subscribe, () => live.get(boundKey) ?? null);
  const what = title ?? metric;
  const tip =
    bound === null
      ? `${what}: unavailable (no requests in the window, or the server has no histogram)`
      : `${what}: from the server's histogram buckets — at most ${format(bound)} (the bucket it falls in)${value !== null ? `; interpolated inside the bucket ≈ ${format(value)}` : ''}`;
  return (
    <span data-testid={testId} data-value={dataValue(bound)} data-interpolated={dataValue(value)} title={tip}>
      {bound === null ? unavailable : `≤ ${format(bound)}`}
    </span>
  );
}
