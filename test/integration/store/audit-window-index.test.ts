// A window of the audit log (the report's sections, seqSpan) is found by time
// through an index (migration 16), not by scanning every row of the log.
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src-main/core/base/index.js';
import { openStore, type Store } from '../../../src-main/core/store/index.js';

let store: Store | null = null;
afterEach(() => store?.close());

const plan = (sql: string): string =>
  (store!.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(1, 2, 10) as { detail: string }[]).map((r) => r.detail).join(' | ');

describe('audit window reads', () => {
  it('search the time index for a window, with or without type prefixes', () => {
    store = openStore({ file: ':memory:', clock: new FakeClock(1_700_000_000_000) });
    expect(plan('SELECT * FROM audit_events WHERE ts >= ? AND ts < ? ORDER BY seq LIMIT ?')).toContain('USING INDEX audit_events_ts');
    expect(plan("SELECT * FROM audit_events WHERE ts >= ? AND ts < ? AND (type LIKE 'host.%' ESCAPE '\\') ORDER BY seq LIMIT ?")).toContain('audit_events_ts');
    expect(plan('SELECT MIN(seq) AS lo, MAX(seq) AS hi FROM audit_events WHERE ts >= ? AND ts < ? AND ?')).toContain('audit_events_ts');
  });
});
