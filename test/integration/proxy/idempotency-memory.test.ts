import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_IDEMPOTENCY_LIMITS, MAX_STORED_BYTES } from '../../../src-main/core/proxy/index.js';
import { startStub, startStubProxy, type StubProxy } from './helpers.js';

// #26.4: any client with a token can send Idempotency-Keys, and answers run to
// megabytes. The cache is bounded by bytes (64 MiB in all, 16 MiB a client),
// keyed by the token's id, and an answer too large to copy is relayed, never
// replayed as something else.

const MiB = 1024 * 1024;
/** One embeddings answer of 4 MiB, sent from one buffer (the stub itself must not grow). */
const BIG = Buffer.from(JSON.stringify({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: 'x'.repeat(4 * MiB - 80) }], model: 'M' }));
/** Over MAX_STORED_BYTES: relayed, never copied. */
const HUGE = Buffer.from(JSON.stringify({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: 'y'.repeat(MAX_STORED_BYTES + MiB) }], model: 'M' }));

// A real collection before each reading: RSS is then what is held, not what awaits the collector.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const settledRss = async (): Promise<number> => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  return process.memoryUsage().rss;
};

let stub: Awaited<ReturnType<typeof startStub>>;
let p: StubProxy;
let delayMs = 0;
const agent = new Agent({ connections: 4 });

beforeAll(async () => {
  stub = await startStub((req, res, body) => {
    const huge = body.includes('huge');
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(huge ? HUGE : BIG);
    }, delayMs);
  });
  p = await startStubProxy([{ label: 'h', id: 's', model: 'M', url: stub.url, slots: 4 }]);
});
afterAll(async () => {
  await agent.close();
  await p?.close();
  await stub?.close();
});

async function embed(token: string, input: string, key?: string): Promise<{ status: number; replayed: boolean; bytes: number; text?: string }> {
  const r = await request(`${p.proxy.origin}/v1/embeddings`, {
    method: 'POST',
    dispatcher: agent,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    body: JSON.stringify({ model: 'M', input }),
  });
  const buf = Buffer.from(await r.body.arrayBuffer());
  return { status: r.statusCode, replayed: r.headers['idempotent-replayed'] === 'true', bytes: buf.length, ...(buf.length < 4096 ? { text: buf.toString() } : {}) };
}

async function flood(token: string, count: number, keyed: boolean, tag: string): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < count) {
        const i = next++;
        const r = await embed(token, `${tag} ${i}`, keyed ? `${tag}-${i}` : undefined);
        expect(r).toMatchObject({ status: 200, replayed: false, bytes: BIG.length });
      }
    }),
  );
}

describe('the idempotency cache under a flood of large answers', () => {
  // Measured here (2 cores, shared; after forced collections): 60 keyed answers of 4 MiB left the
  // Buffer memory (process.memoryUsage().arrayBuffers) exactly 60 MiB higher — the answers kept —
  // and RSS 114-121 MiB higher, the rest being freed 4 MiB blocks malloc keeps in its arenas; the
  // same flood without keys left RSS within ±4 MiB. Before the byte budget all 240 MiB were kept.
  const BUDGET = DEFAULT_IDEMPOTENCY_LIMITS.budgetBytes;
  const BUFFERS_BOUND = BUDGET + 8 * MiB;
  const RSS_BOUND = 2 * BUDGET + 64 * MiB;

  it('60 distinct keys × 4 MiB from six tokens: the cache keeps at most its budget; Buffer memory grows by at most budget + 8 MiB, RSS by less than 2 × budget + 64 MiB', async () => {
    const tokens = Array.from({ length: 6 }, (_, i) => p.token(`flood-${i}`));
    // Warm up the paths (sockets, pools, JIT) without keys, so the baseline is not the first request's.
    await flood(tokens[0]!, 8, false, 'warm');
    const rssBefore = await settledRss();
    const buffersBefore = process.memoryUsage().arrayBuffers;
    for (const [i, t] of tokens.entries()) await flood(t, 10, true, `flood-${i}`);
    const usage = p.proxy.idempotencyUsage();
    const rssGrown = (await settledRss()) - rssBefore;
    const buffersGrown = process.memoryUsage().arrayBuffers - buffersBefore;
    console.log(
      `idempotency flood: cache ${(usage.bytes / MiB).toFixed(1)} MiB in ${usage.entries} entries, ${usage.evicted} evicted; ` +
        `Buffers +${(buffersGrown / MiB).toFixed(1)} MiB, RSS +${(rssGrown / MiB).toFixed(1)} MiB (bounds ${BUFFERS_BOUND / MiB}, ${RSS_BOUND / MiB} MiB)`,
    );
    // The primary bound: the bytes the cache accounts (six tokens × 3 answers would be 72 MiB: the budget cut it).
    expect(usage.bytes).toBeLessThanOrEqual(BUDGET);
    expect(usage.bytes).toBeGreaterThan(BUDGET / 2);
    expect(usage.entries).toBeLessThanOrEqual(BUDGET / (4 * MiB));
    expect(usage.evicted).toBe(60 - usage.entries);
    // The process: Buffer memory closely, RSS coarsely (allocator slack).
    expect(buffersGrown).toBeLessThanOrEqual(BUFFERS_BOUND);
    expect(rssGrown).toBeLessThan(RSS_BOUND);
    // The newest answer of the last token is still replayed; the first token's oldest runs again.
    expect(await embed(tokens[5]!, 'flood-5 9', 'flood-5-9')).toMatchObject({ status: 200, replayed: true, bytes: BIG.length });
    expect(await embed(tokens[0]!, 'flood-0 0', 'flood-0-0')).toMatchObject({ status: 200, replayed: false, bytes: BIG.length });
  }, 120_000);

  it('a token re-created under a revoked token’s name does not get the revoked token’s answers', async () => {
    const old = p.token('reused-name');
    const a = await embed(old, 'same body', 'same-key');
    expect(a).toMatchObject({ status: 200, replayed: false });
    expect(await embed(old, 'same body', 'same-key')).toMatchObject({ status: 200, replayed: true });
    p.tokens.revoke('reused-name');
    const fresh = p.token('reused-name');
    const runs = stub.requests;
    expect(await embed(fresh, 'same body', 'same-key')).toMatchObject({ status: 200, replayed: false, bytes: BIG.length });
    expect(stub.requests).toBe(runs + 1);
  });

  it('an answer over 8 MiB is relayed to the first, its waiting twin and a later repeat, each from a run of its own; never replayed as an error with 200', async () => {
    const token = p.token('huge');
    delayMs = 150;
    try {
      const runs = stub.requests;
      const [first, twin] = await Promise.all([embed(token, 'huge body', 'huge-key'), embed(token, 'huge body', 'huge-key')]);
      const later = await embed(token, 'huge body', 'huge-key');
      for (const r of [first, twin, later]) expect(r).toMatchObject({ status: 200, replayed: false, bytes: HUGE.length });
      expect(stub.requests).toBe(runs + 3);
      expect(p.proxy.idempotencyUsage().notKept).toBeGreaterThanOrEqual(2);
    } finally {
      delayMs = 0;
    }
  });
});
