// An alert's recent series as one line of text, for channels that cannot
// show a chart (Slack, Zulip, ntfy): eight block heights between the
// series' own low and high, a gap where a reading was missing (never a
// bottom bar: unknown is not 0), and the range with its unit beside it.
import type { AlertSeries } from '../../../src-preload/contract/index.js';

const BLOCKS = '▁▂▃▄▅▆▇█';
/** Characters of the line at most: a phone's width in a chat app. */
export const SPARKLINE_MAX_CHARS = 40;

/** Means of `values` in `buckets` equal runs; a run with no reading stays null. */
function bucketMeans(values: readonly (number | null)[], buckets: number): (number | null)[] {
  if (values.length <= buckets) return [...values];
  const out: (number | null)[] = [];
  for (let b = 0; b < buckets; b++) {
    const from = Math.floor((b * values.length) / buckets);
    const to = Math.floor(((b + 1) * values.length) / buckets);
    let sum = 0;
    let n = 0;
    for (let i = from; i < to; i++) {
      const v = values[i];
      if (v !== null && v !== undefined && Number.isFinite(v)) {
        sum += v;
        n++;
      }
    }
    out.push(n === 0 ? null : sum / n);
  }
  return out;
}

const fmt = (v: number): string => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2));

/** `▁▂▅▇ █▆ 12.0–41.5 s (last 5 min)`; null when the series has no reading at all. */
export function sparkline(series: AlertSeries): string | null {
  const points = bucketMeans(series.values, SPARKLINE_MAX_CHARS);
  const known = points.filter((v): v is number => v !== null);
  if (known.length === 0) return null;
  const lo = Math.min(...known);
  const hi = Math.max(...known);
  const bars = points
    .map((v) => {
      if (v === null) return ' ';
      const i = hi === lo ? BLOCKS.length - 1 : Math.round(((v - lo) / (hi - lo)) * (BLOCKS.length - 1));
      return BLOCKS[i];
    })
    .join('');
  const first = series.at[0];
  const last = series.at[series.at.length - 1];
  const span = first !== undefined && last !== undefined && last > first ? ` (last ${spanText(last - first)})` : '';
  const range = hi === lo ? fmt(lo) : `${fmt(lo)}–${fmt(hi)}`;
  return `${bars} ${range} ${series.unit}${span}`;
}

function spanText(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  const m = Math.round(s / 60);
  return m < 120 ? `${m} min` : `${Math.round(m / 60)} h`;
}
