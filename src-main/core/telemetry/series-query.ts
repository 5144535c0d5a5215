// How a series query fills its chart buckets: the columns a pattern selects,
// the bucket runs no finer source has filled yet, the per-bucket sums
// (Accumulator), and values rounded to what Float32 storage holds.

const POW10 = Array.from({ length: 61 }, (_, i) => 10 ** (i - 30));

/** Seven significant digits: Float32 storage holds no more (and JSON stays short). */
export function round(v: number): number {
  if (v === 0 || !Number.isFinite(v)) return v;
  const e = Math.floor(Math.log10(Math.abs(v)));
  const f = POW10[6 - e + 30];
  return f === undefined ? v : Math.round(v * f) / f;
}

export function selectColumns(names: readonly string[], patterns: readonly string[] | undefined): number[] {
  const out: number[] = [];
  names.forEach((name, i) => {
    if (name === '') return;
    if (patterns === undefined || patterns.some((p) => matches(name, p))) out.push(i);
  });
  return out;
}

/** `gpu.*` is a prefix; `gpu.*.vram_used_mib` a prefix and a suffix (one figure of every GPU); else the exact name. */
function matches(name: string, pattern: string): boolean {
  const star = pattern.indexOf('*');
  if (star < 0) return name === pattern;
  const head = pattern.slice(0, star);
  const tail = pattern.slice(star + 1);
  return name.length >= head.length + tail.length && name.startsWith(head) && name.endsWith(tail);
}

/** The blob as Float32 values: a view when aligned, else a copy. */
export function floats(data: Buffer): Float32Array {
  const len = Math.floor(data.byteLength / 4);
  if (data.byteOffset % 4 === 0) return new Float32Array(data.buffer, data.byteOffset, len);
  return new Float32Array(Uint8Array.prototype.slice.call(data, 0, len * 4).buffer);
}

/** [lo, hi] index runs of buckets no tier has filled yet. */
export function unclaimedRuns(claimed: Uint8Array): [number, number][] {
  const runs: [number, number][] = [];
  let i = 0;
  while (i < claimed.length) {
    if (claimed[i] === 1) {
      i++;
      continue;
    }
    const lo = i;
    while (i < claimed.length && claimed[i] === 0) i++;
    runs.push([lo, i - 1]);
  }
  // many small gaps (a flapping host): one wide read is cheaper than many narrow ones
  return runs.length > 64 ? [[runs[0]![0], runs[runs.length - 1]![1]]] : runs;
}

/** Per-bucket sums for a query: bucket(t) gives the offset of its first column, add() folds a value in. */
export class Accumulator {
  constructor(
    private readonly b0: number,
    private readonly stepMs: number,
    private readonly nb: number,
    private readonly toMs: number,
    readonly cols: readonly number[],
    private readonly claimed: Uint8Array,
    private readonly touched: Uint8Array,
    private readonly sum: Float64Array,
    private readonly cnt: Uint32Array,
    private readonly max: Float64Array,
    /** Columns read only to learn which buckets hold any value of them (queryWithPresence); `present` per bucket. */
    readonly presenceCols: readonly number[] = [],
    readonly present: Uint8Array | null = null,
  ) {}

  private lastBucket = -1;

  /** Marks the bucket of the last bucket() call present when any presence column has a value in `valueOf`. */
  mark(valueOf: (col: number) => number): void {
    const bi = this.lastBucket;
    if (this.present === null || bi < 0 || this.present[bi] === 1) return;
    for (const c of this.presenceCols) {
      if (!Number.isNaN(valueOf(c))) {
        this.present[bi] = 1;
        return;
      }
    }
  }

  /** Offset of bucket(tMs) in the sums; -1 outside the range or already filled by a finer tier. */
  bucket(tMs: number): number {
    if (tMs < this.b0 || tMs > this.toMs) return -1;
    const bi = Math.floor((tMs - this.b0) / this.stepMs);
    if (bi >= this.nb || this.claimed[bi] === 1) return -1;
    this.touched[bi] = 1;
    this.lastBucket = bi;
    return bi * this.cols.length;
  }

  add(at: number, v: number, m: number): void {
    if (Number.isNaN(v)) return;
    this.sum[at]! += v;
    this.cnt[at]! += 1;
    const mv = Number.isNaN(m) ? v : m;
    const cur = this.max[at]!;
    if (Number.isNaN(cur) || mv > cur) this.max[at] = mv;
  }
}
