// The recent points of each figure a rule judges, keyed by the alert id it
// would raise, so an alert carries its own small chart: the readings' own
// times, a gap as null (unknown is never 0), at most ALERT_SERIES_MAX_POINTS.
// Points within one bucket of the window ÷ the maximum fold into one (the newest known wins),
// so a 5-minute window fits at a 1 s poll. A ring per figure: flat memory and
// cheap on every tick.
import { ALERT_SERIES_MAX_POINTS, type AlertSeries } from '../../../src-preload/contract/index.js';

class Ring {
  readonly at = new Float64Array(ALERT_SERIES_MAX_POINTS);
  readonly values = new Float64Array(ALERT_SERIES_MAX_POINTS);
  /** Index of the next write. */
  head = 0;
  size = 0;
  /** The fold bucket of the newest point. */
  private lastBucket = Number.NaN;
  constructor(
    readonly unit: string,
    readonly minGapMs: number,
  ) {}

  push(at: number, value: number | null): void {
    const v = value === null || !Number.isFinite(value) ? Number.NaN : value;
    const last = (this.head + ALERT_SERIES_MAX_POINTS - 1) % ALERT_SERIES_MAX_POINTS;
    const bucket = this.minGapMs > 0 ? Math.floor(at / this.minGapMs) : at;
    const same = this.size > 0 && bucket === this.lastBucket;
    this.lastBucket = bucket;
    if (same) {
      // The newest known reading of the bucket stands; a bucket with none is a gap.
      if (!Number.isNaN(v) || Number.isNaN(this.values[last]!)) {
        this.at[last] = at;
        this.values[last] = v;
      }
      return;
    }
    this.at[this.head] = at;
    this.values[this.head] = v;
    this.head = (this.head + 1) % ALERT_SERIES_MAX_POINTS;
    this.size = Math.min(this.size + 1, ALERT_SERIES_MAX_POINTS);
  }

  read(): AlertSeries {
    const at: number[] = [];
    const values: (number | null)[] = [];
    const start = (this.head + ALERT_SERIES_MAX_POINTS - this.size) % ALERT_SERIES_MAX_POINTS;
    for (let i = 0; i < this.size; i++) {
      const k = (start + i) % ALERT_SERIES_MAX_POINTS;
      at.push(this.at[k]!);
      const v = this.values[k]!;
      values.push(Number.isNaN(v) ? null : Math.round(v * 1000) / 1000);
    }
    return { unit: this.unit, at, values };
  }
}

export class RecentSeries {
  private readonly rings = new Map<string, Ring>();

  /** Records one point of the figure behind alert `id`, judged over `windowMs`. */
  push(id: string, unit: string, windowMs: number, at: number, value: number | null): void {
    let r = this.rings.get(id);
    if (r === undefined) this.rings.set(id, (r = new Ring(unit, Math.floor(windowMs / ALERT_SERIES_MAX_POINTS))));
    r.push(at, value);
  }

  read(id: string): AlertSeries | undefined {
    return this.rings.get(id)?.read();
  }

  /** Forgets the figures of a host (it left the config) or of one id. */
  forget(prefix: (id: string) => boolean): void {
    for (const id of [...this.rings.keys()]) if (prefix(id)) this.rings.delete(id);
  }
}
