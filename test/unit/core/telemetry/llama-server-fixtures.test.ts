import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { ServiceDeriver, LlamaServerHttpSource, readLlamaServerMetrics, parsePrometheusText } from '../../../../src-main/core/telemetry/index.js';
import { ServiceConfigSchema } from '../../../../src-main/core/config/index.js';
import { figuresView } from '../../../../src-main/core/fleet/index.js';
import { serviceStateFromReading } from '../../../helpers/fleet-state.js';
import { fakeGet } from './fake-http.js';

// The real answers of llama-server b10573 (test/fixtures/llama-server/SOURCE.txt):
// 4 slots of n_ctx 1024, /metrics with --metrics, four streams running in
// slots-busy.json / metrics-busy.txt. What the console makes of them is what
// an operator sees on such a server.

const dir = join(import.meta.dirname, '../../../fixtures/llama-server');
const fixture = (name: string): string => readFileSync(join(dir, name), 'utf8');
const config = ServiceConfigSchema.parse({ id: 'tiny', kind: 'llama-server', remotePort: 18181, model: 'tiny-random-llama', slots: 4 });

function source(routes: Record<string, string | { status: number; text: string }>, clock = new FakeClock(1_796_042_684_000)) {
  const table = Object.fromEntries(Object.entries(routes).map(([k, v]) => [k, typeof v === 'string' ? { status: 200, text: v } : v]));
  return { clock, src: new LlamaServerHttpSource({ id: 'h/tiny', get: fakeGet(table), clock, model: config.model }) };
}

describe('llama-server b10573 recorded answers', () => {
  it('busy: KV % estimated from /slots, awake from /props, 4 running, version, slots agree with config', async () => {
    const { src } = source({
      '/health': fixture('health.json'),
      '/slots': fixture('slots-busy.json'),
      '/props': fixture('props.json'),
      '/metrics': fixture('metrics-busy.txt'),
      '/models': fixture('models.json'),
    });
    const r = await src.scrape();
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const s = r.service!;
    expect(s.sleepState).toBe('awake');
    expect(s.running).toBe(4);
    expect(s.slotsReported).toBe(4);
    expect(s.version).toMatch(/^b10573-/);
    expect(s.kvEstimated).toBe(true);
    expect(s.kvCapacityTokens).toBe(4 * 1024);
    // the issue saw 18–33 % of the context in use on this server
    expect(s.kvCacheUsage).toBeGreaterThan(0.05);
    expect(s.kvCacheUsage).toBeLessThan(0.5);
    expect(s.routerModels).toBeNull();
    const f = new ServiceDeriver().push(s, r.atMs);
    const view = figuresView(serviceStateFromReading('h', config, s, f, src, r.atMs));
    expect(view.kvCachePct).not.toBeNull();
    expect(view.kvCacheEstimated).toBe(true);
    expect(view.sleep).toBe('awake');
    expect(view.sleepControl).toBe('automatic');
    expect(view.slotsReported).toBe(config.slots);
    expect(view.source).toMatchObject({ kind: 'llama-server', atMs: r.atMs });
  });

  it('idle: 0 running, KV 0 %, awake; the metrics counters read (cached prompt tokens apart)', async () => {
    const { src } = source({ '/health': fixture('health.json'), '/slots': fixture('slots.json'), '/props': fixture('props.json'), '/metrics': fixture('metrics-idle-after-load.txt') });
    const r = await src.scrape();
    if (!r.ok) throw new Error(r.stale.message);
    expect(r.service).toMatchObject({ running: 0, kvCacheUsage: 0, sleepState: 'awake', waiting: 0, promptTokensTotal: 291 + 229, promptTokensCachedTotal: 229, generationTokensTotal: 6192 });
    // all-zero draft counters: no speculative decoding, not "0 % accepted"
    expect(r.service!.specDraftTokensTotal).toBeNull();
    const m = readLlamaServerMetrics(parsePrometheusText(fixture('metrics-busy-deferred.txt')).families);
    expect(m).toMatchObject({ running: 4, waiting: 2 });
  });

  it('loading: /health 503 "Loading model" is stale with TELEMETRY_SERVER_LOADING', async () => {
    const { src } = source({ '/health': { status: 503, text: fixture('health-loading-503.json') } });
    const r = await src.scrape();
    expect(r.ok ? null : r.stale.code).toBe('TELEMETRY_SERVER_LOADING');
  });

  it('a /slots of an unexpected shape or size is counted unreadable; the rest still reads', async () => {
    const huge = JSON.stringify(Array.from({ length: 5000 }, (_, id) => ({ id, n_ctx: 1, is_processing: false })));
    for (const slots of ['{"slots": "nope"}', huge, '[{"id":"zero"}]']) {
      const { src } = source({ '/health': fixture('health.json'), '/slots': slots, '/props': fixture('props.json') });
      const r = await src.scrape();
      if (!r.ok) throw new Error(r.stale.message);
      expect(r.unreadable).toBeGreaterThan(0);
      expect(r.issues?.[0]).toMatch(/^TELEMETRY_UNEXPECTED_SHAPE: GET \/slots/);
      expect(r.service!.sleepState).toBe('awake');
      expect(r.service!.slotsReported).toBe(4);
    }
  });

  it('metrics cut mid-line: the lines before the cut are read, the cut counted', async () => {
    const text = fixture('metrics-busy.txt');
    const cut = text.slice(0, text.indexOf('llamacpp:requests_processing 4') + 'llamacpp:requests_proc'.length);
    const { src } = source({ '/health': fixture('health.json'), '/slots': fixture('slots-busy.json'), '/props': fixture('props.json'), '/metrics': cut });
    const r = await src.scrape();
    if (!r.ok) throw new Error(r.stale.message);
    expect(r.unreadable).toBeGreaterThan(0);
    expect(r.issues).toContainEqual(expect.stringMatching(/^TELEMETRY_UNPARSEABLE: GET \/metrics: 1 line/));
    expect(r.service!.generationTokensTotal).toBeGreaterThanOrEqual(2608);
    // running falls back to the slots when the gauge was cut
    expect(r.service!.running).toBe(4);
  });
});
