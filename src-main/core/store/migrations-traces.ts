// Migration 14: the client's trace on each request row. Clients reuse their
// request ids, so the trace cannot be the row's UNIQUE id; it is its own column,
// NULL when the client sent none (the row's id is then the trace), with an index
// over the rows that have one only — requests without a client trace add
// nothing to it on the proxy's hot path.
// Shaped as migrations.ts's Migration without importing it: that file lists this one (no import cycle).
export const TRACES_MIGRATION = {
  version: 14,
  name: 'requests_trace_id',
  up: `
    ALTER TABLE requests ADD COLUMN trace_id TEXT;
    CREATE INDEX requests_trace ON requests (trace_id, seq) WHERE trace_id IS NOT NULL;
  `,
} as const;
