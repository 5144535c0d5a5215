// A host's series as the store holds them: columns by metric (made on first
// sight, at most MAX_SERIES_PER_HOST), the ring of 1 s slots, and the open
// 10 s / 5 min buckets with how a closed one is packed for its disk row
// (Float32 means, then maxes for the 5 min tier; NaN = unknown).

/**
 * Series a host may have. Names come from the host's own answers (a GPU index from nvidia-smi, a
 * service id, an engine label), so a host that invents new ones each poll must not grow memory and
 * the columns table without end. 1,024 is 64 GPUs × 7 series plus 30 services × 19, with room;
 * each column costs 14 KiB of ring (an hour of Float32 slots).
 */
export const MAX_SERIES_PER_HOST = 1_024;

export interface Bucket {
  t: number;
  sum: Float64Array;
  cnt: Uint32Array;
  max: Float32Array;
}

export class HostSeries {
  readonly cols = new Map<string, number>();
  readonly names: string[] = [];
  readonly ring: Float32Array[] = [];
  readonly times: Float64Array;
  head = 0;
  size = 0;
  lastSlot = -Infinity;
  acc10: Bucket | null = null;
  acc5m: Bucket | null = null;
  /** Columns created since the last flush (persisted with it). */
  newCols: number[] = [];
  /** Values not recorded because the host already had MAX_SERIES_PER_HOST series. */
  refusedValues = 0;

  constructor(
    readonly label: string,
    readonly id: number,
    readonly capacity: number,
  ) {
    this.times = new Float64Array(capacity);
  }

  /** The metric's column, made on first sight; undefined once the host has MAX_SERIES_PER_HOST. */
  column(metric: string): number | undefined {
    let c = this.cols.get(metric);
    if (c === undefined) {
      if (this.names.length >= MAX_SERIES_PER_HOST) return undefined;
      c = this.names.length;
      this.cols.set(metric, c);
      this.names.push(metric);
      this.ring.push(new Float32Array(this.capacity).fill(Number.NaN));
      this.newCols.push(c);
    }
    return c;
  }

  /** Loaded from disk: known already, not new. */
  loadColumn(col: number, metric: string): void {
    while (this.names.length <= col) {
      this.names.push('');
      this.ring.push(new Float32Array(this.capacity).fill(Number.NaN));
    }
    this.names[col] = metric;
    this.cols.set(metric, col);
  }
}

export function newBucket(t: number, n: number): Bucket {
  return { t, sum: new Float64Array(n), cnt: new Uint32Array(n), max: new Float32Array(n).fill(Number.NaN) };
}

export function grow(b: Bucket, n: number): Bucket {
  if (b.sum.length >= n) return b;
  const g = newBucket(b.t, n);
  g.sum.set(b.sum);
  g.cnt.set(b.cnt);
  g.max.set(b.max);
  return g;
}

export function addTo(b: Bucket, col: number, value: number, maxValue: number, weight: number): void {
  b.sum[col]! += value * weight;
  b.cnt[col]! += weight;
  const m = b.max[col]!;
  if (Number.isNaN(m) || maxValue > m) b.max[col] = maxValue;
}

export function encode(b: Bucket, withMax: boolean): { data: Buffer; n: number } {
  const n = b.sum.length;
  const f = new Float32Array(withMax ? 2 * n : n);
  for (let i = 0; i < n; i++) {
    const c = b.cnt[i]!;
    f[i] = c > 0 ? b.sum[i]! / c : Number.NaN;
    if (withMax) f[n + i] = b.max[i]!;
  }
  return { data: Buffer.from(f.buffer, f.byteOffset, f.byteLength), n };
}
