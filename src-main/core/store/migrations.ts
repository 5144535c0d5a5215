// The schema, as numbered migrations applied in order at open.
//
// To add tables for a new capability, APPEND an entry with the next version
// number (never edit, renumber or remove a shipped entry: databases in the field
// have recorded it by version and name). `up` is plain SQL run with db.exec()
// inside the same IMMEDIATE transaction that records the version, so a failing
// migration leaves the file untouched. Keep each migration forward-only; an
// older app refuses a database whose highest version it does not know
// (STORE_SCHEMA_TOO_NEW) rather than guess at it. Tables for later capabilities
// (requests, samples, actions, bench_runs, bench_requests, reports) go here.

import { CLIENT_LIMITS_MIGRATION } from './migrations-client-limits.js';
import { TRACES_MIGRATION } from './migrations-traces.js';
import { CAPTURES_MIGRATION } from './migrations-captures.js';
import { AUDIT_TS_MIGRATION } from './migrations-audit-ts.js';

export interface Migration {
  /** 1, 2, 3… without gaps. */
  readonly version: number;
  /** Short snake_case description; recorded and checked on every open. */
  readonly name: string;
  /** SQL executed as one script. */
  readonly up: string;
}

export const GENESIS_HASH = '0'.repeat(64);

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'settings_and_audit',
    up: `
      CREATE TABLE settings (
        key        TEXT PRIMARY KEY NOT NULL,
        value      TEXT NOT NULL,           -- canonical JSON
        updated_at INTEGER NOT NULL         -- ms epoch, injected clock
      ) STRICT;

      CREATE TABLE audit_events (
        seq       INTEGER PRIMARY KEY,      -- 1, 2, 3…; assigned by append, never reused
        ts        INTEGER NOT NULL,         -- ms epoch, injected clock
        type      TEXT NOT NULL,
        actor     TEXT NOT NULL,
        target    TEXT,
        payload   TEXT NOT NULL,            -- canonical JSON object, already redacted
        prev_hash TEXT NOT NULL,            -- hex; '${GENESIS_HASH}' for seq 1
        hash      TEXT NOT NULL             -- see audit.ts for the exact preimage
      ) STRICT;

      CREATE INDEX audit_events_type_seq ON audit_events (type, seq);

      CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
      BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END;

      CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
      BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END;
    `,
  },
  {
    version: 2,
    name: 'proxy_requests',
    up: `
      -- One row per request the proxy answered (written in batches off the hot path).
      CREATE TABLE requests (
        seq         INTEGER PRIMARY KEY,
        id          TEXT NOT NULL UNIQUE,   -- the x-request-id the client saw
        ts          INTEGER NOT NULL,       -- ms epoch when the request arrived
        client      TEXT NOT NULL,          -- token name, or 'anonymous'
        class       TEXT,                   -- interactive | system | batch; NULL when refused before it was known
        endpoint    TEXT NOT NULL,
        model       TEXT,
        upstream    TEXT,                   -- label/serviceId
        stream      INTEGER NOT NULL,
        status      INTEGER NOT NULL,
        error_code  TEXT,
        queue_ms    REAL NOT NULL,
        ttft_ms     REAL,
        total_ms    REAL NOT NULL,
        tokens_in   INTEGER,
        tokens_out  INTEGER,
        bytes_in    INTEGER NOT NULL,
        bytes_out   INTEGER NOT NULL,
        replayed    INTEGER NOT NULL DEFAULT 0
      ) STRICT;
      CREATE INDEX requests_ts ON requests (ts);
      CREATE INDEX requests_model_seq ON requests (model, seq);
    `,
  },
  {
    version: 3,
    name: 'proxy_client_tokens',
    up: `
      -- Bearer tokens of local clients. Only a SHA-256 of each token is kept.
      CREATE TABLE client_tokens (
        token_hash   TEXT PRIMARY KEY NOT NULL,
        name         TEXT NOT NULL,
        prefix       TEXT NOT NULL,
        max_class    TEXT NOT NULL CHECK (max_class IN ('interactive', 'system', 'batch')),
        created_at   INTEGER NOT NULL,
        revoked_at   INTEGER,
        last_used_at INTEGER
      ) STRICT;
      -- A name is unique among live tokens; a revoked name may be issued again.
      CREATE UNIQUE INDEX client_tokens_live_name ON client_tokens (name) WHERE revoked_at IS NULL;
    `,
  },
  {
    version: 4,
    // The series store (core/telemetry SeriesStore). One row per host per
    // bucket holds every series of that host as a packed little-endian Float32
    // blob (NaN = unknown), column positions given by telemetry_columns: about
    // 5× smaller than a row per (series, bucket), and a 7-day chart reads 2016
    // rows instead of 2016 × series.
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
  },
  {
    version: 5,
    // Lifecycle actions (wake / sleep / offload / restart) through their whole
    // life, and standing approvals. The audit chain holds every step; these
    // rows are the queryable current state and the measured durations that
    // downtime estimates come from.
    name: 'lifecycle_actions',
    up: `
      CREATE TABLE actions (
        id          TEXT PRIMARY KEY,
        upstream    TEXT NOT NULL,
        kind        TEXT NOT NULL CHECK (kind IN ('wake','sleep','offload','restart')),
        state       TEXT NOT NULL CHECK (state IN ('proposed','approved','rejected','expired','running','verified','failed')),
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL,
        -- measured execution time of a verified action (ms), per variant (e.g. 'wake-2')
        variant     TEXT,
        duration_ms INTEGER,
        view        TEXT NOT NULL        -- the ActionView as JSON (nonce removed once decided)
      ) STRICT;
      CREATE INDEX actions_upstream ON actions (upstream, state);
      CREATE INDEX actions_created ON actions (created_at);
      CREATE INDEX actions_timing ON actions (upstream, variant, updated_at) WHERE duration_ms IS NOT NULL;

      CREATE TABLE standing_approvals (
        id          TEXT PRIMARY KEY,
        upstream    TEXT NOT NULL,
        kind        TEXT NOT NULL,
        granted_by  TEXT NOT NULL,
        granted_at  INTEGER NOT NULL,
        expires_at  INTEGER NOT NULL,
        revoked_at  INTEGER,
        uses        INTEGER NOT NULL DEFAULT 0
      ) STRICT;
    `,
  },
  {
    version: 6,
    // Benchmarks (core/bench): saved scenarios, runs with their per-level
    // figures (JSON, shaped by the contract's LevelResult), and one row per
    // request with its exact timings and structured-output checks.
    name: 'bench_runs',
    up: `
      CREATE TABLE bench_scenarios (
        id          TEXT PRIMARY KEY NOT NULL,
        name        TEXT NOT NULL,
        scenario    TEXT NOT NULL,          -- BenchScenario as JSON
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL
      ) STRICT;

      CREATE TABLE bench_runs (
        id          TEXT PRIMARY KEY NOT NULL,
        name        TEXT NOT NULL,
        state       TEXT NOT NULL CHECK (state IN ('running', 'completed', 'cancelled', 'failed', 'imported')),
        source      TEXT NOT NULL,
        scenario    TEXT,                   -- BenchScenario as JSON (null for imports)
        upstream    TEXT,
        host        TEXT,
        model       TEXT,
        slots       INTEGER,
        started_at  INTEGER NOT NULL,
        finished_at INTEGER,
        levels      TEXT NOT NULL,          -- LevelResult[] as JSON
        peaks       TEXT NOT NULL,
        baseline    INTEGER NOT NULL DEFAULT 0,
        error       TEXT,
        note        TEXT
      ) STRICT;
      CREATE INDEX bench_runs_started ON bench_runs (started_at);

      CREATE TABLE bench_requests (
        run_id            TEXT NOT NULL REFERENCES bench_runs (id) ON DELETE CASCADE,
        seq               INTEGER NOT NULL,
        phase             TEXT NOT NULL,
        level             REAL NOT NULL,
        start_ms          REAL NOT NULL,
        queue_ms          REAL,
        ttft_ms           REAL,
        total_ms          REAL,
        itl_ms            TEXT NOT NULL,    -- JSON array of inter-token gaps (ms)
        prompt_tokens     INTEGER,
        completion_tokens INTEGER,
        finish_reason     TEXT,
        status            INTEGER,
        error_code        TEXT,
        json_ok           INTEGER,
        schema_ok         INTEGER,
        schema_error      TEXT,
        PRIMARY KEY (run_id, seq)
      ) STRICT;
    `,
  },
  {
    version: 7,
    // Evidence reports (core/report): one row per export (the ReportExport as
    // JSON: folder, file digests, signer) and the operator's marks on the
    // manual gates. Each export and each mark is also an audit event.
    name: 'reports',
    up: `
      CREATE TABLE report_exports (
        id          TEXT PRIMARY KEY NOT NULL,
        created_at  INTEGER NOT NULL,
        export      TEXT NOT NULL           -- ReportExport as JSON
      ) STRICT;
      CREATE INDEX report_exports_created ON report_exports (created_at);

      CREATE TABLE report_gates (
        id          TEXT PRIMARY KEY NOT NULL,
        status      TEXT NOT NULL CHECK (status IN ('pass', 'fail', 'pending')),
        note        TEXT NOT NULL,
        marked_by   TEXT NOT NULL,
        marked_at   INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 8,
    // The Proxy view reads the newest rows matching a model, a class and an outcome (RequestLog.query).
    // requests_model_seq was never used: the filter compares models COLLATE NOCASE, which a BINARY index
    // cannot serve, so a model with few rows (or none) read the whole table (130 ms at 1,000,000 rows).
    // Each index here serves one filter combination newest-first; the two partial ones hold only errors
    // (a few per cent of rows), so an error filter reads errors only. ~2 s at 1,000,000 rows, once.
    name: 'requests_filter_indexes',
    up: `
      DROP INDEX requests_model_seq;
      CREATE INDEX requests_model ON requests (model COLLATE NOCASE, seq);
      CREATE INDEX requests_class ON requests (class, seq);
      CREATE INDEX requests_model_class ON requests (model COLLATE NOCASE, class, seq);
      CREATE INDEX requests_errors ON requests (seq) WHERE status >= 400;
      CREATE INDEX requests_errors_model ON requests (model COLLATE NOCASE, seq) WHERE status >= 400;
    `,
  },
  {
    version: 9,
    // A waiting proposal can be withdrawn by the operator (state 'withdrawn'). SQLite cannot change a
    // CHECK constraint in place, so the table is rebuilt with the same columns, rows and indexes.
    name: 'actions_withdrawn_state',
    up: `
      CREATE TABLE actions_next (
        id          TEXT PRIMARY KEY,
        upstream    TEXT NOT NULL,
        kind        TEXT NOT NULL CHECK (kind IN ('wake','sleep','offload','restart')),
        state       TEXT NOT NULL CHECK (state IN ('proposed','approved','rejected','withdrawn','expired','running','verified','failed')),
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL,
        variant     TEXT,
        duration_ms INTEGER,
        view        TEXT NOT NULL
      ) STRICT;
      INSERT INTO actions_next (id, upstream, kind, state, created_at, updated_at, variant, duration_ms, view)
        SELECT id, upstream, kind, state, created_at, updated_at, variant, duration_ms, view FROM actions;
      DROP TABLE actions;
      ALTER TABLE actions_next RENAME TO actions;
      CREATE INDEX actions_upstream ON actions (upstream, state);
      CREATE INDEX actions_created ON actions (created_at);
      CREATE INDEX actions_timing ON actions (upstream, variant, updated_at) WHERE duration_ms IS NOT NULL;
    `,
  },
  {
    version: 10,
    // Delivery attempts to outside notification channels (notify/delivery-log.ts): bounded to the
    // newest rows on insert. No URL, header, signature or secret is ever a column here.
    name: 'notify_deliveries',
    up: `
      CREATE TABLE notify_deliveries (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        at            INTEGER NOT NULL,
        channel_id    TEXT NOT NULL,
        event         TEXT NOT NULL,
        severity      TEXT NOT NULL CHECK (severity IN ('info','warning','critical')),
        title         TEXT NOT NULL,
        status        TEXT NOT NULL CHECK (status IN ('delivered','failed','retrying','skipped-quiet','rate-limited','dropped-overflow')),
        http_status   INTEGER,
        attempt       INTEGER NOT NULL,
        error_code    TEXT,
        error_message TEXT,
        duration_ms   INTEGER
      ) STRICT;
      CREATE INDEX notify_deliveries_channel ON notify_deliveries (channel_id, id);
    `,
  },
  {
    version: 11,
    // Decisions get their own fields (lifecycle/action-queue.ts): reject() and withdraw() used to store
    // the person who decided in `approver`, and reports counted and worded them as approvals. Each row's
    // state is its final decision (the audit log's lifecycle.rejected / .withdrawn / .expired / .approved
    // row for that action says the same): the decider moves to rejectedBy / withdrawnBy, `decision` is set,
    // and a withdrawal's reason moves out of rejectReason (the old default sentence is no reason).
    name: 'actions_decision_fields',
    up: `
      UPDATE actions SET view = json_set(view,
          '$.view.decision', 'rejected',
          '$.view.rejectedBy', json(json_extract(view, '$.view.approver')),
          '$.view.approver', NULL,
          '$.view.withdrawnBy', NULL,
          '$.view.withdrawReason', NULL)
        WHERE state = 'rejected';
      UPDATE actions SET view = json_set(view,
          '$.view.decision', 'withdrawn',
          '$.view.withdrawnBy', json(json_extract(view, '$.view.approver')),
          '$.view.withdrawReason', CASE WHEN json_extract(view, '$.view.rejectReason') = 'withdrawn by the operator' THEN NULL
                                        ELSE json_extract(view, '$.view.rejectReason') END,
          '$.view.approver', NULL,
          '$.view.rejectedBy', NULL,
          '$.view.rejectReason', NULL)
        WHERE state = 'withdrawn';
      UPDATE actions SET view = json_set(view,
          '$.view.decision', CASE WHEN state = 'expired' THEN 'expired'
                                  WHEN state = 'proposed' THEN NULL
                                  WHEN json_type(view, '$.view.approver') = 'object' THEN 'approved'
                                  ELSE NULL END,
          '$.view.rejectedBy', NULL,
          '$.view.withdrawnBy', NULL,
          '$.view.withdrawReason', NULL)
        WHERE state NOT IN ('rejected', 'withdrawn');
    `,
  },
  {
    version: 12,
    // An action the console stopped in the middle of is closed as 'interrupted' (lifecycle/interruption.ts),
    // no longer as 'failed'. Rebuilt as in migration 9 (SQLite cannot change a CHECK in place); rows closed
    // as failed by older versions stay failed.
    name: 'actions_interrupted_state',
    up: `
      CREATE TABLE actions_next (
        id          TEXT PRIMARY KEY,
        upstream    TEXT NOT NULL,
        kind        TEXT NOT NULL CHECK (kind IN ('wake','sleep','offload','restart')),
        state       TEXT NOT NULL CHECK (state IN ('proposed','approved','rejected','withdrawn','expired','running','verified','failed','interrupted')),
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL,
        variant     TEXT,
        duration_ms INTEGER,
        view        TEXT NOT NULL
      ) STRICT;
      INSERT INTO actions_next (id, upstream, kind, state, created_at, updated_at, variant, duration_ms, view)
        SELECT id, upstream, kind, state, created_at, updated_at, variant, duration_ms, view FROM actions;
      DROP TABLE actions;
      ALTER TABLE actions_next RENAME TO actions;
      CREATE INDEX actions_upstream ON actions (upstream, state);
      CREATE INDEX actions_created ON actions (created_at);
      CREATE INDEX actions_timing ON actions (upstream, variant, updated_at) WHERE duration_ms IS NOT NULL;
    `,
  },
  CLIENT_LIMITS_MIGRATION,
  TRACES_MIGRATION,
  CAPTURES_MIGRATION,
  AUDIT_TS_MIGRATION,
];

export const LATEST_SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;
