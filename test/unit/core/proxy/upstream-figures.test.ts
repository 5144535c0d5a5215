import { spawnSync } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ProxyStatsSchema, type UpstreamFigures } from '../../../../src-preload/contract/index.js';
import { systemClock, type Clock } from '../../../../src-main/core/base/index.js';
import { ConfigSchema, type ConfigInput } from '../../../../src-main/core/config/index.js';
import { ModelRegistry, ProxyServer, createTokenRepository } from '../../../../src-main/core/proxy/index.js';
import { openStore } from '../../../../src-main/core/store/index.js';
import { parsePrometheusText } from '../../../../src-main/core/telemetry/index.js';
import { until } from '../../../helpers/until.js';

// The proxy's figures for the alert rules, against real loopback upstreams: the
// 5-minute answer window per upstream (5xx and a refused upstream fail, 4xx does
// not, and it forgets after 5 minutes), the requests in flight with their silence
// (a stalled stream's silence grows with its age; a new chunk resets it), the hold
// budgets, and the /metrics families the Prometheus rules read.

const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const havePromtool = promtool.status === 0;
if (!havePromtool) console.warn('upstream-figures: promtool not found (apt-get install prometheus), skipping the promtool check');

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

type Handler = (req: IncomingMessage, res: ServerResponse, body: { model: string; stream?: boolean }) => void;

async function upstream(handler: Handler): Promise<string> {
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => handler(req, res, JSON.parse(Buffer.concat(parts).toString()) as { model: string; stream?: boolean }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  closers.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A port nothing listens on (bound, then closed): connecting is refused. */
async function deadPort(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  await new Promise((r) => s.close(r));
  return url;
}

/** Wall time moved by hand on top of the real one (timers stay real): the window's 5 minutes pass in a test. */
class ShiftedTime {
  wallOffsetMs = 0;
  monoOffsetMs = 0;
  readonly clock: Clock = { now: () => Date.now() + this.wallOffsetMs, setTimeout: systemClock.setTimeout, setInterval: systemClock.setInterval };
  readonly mono = (): number => performance.now() + this.monoOffsetMs;
}

async function proxyOver(urls: Record<string, string>, proxy: ConfigInput['proxy'] = {}) {
  const config = ConfigSchema.parse({
    hosts: Object.keys(urls).map((label) => ({ label, ssh: { host: '127.0.0.1', user: 'x', agent: true }, services: [{ id: 'm', kind: 'vllm', remotePort: 8000, model: label, slots: 4 }] })),
    proxy,
  });
  const store = openStore({ file: ':memory:' });
  const time = new ShiftedTime();
  const tokens = createTokenRepository(store.db, systemClock);
  const server = await ProxyServer.start({
    port: 0,
    settings: config.proxy,
    registry: ModelRegistry.fromConfig(config),
    tokens,
    resolver: { resolve: (spec) => ({ ok: true, url: urls[spec.label]! }) },
    clock: time.clock,
    monotonic: time.mono,
  });
  closers.push(() => store.close());
  closers.push(() => server.close(200));
  const token = tokens.create('t', 'interactive').token;
  const chat = (model: string, stream = false, cls = 'interactive') =>
    request(`${server.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-priority': cls },
      body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hi' }] }),
    });
  const figures = (label: string): UpstreamFigures => {
    const snap = ProxyStatsSchema.parse(server.snapshot());
    return snap.upstreams.find((u) => u.label === label)!;
  };
  const metrics = async () => (await request(`${server.origin}/metrics`)).body.text();
  return { server, time, chat, figures, metrics };
}

const OK = JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });

function answerBy(status: number): Handler {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(status === 200 ? OK : JSON.stringify({ error: { message: `status ${status}` } }));
  };
}

describe('proxy figures: answers over 5 minutes per upstream', () => {
  it('counts 5xx from the server and a refused upstream as failed, 4xx and successes as answered only', async () => {
    const p = await proxyOver({ good: await upstream(answerBy(200)), client: await upstream(answerBy(400)), broken: await upstream(answerBy(500)), dead: await deadPort() });
    for (const [model, n] of [['good', 3], ['client', 2], ['broken', 2], ['dead', 1]] as const) {
      for (let i = 0; i < n; i++) await (await p.chat(model)).body.text();
    }
    expect(p.figures('good').errors).toEqual({ windowMs: 300_000, answered: 3, failed: 0 });
    expect(p.figures('client').errors).toEqual({ windowMs: 300_000, answered: 2, failed: 0 });
    expect(p.figures('broken').errors).toEqual({ windowMs: 300_000, answered: 2, failed: 2 });
    // The refused connection is answered 502 upstream_unreachable by the proxy: a failure of that upstream.
    expect(p.figures('dead').errors).toEqual({ windowMs: 300_000, answered: 1, failed: 1 });
    // Prometheus sees the same statuses per upstream (the rule's status=~"5.." draws the same line).
    const text = await p.metrics();
    expect(text).toContain('gpu_console_proxy_requests_total{upstream="dead/m",class="interactive",status="502"} 1');
    expect(text).toContain('gpu_console_proxy_requests_total{upstream="client/m",class="interactive",status="400"} 2');
    expect(text).toContain('gpu_console_proxy_requests_total{upstream="broken/m",class="interactive",status="500"} 2');
  });

  it('forgets answers older than 5 minutes (injected clock)', async () => {
    const p = await proxyOver({ broken: await upstream(answerBy(503)) });
    await (await p.chat('broken')).body.text();
    p.time.wallOffsetMs = 200_000;
    await (await p.chat('broken')).body.text();
    expect(p.figures('broken').errors).toMatchObject({ answered: 2, failed: 2 });
    // 299 s after the first: both still in the window.
    p.time.wallOffsetMs = 299_000;
    expect(p.figures('broken').errors).toMatchObject({ answered: 2, failed: 2 });
    // 301 s after the first: only the second is left; 5 minutes after the second, none.
    p.time.wallOffsetMs = 301_000;
    expect(p.figures('broken').errors).toMatchObject({ answered: 1, failed: 1 });
    p.time.wallOffsetMs = 501_000;
    expect(p.figures('broken').errors).toEqual({ windowMs: 300_000, answered: 0, failed: 0 });
  });
});

describe('proxy figures: requests in flight', () => {
  it("a stalled stream's silence grows as its time in flight does; the next chunk resets the silence, not the age", async () => {
    let stalled: ServerResponse | null = null;
    const url = await upstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a"}}]}\n\n');
      stalled = res;
    });
    const p = await proxyOver({ slow: url });
    expect(p.figures('slow').stalled).toEqual([]);
    const answer = await p.chat('slow', true, 'batch');
    const body = answer.body;
    await until(() => p.figures('slow').stalled!.length === 1 && stalled !== null);
    const first = p.figures('slow').stalled![0]!;
    expect(first.class).toBe('batch');
    // The first chunk came in: the silence counts from it, the age from the send.
    expect(first.sinceByteMs).toBeLessThan(5_000);
    p.time.monoOffsetMs += 90_000;
    const later = p.figures('slow').stalled![0]!;
    expect(later.inFlightMs).toBeGreaterThanOrEqual(first.inFlightMs + 90_000);
    expect(later.sinceByteMs).toBeGreaterThanOrEqual(first.sinceByteMs + 90_000);
    // /metrics: the batch class of that upstream has silence and age; the other classes have no series at all.
    const parsed = parsePrometheusText(await p.metrics());
    expect(parsed.errors).toBe(0);
    const samples = (name: string) => parsed.families.find((f) => f.name === name)?.samples ?? [];
    expect(samples('gpu_console_proxy_request_silence_seconds').map((s) => [s.labels['upstream'], s.labels['class']])).toEqual([['slow/m', 'batch']]);
    expect(samples('gpu_console_proxy_request_silence_seconds')[0]!.value).toBeGreaterThanOrEqual(90);
    expect(samples('gpu_console_proxy_request_age_seconds')[0]!.value).toBeGreaterThanOrEqual(90);
    expect(samples('gpu_console_proxy_silent_request_age_seconds')[0]!.value).toBeGreaterThanOrEqual(90);

    (stalled as unknown as ServerResponse).write('data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"b"}}]}\n\n');
    await until(() => p.figures('slow').stalled![0]!.sinceByteMs < 5_000);
    expect(p.figures('slow').stalled![0]!.inFlightMs).toBeGreaterThanOrEqual(90_000);
    (stalled as unknown as ServerResponse).end('data: [DONE]\n\n');
    await body.text();
    await until(() => p.figures('slow').stalled!.length === 0);
    expect((await p.metrics()).includes('gpu_console_proxy_request_silence_seconds{')).toBe(false);
  });
});

describe('proxy figures: hold budgets', () => {
  it("each class carries the hold budget in force, and /metrics writes it per class", async () => {
    const p = await proxyOver({ good: await upstream(answerBy(200)) }, { holdBudgetMs: { interactive: 12_000, batch: 600_000 } });
    expect(Object.fromEntries(p.figures('good').classes.map((c) => [c.class, c.holdBudgetMs]))).toEqual({ interactive: 12_000, system: 10_000, batch: 600_000 });
    const text = await p.metrics();
    expect(text).toContain('# TYPE gpu_console_proxy_hold_budget_seconds gauge');
    expect(text).toContain('gpu_console_proxy_hold_budget_seconds{class="interactive"} 12\n');
    expect(text).toContain('gpu_console_proxy_hold_budget_seconds{class="batch"} 600\n');
  });

  it.skipIf(!havePromtool)('the page with requests in flight passes `promtool check metrics`', async () => {
    const url = await upstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"id":"c","object":"chat.completion.chunk","choices":[]}\n\n');
      setTimeout(() => res.end('data: [DONE]\n\n'), 1_000);
    });
    const p = await proxyOver({ slow: url });
    const answer = p.chat('slow', true);
    await until(() => p.figures('slow').stalled!.length === 1);
    const text = await p.metrics();
    expect(text).toContain('gpu_console_proxy_request_silence_seconds{upstream="slow/m",class="interactive"}');
    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(check.stdout + check.stderr).toBe('');
    expect(check.status).toBe(0);
    await (await answer).body.text();
  });
});
