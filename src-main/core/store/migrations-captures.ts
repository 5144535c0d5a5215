// Migration 15: captured requests (proxy/capture-store.ts). One row per
// captured request: the request row's id (and trace id) to link them, the
// figures of each body (size, kept bytes, truncation, encoding) as JSON, the
// redacted headers and text, and the bytes kept, which the retention by bytes counts.
// Not typed by an import of migrations.ts (which lists it): that would be an import cycle; the
// MIGRATIONS array checks its shape.
export const CAPTURES_MIGRATION = {
  version: 15,
  name: 'proxy_captures',
  up: `
    CREATE TABLE captures (
      id              INTEGER PRIMARY KEY,
      ts              INTEGER NOT NULL,      -- the request's arrival, ms epoch
      request_id      TEXT NOT NULL,         -- requests.id
      trace_id        TEXT,
      client          TEXT NOT NULL,
      model           TEXT,
      upstream        TEXT,
      endpoint        TEXT NOT NULL,
      status          INTEGER NOT NULL,
      error_code      TEXT,
      reason          TEXT NOT NULL CHECK (reason IN ('failure', 'sample')),
      request_meta    TEXT NOT NULL,         -- JSON CaptureBodyMeta
      request_headers TEXT NOT NULL,         -- JSON, credentials redacted
      request_text    TEXT,                  -- redacted; NULL when not text
      answer_meta     TEXT NOT NULL,
      answer_headers  TEXT NOT NULL,
      answer_text     TEXT,
      stored_bytes    INTEGER NOT NULL       -- kept text bytes of both bodies
    ) STRICT;
    CREATE INDEX captures_ts ON captures (ts);
    CREATE INDEX captures_request ON captures (request_id);
  `,
} as const;
