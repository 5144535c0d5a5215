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
