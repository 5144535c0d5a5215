// The Proxy view's request queries on a real SQLite file: every filter
// combination returns exactly the newest matching rows, and reads them through
// an index that holds only rows that can match (no full-table walk for a rare
// model or an error filter). The retention pass with nothing to delete, and a
// table within its row cap, costs index probes only.
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { silentLogger } from '../../../src-main/core/base/index.js';
import { RequestLog, requestQuerySql, type RequestRecord } from '../../../src-main/core/proxy/request-log.js';
import { openStore, type Store } from '../../../src-main/core/store/index.js';
import type { RequestQuery } from '../../../src-preload/contract/index.js';
import { SimClock, prng } from '../../bench/lib/store-growth-fill.js';
import { tempDir } from '../../unit/core/store/helpers.js';

const T0 = 1_700_000_000_000;
const MODELS = ['Qwen3.6-27B-FP8', 'Gemma-3-27B-it', 'Rare-Model'];
const CLASSES = ['interactive', 'system', 'batch'] as const;

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function filled(rows: number): { store: Store; log: RequestLog; records: RequestRecord[] } {
  const { dir, cleanup } = tempDir('gpu-console-requests-');
  const clock = new SimClock(T0 + rows * 1000);
  const store = openStore({ file: join(dir, 'gpu-console.db'), clock });
  const log = new RequestLog({ db: store.db, clock, logger: silentLogger });
  cleanups.push(cleanup, () => store.close(), () => log.dispose());
  const rng = prng(7);
  const records: RequestRecord[] = [];
  for (let i = 0; i < rows; i++) {
    const r = rng();
    // the rare model only ever sends batch traffic, and fails 1 time in 10
    const model = r < 0.01 ? MODELS[2]! : MODELS[i % 2]!;
    const rec: RequestRecord = {
      id: `r${i}`,
      ts: T0 + i * 1000,
      client: 'c',
      class: model === MODELS[2] ? 'batch' : CLASSES[i % 3]!,
      endpoint: '/v1/chat/completions',
      model,
      upstream: 'h/s',
      stream: false,
      status: rng() < (model === MODELS[2] ? 0.1 : 0.04) ? 502 : 200,
      errorCode: null,
      queueMs: 0,
      ttftMs: null,
      totalMs: 1,
      tokensIn: 1,
      tokensOut: 1,
      bytesIn: 1,
      bytesOut: 1,
      replayed: false,
    };
    records.push(rec);
    log.add(rec);
  }
  log.flush();
  return { store, log, records };
}

const ALL_QUERIES: RequestQuery[] = [];
for (const model of [undefined, MODELS[0]!.toLowerCase(), MODELS[2]!, 'no-such-model'])
  for (const cls of [undefined, 'interactive', 'batch'] as const)
    for (const outcome of ['all', 'ok', 'error'] as const)
      ALL_QUERIES.push({ limit: 50, outcome, ...(model ? { model } : {}), ...(cls ? { class: cls } : {}) });

describe('Proxy view request queries', () => {
  it('every filter combination returns the newest matching rows (model matched without case), pages with beforeSeq', () => {
    const { log, records } = filled(6_000);
    const seqOf = new Map(records.map((r, i) => [r.id, i + 1]));
    for (const q of [...ALL_QUERIES, ...ALL_QUERIES.map((q) => ({ ...q, beforeSeq: 3_000 }))]) {
      const expected = records
        .filter((r) => (q.beforeSeq === undefined || seqOf.get(r.id)! < q.beforeSeq) && (!q.model || r.model?.toLowerCase() === q.model.toLowerCase()) && (!q.class || r.class === q.class) && (q.outcome === 'all' || (q.outcome === 'ok' ? r.status < 400 : r.status >= 400)))
        .reverse()
        .slice(0, q.limit)
        .map((r) => r.id);
      expect(log.query(q).map((r) => r.id), JSON.stringify(q)).toEqual(expected);
    }
  });

  it('reads through an index for every filter, and an error filter reads only error rows', () => {
    const { store } = filled(200);
    for (const q of ALL_QUERIES) {
      const { sql, params } = requestQuerySql(q);
      const plan = (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map((p) => p.detail).join('; ');
      if (!q.model && !q.class && q.outcome !== 'error') expect(plan).toBe('SCAN requests'); // newest first by seq: stops after `limit` rows
      else expect(plan, JSON.stringify(q)).toMatch(/USING INDEX requests_(model|class|model_class|errors|errors_model)\b/);
      if (q.outcome === 'error') expect(plan).toMatch(/requests_errors/);
      expect(plan).not.toMatch(/TEMP B-TREE/); // never a sort of the matches
    }
  });

  it('the retention pass with nothing to delete and a table within its cap reads no rows; the count stays exact', async () => {
    const { store, records } = filled(3_000);
    const clock = new SimClock(records[records.length - 1]!.ts);
    const pruning = new RequestLog({ db: store.db, clock, logger: silentLogger, retention: () => ({ maxAgeMs: 86_400_000 * 365, maxRows: 3_000 }) });
    cleanups.push(() => pruning.dispose());
    expect(await pruning.prune()).toBe(0);
    const steps = (sql: string, ...p: unknown[]) => (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...p) as { detail: string }[]).map((x) => x.detail).join('; ');
    expect(steps('SELECT seq FROM requests WHERE ts < ? ORDER BY ts LIMIT ?', 0, 10)).toMatch(/USING COVERING INDEX requests_ts/);
    expect(pruning.retentionView().rowsKept).toBe(3_000);
    // over the cap by 500: the oldest 500 go, and the count follows without a recount
    for (let i = 0; i < 500; i++) pruning.add({ ...records[0]!, id: `extra-${i}`, ts: clock.now() + i });
    expect(pruning.retentionView().rowsKept).toBe(3_500);
    expect(await pruning.prune()).toBe(500);
    expect(pruning.retentionView()).toMatchObject({ rowsKept: 3_000, oldestTs: records[500]!.ts, lastPrunedRows: 500 });
  });
});
