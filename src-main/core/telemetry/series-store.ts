import type Database from 'better-sqlite3';
import { SERIES_RANGES, metricUnit, type SeriesQuery, type SeriesResult } from '../../../src-preload/contract/telemetry.js';
import { AppError, silentLogger, type Clock, type Disposable, type Logger } from '../base/index.js';
import { classifyStorageFault, type StorageHealthTracker } from '../store/index.js';
import { TelemetryErrorCode } from './errors.js';
import type { HostValues } from './host-values.js';
import { HostSeries, MAX_SERIES_PER_HOST, addTo, encode, grow, newBucket } from './series-columns.js';
import { Accumulator, floats, round, selectColumns, unclaimedRuns } from './series-query.js';

export { MAX_SERIES_PER_HOST } from './series-columns.js';

// Recent and historical series for the host charts.
//
// - Memory: per host a ring of 1 s slots for the last hour (Float64 times, one
//   Float32Array per series, NaN = unknown). Preallocated, so memory is flat
//   from the first sample of a series on.
// - Disk: 10 s rows (mean) kept 7 days and 5 min rows (mean and max) kept 90
//   days, one packed row per host per bucket (samples-migration.ts). Closed
//   buckets wait in a bounded queue (overflow drops the oldest, counted) and
//   are written in one transaction per flush.
// - Queries fill each chart bucket from memory when it holds that time, else
//   from the coarsest disk tier that is still fine enough for the step, else
//   from the others (history from before a restart, a tier already pruned).

export interface SeriesStoreOptions {
  /** A connection on which SAMPLES_MIGRATION has been applied. */
  db: Database.Database;
  clock: Clock;
  logger?: Logger;
  /** Default 1 h. */
  memoryWindowMs?: number;
  /** Default 10 s. */
  flushEveryMs?: number;
  /** Default 7 days / 90 days. */
  retention10sMs?: number;
  retention5mMs?: number;
  /** Default 1 h. */
  pruneEveryMs?: number;
  /** Bound on closed rows waiting to be written. Default 50 000. */
  maxPendingRows?: number;
  /** Told of failed and landed writes: a full data folder keeps the rows queued (bounded) and says so there. */
  health?: StorageHealthTracker;
}

const SLOT_MS = 1_000;
const T10 = 10_000;
const T5M = 300_000;

interface PendingRow {
  hostId: number;
  tier: '10s' | '5m';
  tSec: number;
  data: Buffer;
  n: number;
}

export class SeriesStore implements Disposable {
  private readonly db: Database.Database;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly capacity: number;
  private readonly hostsByLabel = new Map<string, HostSeries>();
  private pending: PendingRow[] = [];
  private timers: Disposable[] = [];
  private closed = false;
  private _droppedRows = 0;
  private _rowsWritten = 0;
  private readonly options: Required<Omit<SeriesStoreOptions, 'db' | 'clock' | 'logger' | 'health'>>;
  private readonly health: StorageHealthTracker | null;
  private writesFailing = false;
  private readonly stmt: {
    insertHost: Database.Statement;
    selectHost: Database.Statement;
    insertCol: Database.Statement;
    insert10: Database.Statement;
    insert5m: Database.Statement;
    range10: Database.Statement;
    range5m: Database.Statement;
    prune10: Database.Statement;
    prune5m: Database.Statement;
  };

  constructor(options: SeriesStoreOptions) {
    this.db = options.db;
    this.clock = options.clock;
    this.logger = options.logger ?? silentLogger;
    this.options = {
      memoryWindowMs: options.memoryWindowMs ?? 3_600_000,
      flushEveryMs: options.flushEveryMs ?? 10_000,
      retention10sMs: options.retention10sMs ?? 7 * 86_400_000,
      retention5mMs: options.retention5mMs ?? 90 * 86_400_000,
      pruneEveryMs: options.pruneEveryMs ?? 3_600_000,
      maxPendingRows: options.maxPendingRows ?? 50_000,
    };
    this.health = options.health ?? null;
    this.health?.track('telemetry', () => ({ dropped: this._droppedRows, pending: this.pending.length }));
    this.capacity = Math.max(1, Math.ceil(this.options.memoryWindowMs / SLOT_MS));
    const db = this.db;
    this.stmt = {
      insertHost: db.prepare('INSERT OR IGNORE INTO telemetry_hosts (label) VALUES (?)'),
      selectHost: db.prepare('SELECT id FROM telemetry_hosts WHERE label = ?'),
      insertCol: db.prepare('INSERT OR IGNORE INTO telemetry_columns (host_id, col, metric) VALUES (?, ?, ?)'),
      insert10: db.prepare('INSERT OR REPLACE INTO telemetry_samples_10s (host_id, t, n, data) VALUES (?, ?, ?, ?)'),
      insert5m: db.prepare('INSERT OR REPLACE INTO telemetry_samples_5m (host_id, t, n, data) VALUES (?, ?, ?, ?)'),
      range10: db.prepare('SELECT t, n, data FROM telemetry_samples_10s WHERE host_id = ? AND t >= ? AND t < ? ORDER BY t'),
      range5m: db.prepare('SELECT t, n, data FROM telemetry_samples_5m WHERE host_id = ? AND t >= ? AND t < ? ORDER BY t'),
      prune10: db.prepare('DELETE FROM telemetry_samples_10s WHERE host_id = ? AND t < ?'),
      prune5m: db.prepare('DELETE FROM telemetry_samples_5m WHERE host_id = ? AND t < ?'),
    };
    this.load();
  }

  /** Rows dropped because the write queue was full (oldest first). */
  get droppedRows(): number {
    return this._droppedRows;
  }
  get rowsWritten(): number {
    return this._rowsWritten;
  }
  get pendingRows(): number {
    return this.pending.length;
  }

  /** Flush every flushEveryMs and prune every pruneEveryMs on the injected clock. */
  start(): void {
    if (this.closed || this.timers.length > 0) return;
    this.timers.push(this.clock.setInterval(() => this.safely('flush', () => this.flush()), this.options.flushEveryMs));
    this.timers.push(this.clock.setInterval(() => this.safely('prune', () => this.prune()), this.options.pruneEveryMs));
  }

  hosts(): string[] {
    return [...this.hostsByLabel.keys()];
  }

  metrics(host: string): string[] {
    return (this.hostsByLabel.get(host)?.names ?? []).filter((n) => n !== '');
  }

  /** Bytes held by the rings (times and values). */
  memoryBytes(): number {
    let total = 0;
    for (const h of this.hostsByLabel.values()) total += h.times.byteLength + h.ring.reduce((a, r) => a + r.byteLength, 0);
    return total;
  }

  /** One host's values at one time. Samples not newer than the last 1 s slot overwrite that slot. */
  record(host: string, atMs: number, values: HostValues): void {
    this.ensureOpen();
    if (!Number.isFinite(atMs)) return;
    const h = this.host(host);
    const slot = Math.floor(atMs / SLOT_MS);
    if (slot < h.lastSlot) return; // out of order: older than what we hold
    const entries = this.admitted(h, Object.entries(values));
    let idx: number;
    if (slot === h.lastSlot) idx = (h.head - 1 + h.capacity) % h.capacity;
    else {
      idx = h.head;
      h.head = (h.head + 1) % h.capacity;
      h.size = Math.min(h.capacity, h.size + 1);
      h.lastSlot = slot;
      h.times[idx] = slot * SLOT_MS;
      for (const r of h.ring) r[idx] = Number.NaN;
    }
    for (const [metric, v] of entries) {
      h.ring[h.cols.get(metric)!]![idx] = v === null || !Number.isFinite(v) ? Number.NaN : v;
    }
    this.accumulate(h, atMs, entries);
  }

  /** The entries that have (or get) a column; the rest are counted, and said once per host. */
  private admitted(h: HostSeries, entries: [string, number | null][]): [string, number | null][] {
    const kept = entries.filter(([metric]) => h.column(metric) !== undefined);
    if (kept.length < entries.length) {
      if (h.refusedValues === 0) {
        this.logger.warn('host has too many series; new ones are not recorded', { host: h.label, limit: MAX_SERIES_PER_HOST, example: entries.find(([m]) => !h.cols.has(m))?.[0] });
      }
      h.refusedValues += entries.length - kept.length;
    }
    return kept;
  }

  /** Values a host sent for series beyond MAX_SERIES_PER_HOST (not recorded). */
  refusedValues(host: string): number {
    return this.hostsByLabel.get(host)?.refusedValues ?? 0;
  }

  private accumulate(h: HostSeries, atMs: number, entries: [string, number | null][]): void {
    const t10 = Math.floor(atMs / T10) * T10;
    if (h.acc10 !== null && h.acc10.t !== t10) this.close10(h);
    h.acc10 = grow(h.acc10 ?? newBucket(t10, h.names.length), h.names.length);
    for (const [metric, v] of entries) {
      if (v === null || !Number.isFinite(v)) continue;
      addTo(h.acc10, h.cols.get(metric)!, v, v, 1);
    }
  }

  private close10(h: HostSeries): void {
    const b = h.acc10;
    if (b === null) return;
    h.acc10 = null;
    const { data, n } = encode(b, false);
    this.enqueue({ hostId: h.id, tier: '10s', tSec: b.t / 1000, data, n });
    const t5 = Math.floor(b.t / T5M) * T5M;
    if (h.acc5m !== null && h.acc5m.t !== t5) this.close5m(h);
    h.acc5m = grow(h.acc5m ?? newBucket(t5, n), n);
    for (let i = 0; i < n; i++) {
      const c = b.cnt[i]!;
      if (c > 0) addTo(h.acc5m, i, b.sum[i]! / c, b.max[i]!, c);
    }
  }

  private close5m(h: HostSeries): void {
    const b = h.acc5m;
    if (b === null) return;
    h.acc5m = null;
    const { data, n } = encode(b, true);
    this.enqueue({ hostId: h.id, tier: '5m', tSec: b.t / 1000, data, n });
  }

  private enqueue(row: PendingRow): void {
    this.pending.push(row);
    if (this.pending.length > this.options.maxPendingRows) {
      const drop = this.pending.length - this.options.maxPendingRows;
      this.pending.splice(0, drop);
      this._droppedRows += drop;
    }
  }

  /**
   * Writes closed rows (and new column names) in one transaction; returns rows written. When the data
   * folder refuses the write (full disk, I/O error) the rows and names stay queued for the next flush
   * (the queue's bound drops the oldest, counted) and 0 is returned: live figures never depend on the disk.
   */
  flush(): number {
    this.ensureOpen();
    const rows = this.pending;
    const hosts = [...this.hostsByLabel.values()].filter((h) => h.newCols.length > 0);
    if (rows.length === 0 && hosts.length === 0) return 0;
    const write = this.db.transaction(() => {
      for (const h of hosts) for (const c of h.newCols) this.stmt.insertCol.run(h.id, c, h.names[c]);
      for (const r of rows) (r.tier === '10s' ? this.stmt.insert10 : this.stmt.insert5m).run(r.hostId, r.tSec, r.n, r.data);
    });
    try {
      write.immediate();
    } catch (err) {
      if (this.health === null) throw err;
      const fault = classifyStorageFault(err);
      const reported = this.health.failed('telemetry', err, 'telemetry history write');
      if (fault !== 'full' && fault !== 'io') throw reported;
      if (!this.writesFailing) this.logger.warn('telemetry history not written; rows wait for space', { rows: rows.length, error: reported.message });
      this.writesFailing = true;
      return 0;
    }
    // Synchronous from the read above: nothing was queued or named meanwhile.
    this.pending = [];
    for (const h of hosts) h.newCols = [];
    this._rowsWritten += rows.length;
    this.writesFailing = false;
    this.health?.wrote('telemetry');
    return rows.length;
  }

  /** Deletes rows past retention; returns rows deleted. */
  prune(nowMs: number = this.clock.now()): number {
    this.ensureOpen();
    const cut10 = Math.floor((nowMs - this.options.retention10sMs) / 1000);
    const cut5m = Math.floor((nowMs - this.options.retention5mMs) / 1000);
    let deleted = 0;
    const run = this.db.transaction(() => {
      for (const h of this.hostsByLabel.values()) {
        deleted += this.stmt.prune10.run(h.id, cut10).changes;
        deleted += this.stmt.prune5m.run(h.id, cut5m).changes;
      }
    });
    run.immediate();
    return deleted;
  }

  query(q: SeriesQuery): SeriesResult {
    return this.read(q, []).result;
  }

  /**
   * query(), and from the same read, for each of its buckets (parallel to `t`) whether any series matching
   * `anyOf` holds a value there: what query() with those series too would show, without their columns
   * (a report's telemetry coverage counts every GPU figure; its charts draw one).
   */
  queryWithPresence(q: SeriesQuery, anyOf: readonly string[]): { result: SeriesResult; present: boolean[] } {
    return this.read(q, anyOf);
  }

  private read(q: SeriesQuery, anyOf: readonly string[]): { result: SeriesResult; present: boolean[] } {
    this.ensureOpen();
    const { spanMs, stepMs } = SERIES_RANGES[q.range];
    const toMs = q.endMs ?? this.clock.now();
    const fromMs = toMs - spanMs;
    const h = this.hostsByLabel.get(q.host);
    const empty = { result: { host: q.host, range: q.range, fromMs, toMs, stepMs, t: [], series: [], tiers: [] } as SeriesResult, present: [] };
    if (h === undefined) return empty;
    const cols = selectColumns(h.names, q.metrics);
    const presenceCols = anyOf.length ? selectColumns(h.names, anyOf) : [];
    if (cols.length === 0 && presenceCols.length === 0) return empty;

    const b0 = Math.floor(fromMs / stepMs) * stepMs;
    const nb = Math.max(1, Math.ceil((toMs + 1 - b0) / stepMs));
    const k = cols.length;
    const sum = new Float64Array(nb * k);
    const cnt = new Uint32Array(nb * k);
    const max = new Float64Array(nb * k).fill(Number.NaN);
    const claimed = new Uint8Array(nb);
    const touched = new Uint8Array(nb);
    const used: ('1s' | '10s' | '5m')[] = [];

    const present = presenceCols.length ? new Uint8Array(nb) : null;
    const acc = new Accumulator(b0, stepMs, nb, toMs, cols, claimed, touched, sum, cnt, max, presenceCols, present);

    const tiers: { name: '1s' | '10s' | '5m'; res: number }[] = [
      { name: '1s', res: SLOT_MS },
      { name: '10s', res: T10 },
      { name: '5m', res: T5M },
    ];
    // Memory first (exact, cheap, at most an hour); then the coarsest disk tier
    // that is fine enough for the step (fewest rows); then the others.
    const disk = tiers.filter((t) => t.name !== '1s');
    const fine = disk.filter((t) => t.res <= stepMs).sort((a, b) => b.res - a.res);
    const coarse = disk.filter((t) => t.res > stepMs).sort((a, b) => a.res - b.res);
    for (const tier of [tiers[0]!, ...fine, ...coarse]) {
      const runs = unclaimedRuns(claimed);
      if (runs.length === 0) break;
      touched.fill(0);
      for (const [lo, hi] of runs) {
        // a coarse row starting before the bucket still belongs to it
        const loMs = b0 + lo * stepMs - (tier.res > stepMs ? tier.res - 1 : 0);
        const hiMs = b0 + (hi + 1) * stepMs;
        if (tier.name === '1s') this.readRing(h, loMs, hiMs, acc);
        else this.readRows(h, tier.name, loMs, hiMs, acc);
      }
      let any = false;
      for (let i = 0; i < nb; i++) {
        if (touched[i] === 1) {
          claimed[i] = 1;
          any = true;
        }
      }
      if (any) used.push(tier.name);
    }

    // Column by column into arrays of their final length (a 7-day chart of 42 series is 85k values each).
    const filled: number[] = [];
    for (let i = 0; i < nb; i++) if (claimed[i] === 1) filled.push(i);
    const t = filled.map((i) => b0 + i * stepMs);
    const avgs: (number | null)[][] = [];
    const maxes: (number | null)[][] = [];
    for (let j = 0; j < k; j++) {
      const avg = new Array<number | null>(filled.length);
      const mx = new Array<number | null>(filled.length);
      for (let m = 0; m < filled.length; m++) {
        const o = filled[m]! * k + j;
        const c = cnt[o]!;
        avg[m] = c > 0 ? round(sum[o]! / c) : null;
        mx[m] = c > 0 ? round(max[o]!) : null;
      }
      avgs.push(avg);
      maxes.push(mx);
    }
    const order = ['1s', '10s', '5m'] as const;
    const result: SeriesResult = {
      host: q.host,
      range: q.range,
      fromMs,
      toMs,
      stepMs,
      t,
      series: cols.map((c, j) => ({ metric: h.names[c]!, unit: metricUnit(h.names[c]!), avg: avgs[j]!, max: maxes[j]! })),
      tiers: order.filter((n) => used.includes(n)),
    };
    return { result, present: present ? filled.map((i) => present[i] === 1) : [] };
  }

  private readRing(h: HostSeries, fromMs: number, toMs: number, acc: Accumulator): void {
    const start = (h.head - h.size + h.capacity) % h.capacity;
    const cols = acc.cols;
    for (let i = 0; i < h.size; i++) {
      const idx = (start + i) % h.capacity;
      const t = h.times[idx]!;
      if (t < fromMs || t >= toMs) continue;
      const o = acc.bucket(t);
      if (o < 0) continue;
      for (let j = 0; j < cols.length; j++) {
        const v = h.ring[cols[j]!]?.[idx] ?? Number.NaN;
        acc.add(o + j, v, v);
      }
      acc.mark((c) => h.ring[c]?.[idx] ?? Number.NaN);
    }
  }

  private readRows(h: HostSeries, tier: '10s' | '5m', fromMs: number, toMs: number, acc: Accumulator): void {
    const stmt = tier === '10s' ? this.stmt.range10 : this.stmt.range5m;
    const rows = stmt.all(h.id, Math.floor(fromMs / 1000), Math.ceil(toMs / 1000)) as { t: number; n: number; data: Buffer }[];
    // Rows of this tier not yet written (the unflushed tail) count too.
    for (const p of this.pending) {
      if (p.hostId === h.id && p.tier === tier && p.tSec * 1000 >= fromMs && p.tSec * 1000 < toMs) rows.push({ t: p.tSec, n: p.n, data: p.data });
    }
    const cols = acc.cols;
    for (const r of rows) {
      const o = acc.bucket(r.t * 1000);
      if (o < 0) continue;
      const f = floats(r.data);
      const n = Math.min(r.n, f.length);
      const hasMax = f.length >= 2 * r.n;
      for (let j = 0; j < cols.length; j++) {
        const c = cols[j]!;
        const v = c < n ? f[c]! : Number.NaN;
        acc.add(o + j, v, hasMax && c < n ? f[r.n + c]! : v);
      }
      acc.mark((c) => (c < n ? f[c]! : Number.NaN));
    }
  }

  private host(label: string): HostSeries {
    let h = this.hostsByLabel.get(label);
    if (h === undefined) {
      this.stmt.insertHost.run(label);
      const row = this.stmt.selectHost.get(label) as { id: number };
      h = new HostSeries(label, row.id, this.capacity);
      this.hostsByLabel.set(label, h);
    }
    return h;
  }

  private load(): void {
    const hosts = this.db.prepare('SELECT id, label FROM telemetry_hosts').all() as { id: number; label: string }[];
    const cols = this.db.prepare('SELECT host_id, col, metric FROM telemetry_columns ORDER BY host_id, col').all() as {
      host_id: number;
      col: number;
      metric: string;
    }[];
    const byId = new Map<number, HostSeries>();
    for (const r of hosts) {
      const h = new HostSeries(r.label, r.id, this.capacity);
      this.hostsByLabel.set(r.label, h);
      byId.set(r.id, h);
    }
    for (const c of cols) byId.get(c.host_id)?.loadColumn(c.col, c.metric);
  }

  private ensureOpen(): void {
    if (this.closed) throw new AppError(TelemetryErrorCode.STORE_CLOSED, 'the series store is closed');
  }

  private safely(what: string, fn: () => unknown): void {
    try {
      fn();
    } catch (err) {
      this.logger.error(`series store ${what} failed`, { error: err instanceof Error ? err.message : String(err) });
    }
  }

  /** Writes the open buckets too (so a restart keeps the last seconds), then stops. Idempotent. */
  dispose(): void {
    if (this.closed) return;
    for (const t of this.timers) void t.dispose();
    this.timers = [];
    for (const h of this.hostsByLabel.values()) {
      this.close10(h);
      this.close5m(h);
    }
    this.safely('final flush', () => this.flush());
    this.closed = true;
  }
}
