// A thin horizontal bar with its figure as text beside it. Unknown → empty track and "—".
import { dataValue } from '../format/format.js';

export interface MeterBarProps {
  /** Fill in 0–100, or null when unknown. */
  readonly pct: number | null;
  /** The text shown next to the bar (e.g. "12.3 / 45.0 GiB"). */
  readonly text: string;
  readonly label: string;
  readonly testId?: string;
  /** Raw figure for `data-value` (defaults to pct). */
  readonly value?: number | null;
  /** Warn/alarm colouring thresholds in percent. */
  readonly warnAt?: number;
  readonly alarmAt?: number;
}

export function MeterBar({ pct, text, label, testId, value, warnAt = 80, alarmAt = 95 }: MeterBarProps): React.JSX.Element {
  const known = pct !== null && Number.isFinite(pct);
  const fill = known ? Math.max(0, Math.min(100, pct)) : 0;
  const tone = !known ? 'none' : fill >= alarmAt ? 'alarm' : fill >= warnAt ? 'warn' : 'ok';
  return (
    <div className="meter" data-testid={testId} data-value={dataValue(value === undefined ? pct : value)} title={`${label}: ${text}`}>
      <div className="meter__track" aria-hidden="true">
        <div className={`meter__fill meter__fill--${tone}`} style={{ width: `${fill}%` }} />
      </div>
      <span className="meter__text num">{text}</span>
    </div>
  );
}
