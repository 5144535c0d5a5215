// The Clients panel's query at the request log's cap: 1,000,000 rows over 30
// days, 20 clients, 4 hosts. Prints each window's time (fill excluded).
// Run: npx tsx test/bench/client-usage-1m.ts [rows]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock, silentLogger } from '../../src-main/core/base/index.js';
import { ClientUsageQuery } from '../../src-main/core/proxy/client-usage.js';
import { RequestLog, createTokenRepository, requestWindows } from '../../src-main/core/proxy/index.js';
import { openStore } from '../../src-main/core/store/index.js';

const ROWS = Number(process.argv[2] ?? 1_000_000);
const NOW = Date.UTC(2026, 11, 20, 12);
const SPAN_MS = 30 * 86_400_000;
const dir = mkdtempSync(join(tmpdir(), 'gc-usage-bench-'));
const clock = new FakeClock(NOW);
const store = openStore({ file: join(dir, 'console.db'), clock });
const tokens = createTokenRepository(store.db, clock);
for (let i = 0; i < 20; i++) tokens.create(`client-${i}`, 'interactive');
const log = new RequestLog({ db: store.db, clock, logger: silentLogger, batchSize: 10_000 });
let t = Date.now();
for (let i = 0; i < ROWS; i++) {
  const failed = i % 20 === 0;
  log.add({
    id: `r${i}`, ts: NOW - SPAN_MS + Math.floor((i / ROWS) * SPAN_MS), client: `client-${i % 20}`, class: 'interactive', endpoint: '/v1/chat/completions',
    model: 'qwen', upstream: failed ? null : `h${i % 4}/qwen`, stream: true, status: failed ? 429 : 200, errorCode: failed ? 'queue_full' : null,
    queueMs: 1, ttftMs: 50, totalMs: 800 + (i % 7) * 300, tokensIn: 100, tokensOut: 200, bytesIn: 500, bytesOut: 2000, replayed: false,
  });
}
log.flush(true);
console.log(`filled ${ROWS} rows in ${Date.now() - t} ms`);
const query = new ClientUsageQuery({
  db: store.db, windows: requestWindows(store.db), tokens: () => tokens.list(), anonymousEnabled: () => true,
  priceOf: (h) => (h === 'h3' ? null : 2.5), flush: () => log.flush(),
});
for (const w of ['1h', '24h', '7d', '30d', 'month'] as const) {
  const times: number[] = [];
  let clients = 0;
  for (let k = 0; k < 3; k++) {
    t = performance.now();
    clients = query.usage(w, NOW).clients.length;
    times.push(performance.now() - t);
  }
  console.log(`${w.padEnd(5)} ${times.map((x) => x.toFixed(0).padStart(6)).join(' ')} ms  (${clients} clients)`);
}
log.dispose();
store.close();
rmSync(dir, { recursive: true, force: true });
