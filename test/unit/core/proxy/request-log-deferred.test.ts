import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { RequestLog, type RequestRecord } from '../../../../src-main/core/proxy/index.js';
import { openStore, type Store } from '../../../../src-main/core/store/index.js';
import { tempDir } from '../store/helpers.js';
import { requestRecord } from '../../../helpers/request-records.js';

// Issue #31 item 2: a full batch of request rows is written after the request that filled it, on the
// next turn of the event loop, not inside it; a caller adding rows without yielding still never
// holds more than a few batches, and nothing is dropped while writes succeed.

const record = (i: number): RequestRecord => requestRecord(i);

let store: Store | undefined;
let log: RequestLog | undefined;
let cleanup: (() => void) | undefined;
afterEach(() => {
  log?.dispose();
  store?.close();
  cleanup?.();
});

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function open(): RequestLog {
  const t = tempDir();
  cleanup = t.cleanup;
  const clock = new FakeClock();
  store = openStore({ file: join(t.dir, 'gpu-console.db'), clock });
  log = new RequestLog({ db: store.db, clock, logger: silentLogger, batchSize: 8, flushIntervalMs: 60_000 });
  return log;
}

describe('RequestLog batches', () => {
  it('writes a full batch on the next turn of the event loop, not inside add()', async () => {
    const log = open();
    for (let i = 0; i < 8; i++) log.add(record(i));
    expect(log.writtenCount).toBe(0);
    expect(log.pendingCount).toBe(8);
    await nextTurn();
    await nextTurn();
    expect(log.writtenCount).toBe(8);
    expect(log.pendingCount).toBe(0);
  });

  it('writes at once when rows keep coming without a turn of the loop (4 batches), and drops none', () => {
    const log = open();
    for (let i = 0; i < 100; i++) log.add(record(i));
    expect(log.pendingCount).toBeLessThan(32);
    expect(log.writtenCount + log.pendingCount).toBe(100);
    expect(log.counts().dropped).toBe(0);
    log.flush();
    expect(log.query({ limit: 200, outcome: 'all' })).toHaveLength(100);
  });
});
