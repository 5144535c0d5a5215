import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api, ApiEvent } from '../../../src-main/core/api.js';
import { Emitter, silentLogger } from '../../../src-main/core/base/index.js';
import { startWebBridge, type WebBridge } from '../../../src-main/web/index.js';
import { TickStreamDecoder, type FleetSnapshot, type HostView } from '../../../src-preload/contract/index.js';
import { SseParser, type SseMessage } from '../../../src-renderer/src/transport/sse-parser.js';
import { host as hostView } from '../../unit/renderer/fixtures/fleet.js';
import { until } from '../../helpers/until.js';

// The bridge over real loopback sockets, with a recording Api behind it, so
// the assertions are about the bridge's own rules: token, Host header, body.

interface Recorded {
  channel: string;
  input: unknown;
}

function recordingApi() {
  const calls: Recorded[] = [];
  const events = new Emitter<ApiEvent>();
  const api: Api = {
    invoke: async (channel, input) => {
      calls.push({ channel, input });
      if (channel === 'hosts.connect') return { ok: false, error: { code: 'FLEET_UNKNOWN_HOST', message: 'no such host', retryable: false, details: {} } };
      return { ok: true, data: { echoed: input } };
    },
    onEvent: (l) => events.on(l),
    dispose: () => events.dispose(),
  };
  return { api, calls, events };
}

function raw(
  port: number,
  opts: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
    });
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

describe('web bridge', () => {
  let bridge: WebBridge;
  let rec: ReturnType<typeof recordingApi>;
  let host: string;
  const token = 'a'.repeat(64);

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gc-bridge-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>GPU Console</title>');
    writeFileSync(join(dir, 'assets', 'app.js'), 'console.log(1)');
    writeFileSync(join(tmpdir(), 'gc-bridge-secret.txt'), 'secret');
    rec = recordingApi();
    bridge = await startWebBridge({ api: rec.api, rendererDir: dir, port: 0, token, logger: silentLogger });
    host = `127.0.0.1:${bridge.port}`;
  });
  afterAll(async () => {
    await bridge.close();
  });

  const call = (channel: string, body: unknown, extra: Record<string, string> = {}) =>
    raw(bridge.port, {
      method: 'POST',
      path: `/api/${channel}`,
      headers: { host, 'content-type': 'application/json', 'x-gpu-console-token': token, ...extra },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('binds 127.0.0.1 and puts the token in the URL fragment only', () => {
    expect(bridge.url).toBe(`http://127.0.0.1:${bridge.port}/#token=${token}`);
  });

  it('generates a fresh 256-bit token per start when none is given', async () => {
    const a = await startWebBridge({ api: rec.api, rendererDir: '/nonexistent', port: 0, logger: silentLogger });
    const b = await startWebBridge({ api: rec.api, rendererDir: '/nonexistent', port: 0, logger: silentLogger });
    expect(a.token).toMatch(/^[0-9a-f]{64}$/);
    expect(a.token).not.toBe(b.token);
    await a.close();
    await b.close();
  });

  it('passes a valid call through and answers {ok:true,data}', async () => {
    const r = await call('fleet.snapshot', { x: 1 });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toEqual({ ok: true, data: { echoed: { x: 1 } } });
    expect(rec.calls.at(-1)).toEqual({ channel: 'fleet.snapshot', input: { x: 1 } });
  });

  it('maps an application error to a non-2xx status with the coded body', async () => {
    const r = await call('hosts.connect', { label: 'nope' });
    expect(r.status).toBe(422);
    expect(JSON.parse(r.body).error.code).toBe('FLEET_UNKNOWN_HOST');
  });

  it('401 without the token or with a wrong one, and the call never reaches the api', async () => {
    const before = rec.calls.length;
    const missing = await raw(bridge.port, { method: 'POST', path: '/api/app.info', headers: { host, 'content-type': 'application/json' }, body: '{}' });
    const wrong = await call('app.info', {}, { 'x-gpu-console-token': 'b'.repeat(64) });
    const short = await call('app.info', {}, { 'x-gpu-console-token': 'a' });
    for (const r of [missing, wrong, short]) {
      expect(r.status).toBe(401);
      expect(JSON.parse(r.body).error.code).toBe('BRIDGE_UNAUTHORIZED');
    }
    expect(rec.calls.length).toBe(before);
  });

  it('403 for a foreign Host header, even with the right token (DNS rebinding)', async () => {
    const before = rec.calls.length;
    for (const h of ['evil.example:80', `attacker.test:${bridge.port}`, '127.0.0.1:1']) {
      const r = await call('app.info', {}, { host: h });
      expect(r.status).toBe(403);
      expect(JSON.parse(r.body).error.code).toBe('BRIDGE_FORBIDDEN_HOST');
    }
    const page = await raw(bridge.port, { path: '/', headers: { host: 'evil.example' } });
    expect(page.status).toBe(403);
    expect(rec.calls.length).toBe(before);
  });

  it('400 for a malformed body, 415 for a wrong content type, 413 for an oversized body, 405 for GET', async () => {
    const before = rec.calls.length;
    const bad = await call('app.info', '{"unterminated');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.code).toBe('BRIDGE_BAD_REQUEST');
    const type = await call('app.info', '{}', { 'content-type': 'text/plain' });
    expect(type.status).toBe(415);
    const big = await call('app.info', JSON.stringify({ pad: 'x'.repeat(1024 * 1024 + 10) }));
    expect(big.status).toBe(413);
    const get = await raw(bridge.port, { path: '/api/app.info', headers: { host, 'x-gpu-console-token': token } });
    expect(get.status).toBe(405);
    expect(rec.calls.length).toBe(before);
  });

  it('400 BRIDGE_INVALID_PATH for a malformed percent-escape in the channel name (was a 500 and an error log per request)', async () => {
    const before = rec.calls.length;
    for (const channel of ['%E0%A4%A', '%', 'app.info%zz', '%C0%AF']) {
      const r = await call(channel, {});
      expect(r.status, channel).toBe(400);
      expect(JSON.parse(r.body).error.code).toBe('BRIDGE_INVALID_PATH');
    }
    expect(rec.calls.length).toBe(before);
  });

  it('serves the renderer with the CSP and refuses traversal', async () => {
    const page = await raw(bridge.port, { path: '/', headers: { host } });
    expect(page.status).toBe(200);
    expect(page.body).toContain('GPU Console');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    const js = await raw(bridge.port, { path: '/assets/app.js', headers: { host } });
    expect(js.headers['content-type']).toContain('javascript');
    for (const path of ['/../gc-bridge-secret.txt', '/%2e%2e/gc-bridge-secret.txt', '/assets/..%2f..%2fgc-bridge-secret.txt']) {
      const r = await raw(bridge.port, { path, headers: { host } });
      expect(r.status).toBe(404);
      expect(r.body).not.toContain('secret"');
    }
  });

  it('streams events as SSE to a client with the token, and refuses one without', async () => {
    const refused = await raw(bridge.port, { path: '/api/events', headers: { host } });
    expect(refused.status).toBe(401);

    const received = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: bridge.port, path: '/api/events', headers: { host, 'x-gpu-console-token': token } },
        (res) => {
          expect(res.headers['content-type']).toContain('text/event-stream');
          let text = '';
          res.on('data', (c: Buffer) => {
            text += c.toString('utf8');
            if (text.includes(': connected') && !text.includes('event:')) {
              rec.events.fire({ channel: 'host.status', payload: { label: 'l20-poc', state: 'connected', message: null } });
            }
            if (text.includes('\n\nevent:') || text.match(/event: host\.status\ndata: .*\n\n/)) {
              req.destroy();
              resolve(text);
            }
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(received).toMatch(/event: host\.status\ndata: \{"label":"l20-poc","state":"connected","message":null\}\n\n/);
  });

  /** An SSE client on a real socket: its messages as parsed by the renderer's own parser. */
  function openStream(): Promise<{ id: string; messages: SseMessage[]; req: ClientRequest; res: IncomingMessage; close(): void }> {
    return new Promise((resolve, reject) => {
      const parser = new SseParser();
      const messages: SseMessage[] = [];
      const req = httpRequest({ host: '127.0.0.1', port: bridge.port, path: '/api/events', headers: { host, 'x-gpu-console-token': token } }, (res) => {
        res.setEncoding('utf8');
        res.on('data', (text: string) => messages.push(...parser.push(text)));
        const id = res.headers['x-gpu-console-stream'];
        if (typeof id !== 'string') return reject(new Error('no stream id header'));
        // the subscription exists once the first bytes came
        res.once('data', () => resolve({ id, messages, req, res, close: () => req.destroy() }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  const gpuHost = (label: string, at: number, pad = ''): HostView =>
    hostView(label, {
      gpuModel: 'H100',
      pricePerHourUsd: 2,
      gpus: [0, 1, 2, 3].map((index) => ({ index, uuid: null, name: 'H100', memoryUsedMiB: 1, memoryTotalMiB: 2, utilizationPct: (at * (index + 1)) % 101, powerW: 1, powerLimitW: 2, temperatureC: 3 })),
      gpuStale: pad !== '',
      gpuStaleReason: pad === '' ? null : `${pad}${at}`,
      services: [],
      updatedAt: at,
    });
  const fleetAt = (at: number, labels: string[], pad = ''): FleetSnapshot => ({ at, hosts: labels.map((l) => gpuHost(l, at, pad)) });

  /** Decodes a stream's fleet.tick messages in order; every one must be accepted. */
  function decodeAll(messages: SseMessage[]): FleetSnapshot[] {
    const decoder = new TickStreamDecoder();
    return messages
      .filter((m) => m.event === 'fleet.tick')
      .map((m) => {
        const r = decoder.decode('fleet.tick', JSON.parse(m.data));
        if (!r.ok) throw new Error(r.message);
        return r.state;
      });
  }

  it('delta-codes fleet.tick per connection: a client that connects mid-stream starts from a keyframe', async () => {
    const a = await openStream();
    const fired: FleetSnapshot[] = [];
    const fire = (state: FleetSnapshot) => {
      fired.push(state);
      rec.events.fire({ channel: 'fleet.tick', payload: state });
    };
    fire(fleetAt(1, ['a', 'b']));
    fire(fleetAt(2, ['a', 'b']));
    await until(() => a.messages.filter((m) => m.event === 'fleet.tick').length === 2, { what: 'two ticks on a' });
    const b = await openStream();
    expect(b.id).not.toBe(a.id);
    fire(fleetAt(3, ['b', 'c']));
    fire(fleetAt(4, ['b', 'c']));
    await until(() => b.messages.filter((m) => m.event === 'fleet.tick').length === 2, { what: 'two ticks on b' });
    await until(() => a.messages.filter((m) => m.event === 'fleet.tick').length === 4, { what: 'four ticks on a' });
    const kinds = (x: { messages: SseMessage[] }) => x.messages.filter((m) => m.event === 'fleet.tick').map((m) => (JSON.parse(m.data) as { kind: string }).kind);
    expect(kinds(a)).toEqual(['key', 'delta', 'delta', 'delta']);
    expect(kinds(b)).toEqual(['key', 'delta']);
    expect(decodeAll(a.messages)).toEqual(fired);
    expect(decodeAll(b.messages)).toEqual(fired.slice(2));
    a.close();
    b.close();
  });

  it('a backed-up client is skipped while its socket is full, and every tick it does get decodes to the state fired then', async () => {
    const c = await openStream();
    c.res.pause();
    const labels = ['a', 'b', 'c', 'd'];
    const pad = 'x'.repeat(200_000); // each tick changes ~800 KB: the socket fills after a few
    const fired = new Map<number, FleetSnapshot>();
    const fire = (state: FleetSnapshot) => {
      fired.set(state.at, state);
      rec.events.fire({ channel: 'fleet.tick', payload: state });
    };
    for (let at = 1; at <= 40; at++) {
      // hosts come and go too, so deltas carry adds and removals
      fire(fleetAt(at, at % 7 === 0 ? labels.slice(1) : labels, pad));
      await new Promise((r) => setImmediate(r));
    }
    c.res.resume();
    // once the backlog drains a tick gets through again: fire until one arrives
    let at = 41;
    for (; at < 300; at++) {
      fire(fleetAt(at, labels));
      const lastAt = at;
      const arrived = await until(() => decodeAll(c.messages).at(-1)?.at === lastAt, { what: `tick ${lastAt}`, timeoutMs: 200, intervalMs: 5 }).then(
        () => true,
        () => false,
      );
      if (arrived) break;
    }
    expect(at).toBeLessThan(300);
    const decoded = decodeAll(c.messages);
    expect(decoded.length).toBeLessThan(fired.size); // some were skipped
    expect(decoded.length).toBeGreaterThan(1);
    let last = 0;
    for (const state of decoded) {
      expect(state.at).toBeGreaterThan(last);
      last = state.at;
      expect(state).toEqual(fired.get(state.at));
    }
    c.close();
  }, 30_000);

  it('an event right after a large tick is not skipped: only a client with over 1 MiB waiting counts as backed up', async () => {
    const c = await openStream();
    const big = fleetAt(1, ['a', 'b', 'c'], 'y'.repeat(100_000)); // ~300 KB, more than the socket takes at once
    for (let i = 0; i < 3; i++) {
      rec.events.fire({ channel: 'fleet.tick', payload: { ...big, at: i + 1 } });
      rec.events.fire({ channel: 'telemetry.tick', payload: { at: i + 1, hosts: [{ host: 'a', staleReason: null, values: { 'gpu.0.util_pct': i } }] } });
    }
    await until(() => c.messages.filter((m) => m.event === 'telemetry.tick').length === 3, { what: 'every telemetry.tick' });
    expect(c.messages.map((m) => m.event)).toEqual(['fleet.tick', 'telemetry.tick', 'fleet.tick', 'telemetry.tick', 'fleet.tick', 'telemetry.tick']);
    c.close();
  });

  it('POST /api/events/resync makes that stream\'s next tick a keyframe; unknown streams 404, bad bodies 400, no token 401', async () => {
    const a = await openStream();
    const b = await openStream();
    rec.events.fire({ channel: 'fleet.tick', payload: fleetAt(1, ['a']) });
    const resync = (body: unknown, headers: Record<string, string> = {}) =>
      raw(bridge.port, {
        method: 'POST',
        path: '/api/events/resync',
        headers: { host, 'content-type': 'application/json', 'x-gpu-console-token': token, ...headers },
        body: JSON.stringify(body),
      });
    const ok = await resync({ stream: a.id, channel: 'fleet.tick' });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toEqual({ ok: true, data: {} });
    rec.events.fire({ channel: 'fleet.tick', payload: fleetAt(2, ['a']) });
    const kinds = (x: { messages: SseMessage[] }) => x.messages.filter((m) => m.event === 'fleet.tick').map((m) => (JSON.parse(m.data) as { kind: string }).kind);
    await until(() => kinds(a).length === 2 && kinds(b).length === 2, { what: 'two ticks each' });
    expect(kinds(a)).toEqual(['key', 'key']);
    expect(kinds(b)).toEqual(['key', 'delta']);

    const unknown = await resync({ stream: 'f'.repeat(32), channel: 'fleet.tick' });
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body).error.code).toBe('BRIDGE_UNKNOWN_STREAM');
    for (const body of [{ stream: a.id, channel: 'host.status' }, { stream: a.id }, { stream: a.id, channel: 'fleet.tick', extra: 1 }]) {
      const r = await resync(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(JSON.parse(r.body).error.code).toBe('CONTRACT_INVALID_INPUT');
    }
    expect((await resync({ stream: a.id, channel: 'fleet.tick' }, { 'x-gpu-console-token': 'b'.repeat(64) })).status).toBe(401);
    expect((await raw(bridge.port, { path: '/api/events/resync', headers: { host, 'x-gpu-console-token': token } })).status).toBe(405);
    a.close();
    await until(() => a.res.destroyed, { what: 'closed' });
    await new Promise((r) => setTimeout(r, 50));
    expect((await resync({ stream: a.id, channel: 'fleet.tick' })).status).toBe(404);
    b.close();
  });
});
