import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import type { UpstreamAvailability, UpstreamResolver } from '../../../src-main/core/proxy/index.js';
import { startStub, startStubProxy, type StubHandler, type StubProxy } from './helpers.js';
import { until } from '../../helpers/until.js';

// One model on two stub upstreams (replicas a/s and b/s), and a group alias whose
// first model sits on a third: through a real ProxyServer on loopback.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Stub = Awaited<ReturnType<typeof startStub>>;

const completion = (content: string) =>
  JSON.stringify({
    id: 'c1',
    object: 'chat.completion',
    created: 1,
    model: 'M',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  });

/** Answers with its own name as the content (after `delayMs`), and keeps the model names it was sent. */
function named(name: string, seen: string[] = [], delayMs = 0): StubHandler {
  return (_req, res, body) => {
    seen.push(String((JSON.parse(body.toString()) as { model?: unknown }).model));
    const t = setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(completion(name));
    }, delayMs);
    res.on('close', () => clearTimeout(t));
  };
}

const down = (recoveryMs: number | null = null): UpstreamAvailability => ({
  ok: false,
  code: 'tunnel_down',
  message: 'the tunnel is down',
  retryAfterS: 5,
  recovery: recoveryMs === null ? null : { reason: 'reconnecting', expectedMs: recoveryMs },
});

interface Fleet {
  p: StubProxy;
  token: string;
  a: Stub;
  b: Stub;
  /** Replicas the resolver calls unavailable (key → answer). */
  unavailable: Map<string, UpstreamAvailability>;
}

/**
 * Replicas a/s and b/s of model M; `big` adds c/s serving Big at `big.url`, and the group g = [Big, M].
 */
async function fleet(handlerA: StubHandler, handlerB: StubHandler, big?: { url: string }, slots = 4): Promise<Fleet> {
  const a = await startStub(handlerA);
  const b = await startStub(handlerB);
  cleanups.push(() => a.close(), () => b.close());
  const upstreams = [
    { label: 'a', id: 's', model: 'M', url: a.url, slots, aliases: ['m-alias'] },
    { label: 'b', id: 's', model: 'M', url: b.url, slots },
    ...(big ? [{ label: 'c', id: 's', model: 'Big', url: big.url, slots }] : []),
  ];
  const urls = new Map(upstreams.map((u) => [`${u.label}/${u.id}`, u.url]));
  const unavailable = new Map<string, UpstreamAvailability>();
  const resolver: UpstreamResolver = { resolve: (spec) => unavailable.get(spec.key) ?? { ok: true, url: urls.get(spec.key)! } };
  const p = await startStubProxy(upstreams, big ? { groups: { g: ['Big', 'M'] } } : {}, resolver);
  cleanups.push(() => p.close());
  return { p, token: p.token('t', 'interactive'), a, b, unavailable };
}

interface Answer {
  status: number;
  upstream: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  content: string | undefined;
}

async function chat(f: Fleet, model: string, more: { headers?: Record<string, string>; body?: Record<string, unknown> } = {}): Promise<Answer> {
  const r = await request(`${f.p.proxy.url}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${f.token}`, 'content-type': 'application/json', ...more.headers },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }], ...more.body }),
  });
  const text = await r.body.text();
  let content: string | undefined;
  try {
    content = (JSON.parse(text) as { choices?: { message?: { content?: string } }[] }).choices?.[0]?.message?.content;
  } catch {
    content = undefined;
  }
  return { status: r.statusCode, upstream: r.headers['x-upstream'] as string | undefined, headers: r.headers, text, content };
}

const stat = (f: Fleet, key: string) => f.p.proxy.snapshot().upstreams.find((u) => u.upstream === key)!;

/** Resolves once `stub` has received `n` requests (checked every 5 ms, 5 s at most). */
async function received(stub: Stub, n: number): Promise<void> {
  for (let i = 0; i < 1000 && stub.requests < n; i++) await new Promise((r) => setTimeout(r, 5));
  expect(stub.requests).toBeGreaterThanOrEqual(n);
}

/** A port that refuses connections: a stub's, once it is closed. */
async function refusedUrl(): Promise<string> {
  const s = await startStub(() => undefined);
  await s.close();
  return s.url;
}

describe('replicas: one model on two services', () => {
  it('spreads requests across the replicas; X-Upstream names the one that served', async () => {
    const f = await fleet(named('a/s'), named('b/s'));
    const answers: Answer[] = [];
    for (let i = 0; i < 6; i++) answers.push(await chat(f, i % 2 === 0 ? 'M' : 'm-alias'));
    for (const x of answers) {
      expect(x.status).toBe(200);
      expect(x.upstream).toBe(x.content);
    }
    expect(answers.map((x) => x.upstream)).toEqual(['a/s', 'b/s', 'a/s', 'b/s', 'a/s', 'b/s']);
    expect([f.a.requests, f.b.requests]).toEqual([3, 3]);
    expect([stat(f, 'a/s').routed, stat(f, 'b/s').routed]).toEqual([3, 3]);
    expect(f.p.proxy.snapshot().failovers).toBe(0);
  });

  it('concurrent requests go where slots are free', async () => {
    const f = await fleet(named('a/s', [], 200), named('b/s', [], 200), undefined, 2);
    const answers = await Promise.all(Array.from({ length: 4 }, () => chat(f, 'M')));
    expect(answers.every((x) => x.status === 200 && x.upstream === x.content)).toBe(true);
    expect([f.a.requests, f.b.requests]).toEqual([2, 2]);
    // Nobody queued while the other replica had a free slot.
    expect(answers.every((x) => Number(x.headers['x-queue-ms']) < 100)).toBe(true);
  });

  it('a replica the resolver calls down is skipped', async () => {
    const f = await fleet(named('a/s'), named('b/s'));
    f.unavailable.set('a/s', down());
    const answers = await Promise.all(Array.from({ length: 4 }, () => chat(f, 'm-alias')));
    expect(answers.map((x) => [x.status, x.upstream])).toEqual(Array(4).fill([200, 'b/s']));
    expect(f.a.requests).toBe(0);
    expect(stat(f, 'a/s')).toMatchObject({ state: 'down', routed: 0 });
    expect(stat(f, 'b/s')).toMatchObject({ state: 'ready', routed: 4 });
    f.unavailable.delete('a/s');
    expect((await chat(f, 'M')).upstream).toBe('a/s');
  });

  it('a stream that already began is never retried elsewhere: the client gets an SSE error frame', async () => {
    const dies: StubHandler = (req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'hel' } }] })}\n\n`);
      setTimeout(() => req.socket.destroy(), 30);
    };
    const f = await fleet(dies, dies);
    const x = await chat(f, 'M', { body: { stream: true } });
    expect(x.status).toBe(200);
    expect(x.text).toContain('"content":"hel"');
    const frames = x.text.split('\n\n').filter((s) => s.startsWith('data: ') && s !== 'data: [DONE]');
    const last = JSON.parse(frames[frames.length - 1]!.slice(6)) as { error?: { code?: string } };
    expect(last.error?.code).toBe('upstream_reset');
    // Exactly one upstream run: the replica that began the stream; the other got nothing.
    expect(f.a.requests + f.b.requests).toBe(1);
    expect(f.p.proxy.snapshot().failovers).toBe(0);
  });
});

describe('replicas: failover before the first byte', () => {
  it('a replica that sends its stream headers and dies before the first event: the client gets the other replica\'s whole stream', async () => {
    // vLLM answers 200 text/event-stream at once and the first token after prefill: the proxy holds that head.
    const headersThenDie: StubHandler = (req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      setTimeout(() => req.socket.destroy(), 30);
    };
    const streams: StubHandler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'from b' } }] })}\n\n`);
      res.end('data: [DONE]\n\n');
    };
    const f = await fleet(headersThenDie, streams);
    // a/s first: both idle, ties go to config order.
    const x = await chat(f, 'M', { body: { stream: true } });
    expect(x.status).toBe(200);
    expect(x.upstream).toBe('b/s');
    expect(x.text).toContain('"content":"from b"');
    expect(x.text).not.toContain('"error"');
    expect(x.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(f.a.requests).toBe(1);
    expect(f.b.requests).toBe(1);
    expect(f.p.proxy.snapshot().failovers).toBe(1);
  });

  it('a replica that drops while the request waits for its slot: the request goes to the other replica', async () => {
    const f = await fleet(named('a/s', [], 300), named('b/s'), undefined, 1);
    f.unavailable.set('b/s', down());
    const first = chat(f, 'M');
    await received(f.a, 1);
    const second = chat(f, 'M'); // a/s is the only ready replica: it queues there
    await until(() => stat(f, 'a/s').queued === 1, { timeoutMs: 5_000, intervalMs: 5 });
    f.unavailable.delete('b/s');
    f.unavailable.set('a/s', down()); // the tunnel drops while it waits
    const [one, two] = await Promise.all([first, second]);
    expect(one).toMatchObject({ status: 200, upstream: 'a/s', content: 'a/s' });
    expect(two).toMatchObject({ status: 200, upstream: 'b/s', content: 'b/s' });
    expect([f.a.requests, f.b.requests]).toEqual([1, 1]);
    expect(f.p.proxy.snapshot().failovers).toBe(1);
    expect(stat(f, 'a/s')).toMatchObject({ routed: 2, failing: true });
    expect(stat(f, 'b/s')).toMatchObject({ routed: 1, failing: false });
  });

  it('a group whose first model drops while the request waits for its slot falls back to the next model', async () => {
    const seen: string[] = [];
    const c = await startStub(named('c/s', [], 300));
    cleanups.push(() => c.close());
    const f = await fleet(named('a/s', seen), named('b/s', seen), c, 1);
    const first = chat(f, 'g');
    await received(c, 1);
    const second = chat(f, 'g'); // Big's replica is full but ready: the request queues there
    await until(() => stat(f, 'c/s').queued === 1, { timeoutMs: 5_000, intervalMs: 5 });
    f.unavailable.set('c/s', down());
    const [one, two] = await Promise.all([first, second]);
    expect(one).toMatchObject({ status: 200, upstream: 'c/s' });
    expect(two.status).toBe(200);
    expect(['a/s', 'b/s']).toContain(two.upstream);
    expect(seen).toEqual(['M']);
    expect(c.requests).toBe(1);
    expect(f.p.proxy.snapshot().failovers).toBe(1);
    // c/s is back, but marked failing for a few seconds: the group's ready model goes first meanwhile.
    f.unavailable.delete('c/s');
    expect(stat(f, 'c/s')).toMatchObject({ state: 'ready', failing: true });
    const three = await chat(f, 'g');
    expect(['a/s', 'b/s']).toContain(three.upstream);
    expect(c.requests).toBe(1);
    expect(f.p.proxy.snapshot().failovers).toBe(1);
  });
});

describe('replicas: Idempotency-Key', () => {
  it('a repeat while the first run is on another replica gets the first run’s answer; one upstream run', async () => {
    const f = await fleet(named('a/s', [], 300), named('b/s', [], 300));
    const headers = { 'idempotency-key': 'order-42' };
    const first = chat(f, 'M', { headers });
    await received(f.a, 1); // the first is running on a/s: b/s has more free slots now
    const second = await chat(f, 'M', { headers });
    const one = await first;
    expect(one).toMatchObject({ status: 200, upstream: 'a/s', content: 'a/s' });
    expect(second).toMatchObject({ status: 200, upstream: 'a/s', content: 'a/s' });
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(f.a.requests + f.b.requests).toBe(1);
  });

  it('the repeat that only waited for the first run is not counted as routed to the other replica', async () => {
    const f = await fleet(named('a/s', [], 300), named('b/s', [], 300));
    const headers = { 'idempotency-key': 'order-43' };
    const first = chat(f, 'M', { headers });
    await received(f.a, 1);
    await chat(f, 'M', { headers });
    await first;
    expect(f.b.requests).toBe(0);
    // `routed` counts requests sent to a replica; the repeat was never sent to b/s.
    expect([stat(f, 'a/s').routed, stat(f, 'b/s').routed]).toEqual([1, 0]);
  });
});

describe('group aliases: ordered fallback', () => {
  it('goes to its first model while that can take it', async () => {
    const seenBig: string[] = [];
    const c = await startStub(named('c/s', seenBig));
    cleanups.push(() => c.close());
    const f = await fleet(named('a/s'), named('b/s'), c);
    const x = await chat(f, 'g');
    expect(x).toMatchObject({ status: 200, upstream: 'c/s' });
    expect(seenBig).toEqual(['Big']);
  });

  it('falls back to its second model when the first model’s only replica is down, without holding', async () => {
    const seenA: string[] = [];
    const seenB: string[] = [];
    const c = await startStub(named('c/s'));
    cleanups.push(() => c.close());
    const f = await fleet(named('a/s', seenA), named('b/s', seenB), c);
    f.unavailable.set('c/s', down());
    const x = await chat(f, 'g');
    expect(x.status).toBe(200);
    expect(['a/s', 'b/s']).toContain(x.upstream);
    expect([...seenA, ...seenB]).toEqual(['M']); // the body names the model that serves it
    // Expected back soon: still no hold while the next model is ready.
    f.unavailable.set('c/s', down(2_000));
    const y = await chat(f, 'g');
    expect(y.status).toBe(200);
    expect(['a/s', 'b/s']).toContain(y.upstream);
    expect(y.headers['x-hold-reason']).toBeUndefined();
    expect(c.requests).toBe(0);
    expect(f.p.proxy.snapshot().failovers).toBe(0);
    expect(stat(f, 'c/s')).toMatchObject({ state: 'down', routed: 0 });
  });

  it('fails over to its second model when the first model’s upstream refuses connections', async () => {
    const f = await fleet(named('a/s'), named('b/s'), { url: await refusedUrl() });
    const x = await chat(f, 'g');
    expect(x.status, x.text).toBe(200);
    expect(['a/s', 'b/s']).toContain(x.upstream);
    expect(x.upstream).toBe(x.content);
    let snap = f.p.proxy.snapshot();
    expect(snap.failovers).toBe(1);
    expect(stat(f, 'c/s')).toMatchObject({ routed: 1, failing: true });
    // While c/s is marked failing, the next request goes straight to the ready model (no second failover).
    const y = await chat(f, 'g');
    expect(y.status).toBe(200);
    snap = f.p.proxy.snapshot();
    expect(snap.failovers).toBe(1);
    expect(stat(f, 'c/s').routed).toBe(1);
    expect((stat(f, 'a/s').routed ?? 0) + (stat(f, 'b/s').routed ?? 0)).toBe(2);
  });

  it('a replica that refuses connections fails over to the other replica of the same model', async () => {
    const b = await startStub(named('b/s'));
    cleanups.push(() => b.close());
    const dead = await refusedUrl();
    const a = await startStub(named('a/s'));
    cleanups.push(() => a.close());
    const urls = new Map([
      ['a/s', dead],
      ['b/s', b.url],
    ]);
    const p = await startStubProxy(
      [
        { label: 'a', id: 's', model: 'M', url: dead },
        { label: 'b', id: 's', model: 'M', url: b.url },
      ],
      {},
      { resolve: (spec) => ({ ok: true, url: urls.get(spec.key)! }) },
    );
    cleanups.push(() => p.close());
    const f: Fleet = { p, token: p.token('t', 'interactive'), a, b, unavailable: new Map() };
    const x = await chat(f, 'M');
    expect(x.status, x.text).toBe(200);
    expect(x.upstream).toBe('b/s');
    expect(p.proxy.snapshot().failovers).toBe(1);
    expect(stat(f, 'a/s')).toMatchObject({ routed: 1, failing: true });
    expect(stat(f, 'b/s')).toMatchObject({ routed: 1, failing: false });
  });
});
