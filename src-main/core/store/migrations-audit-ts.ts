// Migration 16: audit rows by time. Readers of a window (the evidence report's
// health, lifecycle and alert sections, seqSpan) asked `ts >= ? AND ts < ?`
// and scanned the whole log for it: on 100,000 rows, five such reads were
// ~0.3 s of a 7-day report preview. The log is append-only; the index changes
// no row and nothing in the chain.
// Shaped as migrations.ts's Migration without importing it: that file lists this one (no import cycle).
export const AUDIT_TS_MIGRATION = {
  version: 16,
  name: 'audit_events_ts',
  up: `
    CREATE INDEX audit_events_ts ON audit_events (ts);
  `,
} as const;
