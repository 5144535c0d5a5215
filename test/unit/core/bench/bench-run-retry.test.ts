import { afterEach, describe, expect, it } from 'vitest';
import { BenchScenarioSchema, type BenchScenarioInput } from '../../../../src-preload/contract/index.js';
import { silentLogger, systemClock } from '../../../../src-main/core/base/index.js';
import { BenchRepository, BenchService, type ResolvedTarget } from '../../../../src-main/core/bench/index.js';
import { benchConnectionRetries } from '../../../../src-main/core/bench/http-request.js';
import { openStore, type Store } from '../../../../src-main/core/store/index.js';
import { UpstreamClient } from '../../../../src-main/core/upstream/index.js';
import { startHttplibLikeUpstream, type HttplibLikeUpstream } from '../../../helpers/httplib-like-upstream.js';

// A benchmark run straight against a cpp-httplib-like server whose idle closes
// race the run's requests: open-loop arrivals about one idle timeout apart, so
// a kept-alive connection is often closed just as the next request is written.
// None of those may count as a failed request.

let up: HttplibLikeUpstream | null = null;
let store: Store | null = null;
afterEach(async () => {
  await up?.close();
  store?.close();
  up = null;
  store = null;
});

describe('a benchmark run against a cpp-httplib-like server', () => {
  it('finishes with 0 failed requests while idle closes race its requests', async () => {
    const idleMs = 25;
    up = await startHttplibLikeUpstream({ idleTimeoutMs: idleMs, tokens: 3 });
    store = openStore({ file: ':memory:' });
    const service = new BenchService({ repo: new BenchRepository(store.db, systemClock), clock: systemClock, logger: silentLogger, emitProgress: () => undefined, audit: () => undefined });
    const url = up.url;
    // Each run resolves its target anew, with a client of its own that its release closes (as for a URL target).
    const target = (): ResolvedTarget => {
      const client = UpstreamClient.forUrl(url, { onPrem: null, purpose: 'probe' });
      return { endpoint: { client, path: '/v1/chat/completions', headers: {}, model: 'test-model' }, upstream: null, host: null, serviceId: null, model: 'test-model', slots: null, release: () => void client.destroy() };
    };
    // Arrivals every idleMs − 4 … idleMs + 1 ms, around the server's idle timer, streaming and not.
    const levels = [21, 22, 23, 24, 25, 26].map((gapMs) => Math.round((1000 / gapMs) * 1000) / 1000);
    const run = async (over: Partial<BenchScenarioInput>) => {
      const scenario = BenchScenarioSchema.parse({
        name: 'keep-alive races',
        target: { kind: 'url', baseUrl: `${url}/v1`, model: 'test-model' },
        prompts: { kind: 'synthetic', inputTokens: 8 },
        maxTokens: 3,
        mode: 'open',
        levels,
        perLevel: { kind: 'requests', count: 60 },
        requestTimeoutMs: 10_000,
        ...over,
      });
      const id = service.start(await service.prepare(scenario, async () => target()), 'console');
      return service.whenFinished(id);
    };
    const before = benchConnectionRetries();
    const runs = [await run({ stream: true }), await run({ stream: false })];
    const retried = benchConnectionRetries() - before;
    console.log('bench keep-alive', JSON.stringify({ retried, ...up.stats }));
    for (const r of runs) {
      expect(r.state).toBe('completed');
      for (const l of r.levels) {
        expect(l.errorsByCode).toEqual({});
        expect(l.failed).toBe(0);
        expect(l.completed).toBe(60);
      }
    }
    // The server started each request once (plus the preflight's GET /v1/models per run).
    expect(up.stats.chat).toBe(2 * levels.length * 60);
    expect(up.stats.idleCloses).toBeGreaterThan(0);
    // The closes really raced (without the retry: BENCH_CONNECTION_FAILED).
    expect(retried).toBeGreaterThan(0);
    await service.dispose();
  }, 60_000);
});
