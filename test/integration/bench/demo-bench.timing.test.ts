import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BenchScenarioSchema, type BenchProgress, type BenchScenarioInput } from '../../../src-preload/contract/index.js';
import { createApi, type Api } from '../../../src-main/core/api.js';
import type { App } from '../../../src-main/core/app.js';
import { silentLogger } from '../../../src-main/core/base/index.js';
import { startDemoConsole, waitForTunnels } from '../proxy/helpers.js';

// The demo host's configured behaviour is the truth: l20-poc/qwen has 4 slots
// at 17.5 tok/s per sequence; with decodeSpeedFactor F each sequence decodes at
// 17.5·F tok/s, so the aggregate is min(c, 4) · 17.5 · F.

const F = Number(process.env.BENCH_F ?? 64);
/** Output tokens per request: about 1.8 s at 17.5·F tok/s. */
const T = Number(process.env.BENCH_T ?? 2048);
const PER_SEQ = 17.5 * F;
const SLOTS = 4;

let c: Awaited<ReturnType<typeof startDemoConsole>>;
let app: App;
let api: Api;

beforeAll(async () => {
  c = await startDemoConsole({ decodeSpeedFactor: F });
  app = c.app;
  api = createApi(app, silentLogger);
  await waitForTunnels(app);
}, 30_000);
afterAll(async () => {
  api?.dispose();
  await c?.close();
});

const scenario = (over: Partial<BenchScenarioInput>) =>
  BenchScenarioSchema.parse({
    name: 'test',
    target: { kind: 'tunnel', host: 'l20-poc', serviceId: 'qwen' },
    prompts: { kind: 'synthetic', inputTokens: 32 },
    maxTokens: 128,
    ignoreEos: true,
    levels: [1],
    perLevel: { kind: 'requests', count: 2 },
    ...over,
  });

async function runToEnd(s: ReturnType<typeof scenario>) {
  const id = await app.bench.start(s, 'test');
  return app.bench.service.whenFinished(id);
}

describe('bench against the demo fleet', () => {
  it('measures aggregate tok/s within 5% of the configured rate at c = 1, 2, 4, 8, and TTFT jumps past the slots', async () => {
    // Long outputs (ignore_eos) so a request's fixed costs (SSH tunnel, HTTP) weigh little against decoding.
    const long = { maxTokens: T, warmupRequests: 1 };
    // Two rounds per level: a level of one request is one sample, and one slow first token (GC, a busy
    // CI core) then moves c=1's tok/s by several percent.
    const high = await runToEnd(scenario({ ...long, levels: [1, 2, 4, 8], perLevel: { kind: 'rounds', rounds: 2 } }));
    expect(high.state).toBe('completed');
    const levels = high.levels;
    const figures = levels.map((l) => ({ c: l.level, tokS: l.outputTokPerS!, expected: Math.min(l.level, SLOTS) * PER_SEQ, ttftP95: l.ttftP95Ms! }));
    console.log('bench figures', JSON.stringify(figures.map((f) => ({ ...f, ratio: +(f.tokS / f.expected).toFixed(3) }))));
    for (const f of figures) {
      expect(f.tokS / f.expected).toBeGreaterThan(0.95);
      expect(f.tokS / f.expected).toBeLessThan(1.05);
    }
    for (const l of levels) {
      expect(l.failed).toBe(0);
      expect(l.completionTokens).toBe(l.requests * T);
    }
    // Past 4 slots, half the requests wait a whole request's time before their first token.
    const at4 = figures[2]!;
    const at8 = figures[3]!;
    const oneRequestMs = (T / PER_SEQ) * 1000;
    expect(at8.ttftP95).toBeGreaterThan(at4.ttftP95 * 4);
    expect(at8.ttftP95).toBeGreaterThan(oneRequestMs * 0.8);
    expect(high.peaks.samples).toBeGreaterThan(0);
    expect(high.peaks.vramMiB).toBeGreaterThan(0);
    expect(high.slots).toBe(4);
    const md = (await api.invoke('bench.export', { runId: high.id, format: 'markdown' })) as { ok: true; data: { text: string } };
    expect(md.data.text).toContain('| concurrency 8, 4 slots | 16 |');
  }, 60_000);

  it('checks structured output twice: valid, schema mismatch, non-JSON and truncated answers', async () => {
    const schema = { type: 'object', properties: { status: { type: 'string' }, score: { type: 'integer' } }, required: ['status', 'score'], additionalProperties: false };
    const base = { ignoreEos: false, maxTokens: 400, responseFormat: { schema }, perLevel: { kind: 'requests' as const, count: 3 } };
    const valid = await runToEnd(scenario({ ...base, levels: [3] }));
    const mismatch = await runToEnd(scenario({ ...base, levels: [3], extraBody: { demo_fault: 'schema-mismatch' } }));
    const prose = await runToEnd(scenario({ ...base, levels: [3], extraBody: { demo_fault: 'non-json' } }));
    const cut = await runToEnd(scenario({ ...base, maxTokens: 3, levels: [3] }));
    const l = (r: typeof valid) => r.levels[0]!;
    expect(l(valid)).toMatchObject({ checked: 3, jsonParsed: 3, schemaValid: 3, truncated: 0 });
    expect(l(mismatch)).toMatchObject({ checked: 3, jsonParsed: 3, schemaValid: 0 });
    expect(l(prose)).toMatchObject({ checked: 3, jsonParsed: 0, schemaValid: 0 });
    expect(l(cut)).toMatchObject({ checked: 3, jsonParsed: 0, schemaValid: 0, truncated: 3 });
    const ev = (await api.invoke('bench.evaluate', { source: { kind: 'run', runId: mismatch.id } })) as { ok: true; data: { figures: { key: string; value: number | null; unstable: boolean }[] } };
    const byKey = Object.fromEntries(ev.data.figures.map((f) => [f.key, f]));
    expect(byKey.jsonRate!.value).toBe(100);
    expect(byKey.schemaRate!.value).toBe(0);
    expect(byKey.p95E2e!.unstable).toBe(true);
    expect(byKey.costPerRequest!.value).toBeGreaterThan(0);
  }, 30_000);

  it('a run through the proxy is accounted under its own token with class batch', async () => {
    const run = await runToEnd(scenario({ target: { kind: 'proxy', model: 'qwen', class: 'batch' }, maxTokens: 16, levels: [2], perLevel: { kind: 'requests', count: 4 } }));
    expect(run.state).toBe('completed');
    expect(run.levels[0]!.completed).toBe(4);
    const reqs = app.bench.repo.requests(run.id);
    expect(reqs.every((r) => r.queueMs !== null)).toBe(true);
    let rows: ReturnType<App['proxy']['requests']> = [];
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      rows = app.proxy.requests({ limit: 100, outcome: 'all', class: 'batch' }).filter((r) => r.client.startsWith('bench-') && r.endpoint.includes('completions'));
      if (rows.length >= 4) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(rows).toHaveLength(4);
    expect(rows.every((r) => r.class === 'batch' && r.upstream === 'l20-poc/qwen' && r.status === 200)).toBe(true);
    // The run's token is revoked once the run ends.
    expect(app.proxy.tokens.list().filter((t) => t.name.startsWith('bench-') && t.revokedAt === null)).toHaveLength(0);
  }, 20_000);

  it('cancel mid-run leaves a partial, marked run', async () => {
    const progress: BenchProgress[] = [];
    const sub = api.onEvent((e) => {
      if (e.channel === 'bench.progress') progress.push(e.payload as BenchProgress);
    });
    const id = await app.bench.start(scenario({ levels: [2], perLevel: { kind: 'requests', count: 40 } }), 'test');
    await new Promise<void>((resolve) => {
      const t = setInterval(() => {
        if (progress.some((p) => p.runId === id && p.done >= 3)) {
          clearInterval(t);
          resolve();
        }
      }, 20);
    });
    const cancelled = await api.invoke('bench.cancel', { runId: id });
    expect(cancelled).toMatchObject({ ok: true, data: { cancelled: true } });
    const run = await app.bench.service.whenFinished(id);
    void sub.dispose();
    expect(run.state).toBe('cancelled');
    expect(run.note).toMatch(/partial/);
    expect(run.levels[0]!.partial).toBe(true);
    expect(run.levels[0]!.completed).toBeGreaterThanOrEqual(3);
    expect(run.levels[0]!.completed).toBeLessThan(40);
    expect(run.levels[0]!.failed).toBe(0);
    expect(progress.at(-1)).toMatchObject({ runId: id, state: 'cancelled' });
    expect(progress.some((p) => p.etaMs !== null && p.etaMs > 0)).toBe(true);
  }, 20_000);

  it('refuses bad input before the run with clear, coded errors', async () => {
    const start = (s: unknown) => api.invoke('bench.start', { scenario: s });
    const base = { name: 'bad', target: { kind: 'tunnel', host: 'l20-poc', serviceId: 'qwen' }, prompts: { kind: 'synthetic', inputTokens: 8 }, maxTokens: 8, levels: [1], perLevel: { kind: 'requests', count: 1 } };
    const zero = await start({ ...base, levels: [0] });
    expect(zero).toMatchObject({ ok: false, error: { code: 'CONTRACT_INVALID_INPUT' } });
    expect(JSON.stringify(zero)).toMatch(/levels/);
    expect(await start({ ...base, levels: [-2] })).toMatchObject({ ok: false, error: { code: 'CONTRACT_INVALID_INPUT' } });
    // No path crosses the bridge: a prompt file named by path is refused before anything reads it.
    const named = await start({ ...base, prompts: { kind: 'jsonl', file: '/etc/passwd' } });
    expect(named).toMatchObject({ ok: false, error: { code: 'CONTRACT_INVALID_INPUT', message: expect.stringMatching(/prompts: a prompt file cannot be named/) } });
    expect(JSON.stringify(named)).not.toContain('root:');
    // Remote URLs are refused too: the console talks to remote hosts only through its tunnels.
    const remote = await start({ ...base, target: { kind: 'url', baseUrl: 'http://192.0.2.1:8000/v1', model: 'x' } });
    expect(remote).toMatchObject({ ok: false, error: { code: 'CONTRACT_INVALID_INPUT', message: expect.stringMatching(/127\.0\.0\.1/) } });
    const brokenText = '[{"role":"user","content":"a"}]\n\n{"messages":[{"role":"user","content":"b"}]}\n{"messages": [oops\n';
    const b = (await start({ ...base, prompts: { kind: 'inline', text: brokenText, filename: 'broken.jsonl' } })) as unknown as {
      ok: false;
      error: { code: string; message: string; details: { line: number } };
    };
    expect(b.error.code).toBe('BENCH_PROMPT_FILE_INVALID');
    expect(b.error.details.line).toBe(4);
    expect(b.error.message).toContain('broken.jsonl:4');
    expect(await start({ ...base, responseFormat: { schema: { type: 'objekt' } } })).toMatchObject({ ok: false, error: { code: 'BENCH_INVALID_JSON_SCHEMA' } });
    expect(await start({ ...base, target: { kind: 'url', baseUrl: 'http://127.0.0.1:9/v1', model: 'x' } })).toMatchObject({ ok: false, error: { code: 'BENCH_TARGET_UNREACHABLE' } });
    expect(await start({ ...base, target: { kind: 'tunnel', host: 'nope', serviceId: 'qwen' } })).toMatchObject({ ok: false, error: { code: 'BENCH_TARGET_UNKNOWN' } });
    // Asleep: the fleet's view of the service says so; the run is refused before anything is sent.
    await c.demo.host('l20-poc').simulator('qwen').sleep(1);
    await new Promise<void>((resolve) => {
      const sub = app.fleet.onDidTick((s) => {
        if (s.hosts.find((h) => h.label === 'l20-poc')?.services.find((v) => v.id === 'qwen')?.sleep === 'asleep-1') {
          void sub.dispose();
          resolve();
        }
      });
    });
    expect(await start(base)).toMatchObject({ ok: false, error: { code: 'BENCH_TARGET_ASLEEP' } });
    expect(app.bench.repo.listRuns(100).runs.filter((r) => r.name === 'bad')).toHaveLength(0);
    await c.demo.host('l20-poc').simulator('qwen').wakeUp();
  }, 20_000);
});
