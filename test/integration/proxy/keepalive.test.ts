import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { staleConnectionRetries } from '../../../src-main/core/proxy/upstream-exchange.js';
import { KEEP_ALIVE_MS, MAX_REQUESTS_PER_CONNECTION } from '../../../src-main/core/upstream/index.js';
import { chatRequest, driveRacingLoad, startHttplibLikeUpstream, type ChatTarget, type HttplibLikeOptions, type LoadFailure } from '../../helpers/httplib-like-upstream.js';
import { startStubProxy } from './helpers.js';

// The proxy in front of an upstream that closes connections like llama-server's
// cpp-httplib (idle after 5 s, after 100 requests, `Keep-Alive: timeout=5,
// max=100`). A request that meets such a close before its answer began is sent
// again on a fresh connection: the client sees nothing of it.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(upstream: HttplibLikeOptions, slots = 16) {
  const up = await startHttplibLikeUpstream(upstream);
  const p = await startStubProxy([{ label: 'h', id: 's', model: 'M', url: up.url, slots }]);
  const client = new Agent({ connections: 32 });
  cleanups.push(() => up.close(), () => p.close(), () => client.close());
  const target: ChatTarget = { url: `${p.proxy.url}/chat/completions`, headers: { authorization: `Bearer ${p.token('t', 'interactive')}` }, model: 'M', dispatcher: client };
  return { up, p, target };
}

describe('proxy against a cpp-httplib-like upstream', () => {
  it('2,000 requests at concurrency 16, half streaming, idle closes racing them: no failure, some retried on a fresh connection', async () => {
    const idleMs = 200;
    const { up, p, target } = await setup({ idleTimeoutMs: idleMs });
    const retriesBefore = staleConnectionRetries();
    const { failures, issued } = await driveRacingLoad(target, { total: 2_000, concurrency: 16, perRound: 2, idleMs });
    const retried = staleConnectionRetries() - retriesBefore;
    console.log('keepalive proxy', JSON.stringify({ retried, ...up.stats }));
    expect(issued).toBe(2_000);
    expect(failures).toEqual([]);
    // The closes really raced: without the retry these were 502 upstream_unreachable (read ECONNRESET).
    expect(retried).toBeGreaterThan(0);
    expect(up.stats.idleCloses).toBeGreaterThan(0);
    // Nothing was started twice: a retried request had never been read by the upstream.
    expect(up.stats.chat).toBe(2_000);
    expect(p.rows()).toBeGreaterThanOrEqual(2_000);
  }, 120_000);

  it(`closes a connection after ${MAX_REQUESTS_PER_CONNECTION + 1} requests, before the upstream's 100`, async () => {
    const { up, target } = await setup({}, 4);
    const failures: LoadFailure[] = [];
    let n = 0;
    await Promise.all(
      Array.from({ length: 2 }, async () => {
        while (n < 400) {
          const f = await chatRequest(target, n++);
          if (f) failures.push(f);
        }
      }),
    );
    console.log('keepalive max requests', JSON.stringify(up.stats));
    expect(failures).toEqual([]);
    // undici's maxRequestsPerClient N lets N + 1 requests through, the last with Connection: close.
    expect(up.stats.maxOnOneConnection).toBe(MAX_REQUESTS_PER_CONNECTION + 1);
    expect(up.stats.clientAskedClose).toBeGreaterThan(0);
    expect(up.stats.maxCloses).toBe(0);
  }, 60_000);

  it(`closes an idle connection itself after ${KEEP_ALIVE_MS} ms even when the upstream announces a longer keep-alive`, async () => {
    // The upstream says it keeps connections 10 minutes, and keeps them 5 s: we must not believe it.
    const { up, target } = await setup({ idleTimeoutMs: 5_000, announcedTimeoutS: 600 });
    expect(await chatRequest(target, 1)).toBeNull();
    expect(up.stats.connections).toBe(1);
    await new Promise((r) => setTimeout(r, KEEP_ALIVE_MS + 1_500));
    expect(up.stats.closedByClient).toBe(1);
    expect(up.stats.idleCloses).toBe(0);
  }, 20_000);
});
