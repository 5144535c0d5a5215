// Tables of the series store (SeriesStore). The lead appends this to
// store/migrations.ts as the next version: `{ version: N, ...SAMPLES_MIGRATION }`.
//
// One row per host per bucket holds every series of that host as a packed
// little-endian Float32 blob (NaN = unknown), column positions given by
// telemetry_columns. Compared with a row per (series, bucket) this is about 5×
// smaller on disk and a 7-day chart reads 2016 rows instead of 2016 × series.

export const SAMPLES_MIGRATION = {
  name: 'telemetry_samples',
  up: `
    CREATE TABLE telemetry_hosts (
      id    INTEGER PRIMARY KEY,
      label TEXT NOT NULL UNIQUE
    ) STRICT;

    -- Column positions inside the blobs; append-only per host (a position never changes meaning).
    CREATE TABLE telemetry_columns (
      host_id INTEGER NOT NULL REFERENCES telemetry_hosts (id),
      col     INTEGER NOT NULL,
      metric  TEXT NOT NULL,              -- e.g. gpu.0.vram_used_mib, svc.qwen.gen_tok_s
      PRIMARY KEY (host_id, col),
      UNIQUE (host_id, metric)
    ) STRICT;

    -- 10 s buckets, kept 7 days. data = Float32 mean[n] (n columns).
    CREATE TABLE telemetry_samples_10s (
      host_id INTEGER NOT NULL,
      t       INTEGER NOT NULL,           -- bucket start, s epoch
      n       INTEGER NOT NULL,
      data    BLOB NOT NULL,
      PRIMARY KEY (host_id, t)
    ) STRICT, WITHOUT ROWID;

    -- 5 min buckets, kept 90 days. data = Float32 mean[n] then Float32 max[n].
    CREATE TABLE telemetry_samples_5m (
      host_id INTEGER NOT NULL,
      t       INTEGER NOT NULL,
      n       INTEGER NOT NULL,
      data    BLOB NOT NULL,
      PRIMARY KEY (host_id, t)
    ) STRICT, WITHOUT ROWID;
  `,
} as const;

/** The same, as the named exports `{ name, up }`. */
export const { name, up } = SAMPLES_MIGRATION;
