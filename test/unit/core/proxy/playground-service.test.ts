import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PlaygroundErrorCode, type EventChannel, type ProxyStats, type UpstreamState } from '../../../../src-preload/contract/index.js';
import { FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { PLAYGROUND_CLIENT, PlaygroundIdentity, PlaygroundService, type TokenRepository } from '../../../../src-main/core/proxy/index.js';
import { PROGRESS_INTERVAL_MS, chatBody } from '../../../../src-main/core/proxy/playground.js';

// What the playground decides before sending (a sleeping model refused at
// once, a group with a waking-free path sent), how it batches streamed text,
// and the in-memory identity the proxy's token check recognises.

function stats(states: Record<string, UpstreamState>, models: { name: string; replicas: string[]; aliases?: string[]; kind?: 'model' | 'group' }[]): ProxyStats {
  return {
    at: 0,
    url: null,
    answered: 0,
    inFlight: 0,
    queued: 0,
    upstreams: Object.entries(states).map(([upstream, state]) => ({ upstream, state, model: upstream.split('/')[1]!, aliases: [] }) as unknown as ProxyStats['upstreams'][number]),
    models: models.map((m) => ({ name: m.name, kind: m.kind ?? 'model', chain: [m.name], replicas: m.replicas, aliases: m.aliases ?? [] })),
  };
}

const servers: Server[] = [];
const services: PlaygroundService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.dispose()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A loopback stand-in for the proxy that streams `pieces`, one per `gapMs`, and records what it was sent. */
async function fakeProxy(pieces: string[], gapMs = 0): Promise<{ url: string; seen: { authorization?: string; priority?: string; body: unknown }[] }> {
  const seen: { authorization?: string; priority?: string; body: unknown }[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      seen.push({ authorization: req.headers.authorization, priority: req.headers['x-priority'] as string, body: JSON.parse(raw) as unknown });
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'req_abc', 'x-upstream': 'gpu-a/qwen' });
      let i = 0;
      const next = () => {
        if (i === pieces.length) return res.end();
        res.write(pieces[i++]);
        setTimeout(next, gapMs);
      };
      next();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, seen };
}

function service(snapshot: ProxyStats, url: string | null, clock = new FakeClock()) {
  const events: { channel: EventChannel; payload: unknown }[] = [];
  const identity = new PlaygroundIdentity(() => Buffer.alloc(32, 7));
  const s = new PlaygroundService({ proxy: { url: () => url, snapshot: () => snapshot }, identity, emit: (channel, payload) => events.push({ channel, payload }), clock, logger: silentLogger });
  services.push(s);
  return { s, events, identity };
}

const input = (model: string, more: Record<string, unknown> = {}) => ({
  runId: 'run-0001',
  model,
  class: 'interactive' as const,
  stream: true,
  maxTokens: 16,
  temperature: null,
  systemPrompt: '',
  turns: [{ role: 'user' as const, content: 'hi' }],
  ...more,
});

const content = (t: string) => `data: ${JSON.stringify({ choices: [{ delta: { content: t }, finish_reason: null }] })}\n\n`;
const done = `data: ${JSON.stringify({ choices: [{ delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 3 } })}\n\ndata: [DONE]\n\n`;

describe('playground: what is refused before sending', () => {
  it('every replica asleep: PLAYGROUND_MODEL_SLEEPING, named, with nothing sent', async () => {
    const proxy = await fakeProxy([content('x'), done]);
    const { s } = service(stats({ 'gpu-a/qwen': 'sleeping', 'gpu-b/qwen': 'sleeping' }, [{ name: 'Qwen3-8B', aliases: ['qwen'], replicas: ['gpu-a/qwen', 'gpu-b/qwen'] }]), proxy.url);
    await expect(s.send(input('QWEN'))).rejects.toMatchObject({
      code: PlaygroundErrorCode.MODEL_SLEEPING,
      message: 'Qwen3-8B is asleep (gpu-a/qwen, gpu-b/qwen); wake it from the host card, then ask again',
    });
    expect(proxy.seen).toEqual([]);
  });

  it('asleep where the rest is down is still refused as asleep (waking is what brings it back)', async () => {
    const { s } = service(stats({ 'gpu-a/qwen': 'sleeping', 'gpu-b/qwen': 'down' }, [{ name: 'qwen', replicas: ['gpu-a/qwen', 'gpu-b/qwen'] }]), 'http://127.0.0.1:1/v1');
    await expect(s.send(input('qwen'))).rejects.toMatchObject({ code: PlaygroundErrorCode.MODEL_SLEEPING });
  });

  it('a group whose first model sleeps but whose second is ready is sent (the proxy falls back)', async () => {
    const proxy = await fakeProxy([content('ok'), done]);
    const { s } = service(stats({ 'gpu-a/qwen': 'sleeping', 'gpu-b/gemma': 'ready' }, [{ name: 'chat', kind: 'group', replicas: ['gpu-a/qwen', 'gpu-b/gemma'] }]), proxy.url);
    const a = await s.send(input('chat'));
    expect(a.text).toBe('ok');
    expect(proxy.seen[0]!.body).toMatchObject({ model: 'chat' });
  });

  it('unknown model, proxy not running: coded', async () => {
    const { s } = service(stats({ 'gpu-a/qwen': 'ready' }, [{ name: 'qwen', replicas: ['gpu-a/qwen'] }]), null);
    await expect(s.send(input('gemma'))).rejects.toMatchObject({ code: PlaygroundErrorCode.UNKNOWN_MODEL, message: expect.stringMatching(/"gemma".*knows qwen/) });
    await expect(s.send(input('qwen'))).rejects.toMatchObject({ code: PlaygroundErrorCode.PROXY_NOT_RUNNING });
  });

  it('the last turn must be the operator\'s', async () => {
    const { s } = service(stats({ 'gpu-a/qwen': 'ready' }, [{ name: 'qwen', replicas: ['gpu-a/qwen'] }]), 'http://127.0.0.1:1/v1');
    await expect(s.send(input('qwen', { turns: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }] }))).rejects.toMatchObject({ code: PlaygroundErrorCode.EMPTY_PROMPT });
  });
});

describe('playground: sending', () => {
  it('sends as the internal client with the chosen class, and batches streamed text into few events', async () => {
    const proxy = await fakeProxy([content('a'), content('b'), content('c'), done]);
    const clock = new FakeClock();
    const { s, events, identity } = service(stats({ 'gpu-a/qwen': 'ready' }, [{ name: 'qwen', replicas: ['gpu-a/qwen'] }]), proxy.url, clock);
    const a = await s.send(input('qwen', { class: 'batch', systemPrompt: 'Be brief.', temperature: 0.5 }));
    expect(proxy.seen[0]).toMatchObject({ authorization: identity.authorization, priority: 'batch' });
    expect(proxy.seen[0]!.body).toEqual({
      model: 'qwen',
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }],
      max_tokens: 16,
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.5,
    });
    expect(a).toMatchObject({ runId: 'run-0001', text: 'abc', requestId: 'req_abc', upstream: 'gpu-a/qwen', completionTokens: 3 });
    // The fake clock never fired the batch timer: the identity at headers, then all text in one event at the end.
    const progress = events.filter((e) => e.channel === 'playground.progress').map((e) => e.payload);
    expect(progress).toEqual([
      { runId: 'run-0001', seq: 0, text: '', requestId: 'req_abc', upstream: 'gpu-a/qwen' },
      { runId: 'run-0001', seq: 1, text: 'abc', requestId: 'req_abc', upstream: 'gpu-a/qwen' },
    ]);
    expect(PROGRESS_INTERVAL_MS).toBeGreaterThan(0);
  });

  it('omits the system message and temperature when not given', () => {
    expect(chatBody(input('qwen', { stream: false }), 'qwen')).toEqual({ model: 'qwen', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16, stream: false });
  });
});

describe('playground identity', () => {
  const tokens = {
    check: (t: string) => (t === 'gcp_real' ? { ok: true as const, id: 'h', name: 'app', maxClass: 'batch' as const } : { ok: false as const, reason: 'unknown' as const }),
    list: () => [],
    extra: () => 'passed through',
  } as unknown as TokenRepository & { extra(): string };

  it('the proxy recognises its token as console:playground; every other token as the repository says', () => {
    const identity = new PlaygroundIdentity();
    const over = identity.over(tokens) as TokenRepository & { extra(): string };
    const own = identity.authorization.replace(/^Bearer /, '');
    expect(own).toMatch(/^gci_[A-Za-z0-9_-]{43}$/);
    expect(over.check(own)).toEqual({ ok: true, id: 'internal:playground', name: PLAYGROUND_CLIENT, maxClass: 'interactive' });
    expect(over.check('gcp_real')).toMatchObject({ ok: true, name: 'app' });
    expect(over.check(own + 'x')).toMatchObject({ ok: false });
    expect(over.extra()).toBe('passed through');
    // A new process, a new token: the old one is worth nothing.
    expect(new PlaygroundIdentity().over(tokens).check(own)).toMatchObject({ ok: false });
  });
});
