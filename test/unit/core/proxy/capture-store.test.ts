import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { ConfigSchema } from '../../../../src-main/core/config/index.js';
import { CaptureStore } from '../../../../src-main/core/proxy/capture-store.js';
import type { PendingCapture } from '../../../../src-main/core/proxy/capture-tap.js';
import { openStore, type Store } from '../../../../src-main/core/store/index.js';
import { tempDir } from '../store/helpers.js';

// The captures table (migration 15): redacted on the way in, kept by days, rows and bytes in the
// background, and on a full data folder captures wait in a bounded backlog, the oldest dropped and counted.

const T0 = 1_700_000_000_000;
const TOKEN = 'gcp_' + 'T'.repeat(43);
const KEY = 'sk-upstream-key-0123456789';

function pending(i: number, over: Partial<PendingCapture> = {}, answerText = `{"error":{"message":"boom ${i}"}}`): PendingCapture {
  const req = Buffer.from(`{"model":"m","messages":[{"role":"user","content":"hi ${i} ${TOKEN}"}]}`);
  const ans = Buffer.from(answerText);
  return {
    ts: T0 + i,
    requestId: `req_${i}`,
    traceId: i % 2 ? `trace-${i}` : null,
    client: i % 2 ? 'app' : 'batch-job',
    model: 'm',
    upstream: 'h/s',
    endpoint: '/v1/chat/completions',
    status: 500,
    errorCode: 'upstream_error',
    reason: 'failure',
    clientToken: TOKEN,
    request: { bytes: req, sizeBytes: req.length, truncated: false, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } },
    answer: { bytes: ans, sizeBytes: ans.length, truncated: false, headers: { 'content-type': 'application/json' } },
    ...over,
  };
}

type Retention = { days: number; rows: number; bytes: number };
let settings: ReturnType<typeof ConfigSchema.parse>['proxy']['capture'];
let store: Store | undefined;
let kept: CaptureStore | undefined;
let cleanup: (() => void) | undefined;
afterEach(async () => {
  await kept?.dispose();
  store?.close();
  cleanup?.();
  kept = store = cleanup = undefined;
});

function open(retention: Partial<Retention> = {}, extra: { backlogBytes?: number; file?: string } = {}): { clock: FakeClock; kept: CaptureStore; store: Store } {
  const clock = new FakeClock(T0 + 1_000);
  settings = ConfigSchema.parse({ hosts: [], proxy: { capture: { enabled: true, retention } } }).proxy.capture;
  store = openStore({ file: extra.file ?? ':memory:', clock, storageRecoverFreeBytes: 0 });
  kept = new CaptureStore({
    db: store.db,
    clock,
    logger: silentLogger,
    health: store.health,
    settings: () => settings,
    upstreamSecrets: async (upstream) => (upstream === 'h/s' ? [KEY] : []),
    flushIntervalMs: 60_000,
    pruneIntervalMs: 100 * 86_400_000,
    retryMs: 1_000,
    ...(extra.backlogBytes !== undefined ? { backlogBytes: extra.backlogBytes } : {}),
  });
  return { clock, kept, store };
}

describe('CaptureStore', () => {
  it('stores redacted bodies and headers, lists newest first with sizes only, filters', async () => {
    const { kept } = open();
    expect(kept.counts()).toMatchObject({ rowsKept: 0, bytesKept: 0, oldestTs: null });
    kept.add(pending(1, {}, `{"error":"invalid key ${KEY}"}`));
    kept.add(pending(2));
    await kept.flush();
    // Kept current by the store's own writes (no recount), and equal to a full count.
    const counted = store!.db.prepare('SELECT COUNT(*) AS n, SUM(stored_bytes) AS b FROM captures').get() as { n: number; b: number };
    expect(kept.counts()).toMatchObject({ rowsKept: 2, bytesKept: counted.b, oldestTs: T0 + 1 });
    const list = kept.list({ limit: 10 });
    expect(list.map((c) => c.requestId)).toEqual(['req_2', 'req_1']);
    expect(list[1]).toMatchObject({ traceId: 'trace-1', client: 'app', status: 500, reason: 'failure', request: { encoding: 'utf8', truncated: false } });
    expect(list[1]).not.toHaveProperty('request.text');
    const [d] = kept.details({ ids: [list[1]!.id] });
    expect(d!.request.text).toContain('hi 1 [redacted]');
    expect(d!.request.headers).toEqual({ authorization: '[redacted]', 'content-type': 'application/json' });
    expect(d!.answer.text).toBe('{"error":"invalid key [redacted]"}');
    expect(JSON.stringify(kept.details({ query: { limit: 10 } }))).not.toContain(TOKEN);
    expect(kept.list({ limit: 10, client: 'batch-job' }).map((c) => c.requestId)).toEqual(['req_2']);
    expect(kept.list({ limit: 10, requestId: 'req_1' })).toHaveLength(1);
    expect(kept.list({ limit: 10, beforeId: list[0]!.id }).map((c) => c.requestId)).toEqual(['req_1']);
  });

  it('retention by days deletes what is older, by rows keeps the newest, by bytes keeps the newest within the cap', async () => {
    const { clock, kept } = open({ days: 1, rows: 1_000, bytes: 1024 * 1024 });
    for (let i = 0; i < 5; i++) kept.add(pending(i));
    await kept.flush();
    clock.advance(86_400_000 - 1_000 + 3); // captures 0..2 are now older than a day
    expect(await kept.prune()).toBe(3);
    expect(kept.list({ limit: 10 }).map((c) => c.requestId)).toEqual(['req_4', 'req_3']);

    settings = { ...settings, retention: { days: 365, rows: 1, bytes: 1024 * 1024 } };
    expect(await kept.prune()).toBe(1);
    expect(kept.list({ limit: 10 }).map((c) => c.requestId)).toEqual(['req_4']);

    for (let i = 10; i < 20; i++) kept.add(pending(i));
    await kept.flush();
    const one = kept.counts().bytesKept / kept.counts().rowsKept;
    settings = { ...settings, retention: { days: 365, rows: 1_000, bytes: Math.floor(one * 3.5) } };
    await kept.prune();
    expect(kept.list({ limit: 20 }).map((c) => c.requestId)).toEqual(['req_19', 'req_18', 'req_17']);
    expect(kept.counts()).toMatchObject({ rowsKept: 3, lastPrunedAt: clock.now() });
    expect(kept.counts().bytesKept).toBeLessThanOrEqual(one * 3.5);
  });

  it('full data folder: captures wait within the backlog, the oldest are dropped and counted, the health names the writer; space back: written', async () => {
    const t = tempDir();
    cleanup = t.cleanup;
    const big = (i: number) => pending(i, {}, 'x'.repeat(4_000));
    const { clock, kept, store } = open({}, { backlogBytes: 3 * 4_200, file: join(t.dir, 'gpu-console.db') });
    kept.add(big(0));
    await kept.flush();
    store.db.pragma(`max_page_count = ${store.db.pragma('page_count', { simple: true }) as number}`);
    for (let i = 1; i <= 6; i++) kept.add(big(i));
    expect(kept.counts()).toMatchObject({ pending: 3, dropped: 3 });
    await kept.flush();
    expect(kept.counts()).toMatchObject({ rowsKept: 1, pending: 3, dropped: 3 });
    expect(store.health.view()).toMatchObject({ state: 'full', failing: [{ writer: 'captures', code: 'SQLITE_FULL', dropped: 3, pending: 3 }] });
    store.db.pragma('max_page_count = 1073741823');
    clock.advance(1_000);
    await kept.flush();
    expect(kept.list({ limit: 10 }).map((c) => c.requestId)).toEqual(['req_6', 'req_5', 'req_4', 'req_0']);
    expect(kept.counts()).toMatchObject({ pending: 0, dropped: 3 });
  });
});
