// The Clients panel's query at the request log's cap: 1,000,000 rows over 30
// days, 20 clients, 4 hosts. Prints each window's time (fill excluded).
// Wall time and this process's CPU time (the box may be shared: CPU time is the steadier figure).
// --covering-index adds the index a migration could bring (ts plus every column the queries read)
// to see what it saves. Run: npx tsx test/bench/client-usage-1m.ts [rows] [--covering-index]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock, silentLogger } from '../../src-main/core/base/index.js';
import { ClientUsageQuery } from '../../src-main/core/proxy/client-usage.js';
import { RequestLog, createTokenRepository, requestWindows } from '../../src-main/core/proxy/index.js';
import { openStore } from '../../src-main/core/store/index.js';

const ROWS = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 1_000_000);
const COVERING = process.argv.includes('--covering-index');
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
if (COVERING) {
  t = Date.now();
  store.db.exec('CREATE INDEX requests_usage ON requests (ts, client, status, error_code, tokens_in, tokens_out, total_ms, upstream, model)');
  console.log(`covering index built in ${Date.now() - t} ms`);
}
const query = new ClientUsageQuery({
  db: store.db, windows: requestWindows(store.db), tokens: () => tokens.list(), anonymousEnabled: () => true,
  priceOf: (h) => (h === 'h3' ? null : 2.5), flush: () => log.flush(),
});
for (const w of ['1h', '24h', '7d', '30d', 'month'] as const) {
  const times: string[] = [];
  let clients = 0;
  for (let k = 0; k < 3; k++) {
    t = performance.now();
    const cpu = process.cpuUsage();
    // Each run a minute later than the last, past the short windows' cost reuse (the long ones reuse it: runs 2-3 show that).
    clients = query.usage(w, NOW + k * 60_000).clients.length;
    const used = process.cpuUsage(cpu);
    times.push(`${(performance.now() - t).toFixed(0)}/${((used.user + used.system) / 1000).toFixed(0)}`);
  }
  console.log(`${w.padEnd(5)} wall/cpu ms: ${times.map((x) => x.padStart(11)).join(' ')}  (${clients} clients)`);
}
log.dispose();
store.close();
rmSync(dir, { recursive: true, force: true });
