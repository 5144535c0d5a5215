// Benchmark (prints figures; not a test): priority under overload. One
// upstream with 4 slots and a fixed service time, 64 batch clients saturating
// it and 4 interactive clients; reports interactive and batch queue waits
// (X-Queue-Ms), requests without an answer, and store rows vs requests sent.
//   npx tsx test/bench/proxy-priority.ts [--seconds N] [--service-ms N]
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { silentLogger, systemClock } from '../../src-main/core/base/index.js';
import { ConfigSchema } from '../../src-main/core/config/index.js';
import { ModelRegistry, ProxyServer, RequestLog, createTokenRepository } from '../../src-main/core/proxy/index.js';
import { openStore } from '../../src-main/core/store/index.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '10' }, 'service-ms': { type: 'string', default: '100' } } });
const SECONDS = Number(values.seconds);
const SERVICE_MS = Number(values['service-ms']);

const upstream = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":9}}');
    }, SERVICE_MS);
  });
});
await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;

const config = ConfigSchema.parse({
  hosts: [{ label: 'gpu', ssh: { host: '127.0.0.1', user: 'x', agent: true }, services: [{ id: 'm', kind: 'vllm', remotePort: 8000, model: 'M', slots: 4 }] }],
});
const dir = mkdtempSync(join(tmpdir(), 'gc-bench-prio-'));
const store = openStore({ file: join(dir, 'bench.db') });
const tokens = createTokenRepository(store.db, systemClock);
const { token } = tokens.create('bench', 'interactive');
const log = new RequestLog({ db: store.db, clock: systemClock, logger: silentLogger });
const proxy = await ProxyServer.start({
  port: 0,
  settings: config.proxy,
  registry: ModelRegistry.fromConfig(config),
  tokens,
  requestLog: log,
  resolver: { resolve: () => ({ ok: true, url: upstreamUrl }) },
});

const pool = new Pool(proxy.origin, { connections: 80 });
const body = JSON.stringify({ model: 'M', messages: [{ role: 'user', content: 'x' }] });
let sent = 0;
let answered = 0;
const statuses = new Map<number, number>();
const waits: Record<'interactive' | 'batch', number[]> = { interactive: [], batch: [] };
const deadline = Date.now() + SECONDS * 1000;

async function client(cls: 'interactive' | 'batch'): Promise<void> {
  while (Date.now() < deadline) {
    sent++;
    const res = await pool.request({
      path: '/v1/chat/completions',
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-priority': cls },
      body,
    });
    await res.body.dump();
    answered++;
    statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
    if (res.statusCode === 200) waits[cls].push(Number(res.headers['x-queue-ms']));
    else await new Promise((r) => setTimeout(r, 50));
  }
}

await Promise.all([...Array.from({ length: 64 }, () => client('batch')), ...Array.from({ length: 4 }, () => client('interactive'))]);
await proxy.close(1000);
log.dispose();
const rows = (store.db.prepare('SELECT COUNT(*) AS n FROM requests').get() as { n: number }).n;
store.close();
await pool.close();
upstream.close();

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : NaN;
};
console.log(`priority under overload — 4 slots, service ${SERVICE_MS} ms, 64 batch + 4 interactive clients, ${SECONDS} s`);
console.log(`interactive: ${waits.interactive.length} answered, queue wait p50 ${pct(waits.interactive, 50)} ms, p95 ${pct(waits.interactive, 95)} ms, max ${Math.max(...waits.interactive)} ms`);
console.log(`batch:       ${waits.batch.length} answered, queue wait p50 ${pct(waits.batch, 50)} ms, p95 ${pct(waits.batch, 95)} ms`);
console.log(`statuses: ${JSON.stringify(Object.fromEntries(statuses))}`);
console.log(`requests sent ${sent}, answered ${answered}, without an answer ${sent - answered}, store rows ${rows} (${rows === sent ? 'equal' : 'DIFFERENT'})`);
console.log(`target: interactive queue-wait p95 ≤ one service time (${SERVICE_MS} ms): ${pct(waits.interactive, 95) <= SERVICE_MS ? 'met' : 'NOT met'}`);
