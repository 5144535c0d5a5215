import type { SeriesRange } from '../../../../src-preload/contract/telemetry.js';
import { RANGES } from './host-panels.js';

export interface RangePickerProps {
  readonly value: SeriesRange;
  readonly onChange: (range: SeriesRange) => void;
}

const LABEL: Record<SeriesRange, string> = { '15m': '15 min', '1h': '1 h', '24h': '24 h', '7d': '7 d' };

export function RangePicker({ value, onChange }: RangePickerProps): React.JSX.Element {
  return (
    <div className="host-range" role="radiogroup" aria-label="Time range">
      {RANGES.map((r) => (
        <button key={r} type="button" role="radio" aria-checked={r === value} className={`host-range__btn${r === value ? ' host-range__btn--on' : ''}`} onClick={() => onChange(r)} data-testid={`range-${r}`}>
          {LABEL[r]}
        </button>
      ))}
    </div>
  );
}
