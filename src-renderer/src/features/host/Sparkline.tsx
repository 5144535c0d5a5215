// An alert's recent figure as a small inline SVG (one polyline per run of
// known readings: a gap breaks the line, it never drops to 0). No chart
// library per row; the label says the range for a screen reader.
import type { AlertSeries } from '../../../../src-preload/contract/index.js';
import { sparklinePaths } from './alert-list-state.js';

const W = 96;
const H = 24;

export function Sparkline({ series }: { readonly series: AlertSeries | undefined }): React.JSX.Element | null {
  const paths = sparklinePaths(series, W, H);
  if (!series || paths === null) return null;
  const known = series.values.filter((v): v is number => v !== null);
  const label = `recent ${series.unit}: ${known.length} readings from ${Math.min(...known)} to ${Math.max(...known)}, last ${known.at(-1)}`;
  return (
    <svg className="alert-spark" width={W} height={H} viewBox={`-1 -1 ${W + 2} ${H + 2}`} role="img" aria-label={label} data-testid="alert-sparkline">
      <title>{label}</title>
      {paths.map((p, i) => (
        <polyline key={i} points={p} fill="none" stroke="currentColor" strokeWidth="1.5" />
      ))}
    </svg>
  );
}
