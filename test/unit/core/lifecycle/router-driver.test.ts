import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger, systemClock } from '../../../../src-main/core/base/index.js';
import { driverFor, LifecycleService, type LifecycleTargetConfig } from '../../../../src-main/core/lifecycle/index.js';
import { UrlClients, httpIo } from '../../../../src-main/core/lifecycle/io.js';
import { openStore, type Store } from '../../../../src-main/core/store/index.js';
import { urlClient } from '../../../helpers/upstream.js';
import { fleetStateOf } from '../../../helpers/fleet-state.js';

// The router admin driver against a small stub router on 127.0.0.1 that
// records every call: the planned calls hit exactly the paths the driver
// documents, the status it reads is what the router says, and every failure
// comes back as a coded error (never a bare exception, never "verified").

interface Stub {
  server: Server;
  base: string;
  calls: string[];
  state: Map<string, string>;
  /** Next POST answers with this status instead of acting. */
  failNext: number | null;
  statusBody: string | null;
  hang: boolean;
}

async function startStub(): Promise<Stub> {
  const stub: Stub = { server: null as unknown as Server, base: '', calls: [], state: new Map(), failNext: null, statusBody: null, hang: false };
  stub.server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      stub.calls.push(`${req.method} ${url.pathname}${url.search}`);
      if (stub.hang) return; // never answers
      const send = (status: number, body: string) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(body);
      };
      if (url.pathname === '/health') return send(200, '{}');
      const m = /^\/admin\/models\/([^/]+)\/(status|up|sleep|down|restart)$/.exec(url.pathname);
      if (!m) return send(404, '{"error":"no such route"}');
      const model = decodeURIComponent(m[1]!);
      const verb = m[2]!;
      if (verb === 'status' && req.method === 'GET') {
        if (stub.statusBody !== null) return send(200, stub.statusBody);
        if (!stub.state.has(model)) return send(404, '{"error":"unknown model"}');
        return send(200, JSON.stringify({ state: stub.state.get(model) }));
      }
      if (req.method !== 'POST') return send(405, '{}');
      if (stub.failNext !== null) {
        const s = stub.failNext;
        stub.failNext = null;
        return send(s, '{"error":"router refused"}');
      }
      stub.state.set(model, verb === 'up' || verb === 'restart' ? 'awake' : verb === 'sleep' ? 'sleeping' : 'down');
      return send(200, '{"ok":true}');
    });
  });
  await new Promise<void>((r) => stub.server.listen(0, '127.0.0.1', r));
  stub.base = `http://127.0.0.1:${(stub.server.address() as AddressInfo).port}`;
  return stub;
}

const T = (over: Partial<LifecycleTargetConfig> = {}): LifecycleTargetConfig => ({
  label: 'h1', serviceId: 'qwen', upstream: 'h1/qwen', kind: 'vllm', model: 'Qwen/Qwen3-8B', remoteHost: '127.0.0.1', remotePort: 8000,
  driver: 'router', routerBaseUrl: null, restartCommand: null, sleepLevel: 1, ...over,
});

let stub: Stub;
let agent: UrlClients;
const fleet = (tunnel: string) => ({
  state: () => fleetStateOf({ at: Date.now(), hosts: [] }),
  upstream: () => urlClient(tunnel),
  exec: () => Promise.reject(new Error('no ssh in this test')),
});
const codeOf = async (p: Promise<unknown>): Promise<string> => p.then(() => 'no error', (err: { code?: string }) => err.code ?? 'uncoded');

beforeEach(async () => {
  stub = await startStub();
  agent = new UrlClients(null);
});
afterEach(async () => {
  await agent.close();
  stub.server.closeAllConnections();
  await new Promise((r) => stub.server.close(r));
});

describe('router admin driver', () => {
  it('plans status / up / sleep / down / restart on the documented paths, model URL-encoded, base trailing slash ignored', () => {
    const d = driverFor(T({ routerBaseUrl: `${stub.base}/admin/`, sleepLevel: 2 }));
    expect(d.name).toBe('router');
    const m = `${stub.base}/admin/models/Qwen%2FQwen3-8B`;
    expect(d.plan('wake', { sleepLevel: 2 })).toEqual([{ kind: 'http', method: 'POST', path: null, url: `${m}/up`, body: null }]);
    expect(d.plan('sleep', { sleepLevel: 0 })).toEqual([{ kind: 'http', method: 'POST', path: null, url: `${m}/sleep?level=2`, body: null }]);
    expect(d.plan('offload', { sleepLevel: 0 })[0]).toMatchObject({ url: `${m}/down` });
    expect(d.plan('restart', { sleepLevel: 0 })[0]).toMatchObject({ url: `${m}/restart` });
  });

  it('executing the plan hits the stub exactly, and status reads back what the router says', async () => {
    const target = T({ routerBaseUrl: `${stub.base}/admin` });
    const d = driverFor(target);
    const io = httpIo(target, fleet(stub.base), agent);
    stub.state.set('Qwen/Qwen3-8B', 'awake');
    expect(await d.readSleeping(io, 2_000)).toBe(false);
    for (const [kind, asleep] of [['sleep', true], ['wake', false], ['offload', true]] as const) {
      const [step] = d.plan(kind, { sleepLevel: null });
      if (step?.kind !== 'http') throw new Error('expected an http step');
      const r = await io.http(step.method, { url: step.url! }, step.body, 2_000);
      expect(r.status).toBe(200);
      expect(await d.readSleeping(io, 2_000)).toBe(asleep);
    }
    expect(stub.calls).toEqual([
      'GET /admin/models/Qwen%2FQwen3-8B/status',
      'POST /admin/models/Qwen%2FQwen3-8B/sleep?level=1',
      'GET /admin/models/Qwen%2FQwen3-8B/status',
      'POST /admin/models/Qwen%2FQwen3-8B/up',
      'GET /admin/models/Qwen%2FQwen3-8B/status',
      'POST /admin/models/Qwen%2FQwen3-8B/down',
      'GET /admin/models/Qwen%2FQwen3-8B/status',
    ]);
  });

  it('surfaces errors with codes: no base URL, unknown model, non-JSON status, router down, router hangs', async () => {
    const none = driverFor(T());
    expect(none.supports('sleep')).toBe(false);
    expect(() => none.plan('sleep', { sleepLevel: 0 })).toThrow(expect.objectContaining({ code: 'LIFECYCLE_UNSUPPORTED_ACTION' }) as Error);

    const target = T({ routerBaseUrl: `${stub.base}/admin` });
    const d = driverFor(target);
    const io = httpIo(target, fleet(stub.base), agent);
    expect(await d.readSleeping(io, 2_000)).toBeNull(); // 404 unknown model: "cannot tell", not a guess
    stub.statusBody = '<html>oops</html>';
    expect(await codeOf(d.readSleeping(io, 2_000))).toBe('LIFECYCLE_STEP_FAILED');
    stub.statusBody = null;

    stub.hang = true;
    const t0 = Date.now();
    const hung = await io.http('POST', { url: `${stub.base}/admin/models/x/up` }, null, 300).catch((e: unknown) => e as { code: string; details: { timedOut: boolean } });
    expect(hung).toMatchObject({ code: 'LIFECYCLE_STEP_FAILED', details: { timedOut: true } });
    expect(Date.now() - t0).toBeLessThan(3_000);
    stub.hang = false;

    const downTarget = T({ routerBaseUrl: 'http://127.0.0.1:9/admin' });
    expect(await codeOf(driverFor(downTarget).readSleeping(httpIo(downTarget, fleet(stub.base), agent), 1_000))).toBe('LIFECYCLE_STEP_FAILED');
  });
});

describe('router driver through the action queue', () => {
  let store: Store;
  let service: LifecycleService;
  let targets: readonly LifecycleTargetConfig[];
  beforeEach(() => {
    store = openStore({ file: join(mkdtempSync(join(tmpdir(), 'gc-lc-router-')), 'db.sqlite'), clock: systemClock, logger: silentLogger });
    targets = [T({ routerBaseUrl: `${stub.base}/admin` })];
    service = new LifecycleService({
      store, clock: systemClock, logger: silentLogger, targets: () => targets,
      fleet: {
        state: () => fleetStateOf({
          at: Date.now(),
          hosts: [{
            label: 'h1', address: 'a', state: 'connected', lastError: null, nextRetryAt: null, hostKeyFingerprint: null, gpuModel: null, pricePerHourUsd: null,
            gpus: [], gpuStale: true, gpuStaleReason: 'x', updatedAt: null,
            services: [{ id: 'qwen', kind: 'vllm', model: 'Qwen/Qwen3-8B', aliases: [], slots: 4, remotePort: 8000, tunnel: { state: 'up', localUrl: null, lastError: null }, health: 'ok', sleep: 'awake', requestsRunning: 0, requestsWaiting: 0, kvCachePct: 0, generationTokensPerS: 0, promptTokensPerS: 0, stale: false, staleReason: null }],
          }],
        }),
        upstream: () => urlClient(stub.base),
        exec: () => Promise.reject(new Error('no ssh')),
      },
      proxy: null,
      onAction: () => undefined, onStanding: () => undefined, notify: () => undefined,
      options: { verifyDeadlineMs: () => 3_000, pollMs: 50 },
    });
    stub.state.set('Qwen/Qwen3-8B', 'awake');
  });
  afterEach(async () => {
    await service.dispose();
    store.close();
  });

  it('an approved sleep POSTs the router once, then verifies through its status', async () => {
    const { action } = service.propose({ upstream: 'h1/qwen', kind: 'sleep', proposer: 'test' });
    expect(action.steps.find((s) => s.kind === 'http')!.text).toBe(`POST ${stub.base}/admin/models/Qwen%2FQwen3-8B/sleep?level=1`);
    expect(stub.calls.filter((c) => c.startsWith('POST'))).toEqual([]); // proposing calls nothing
    service.approve({ id: action.id, nonce: action.nonce!, caller: 'test' });
    const done = await service.settled(action.id);
    expect(done.state, `${done.error} ${done.observed.join('; ')}`).toBe('verified');
    expect(done.observed.join('\n')).toMatch(/sleep state: asleep \(expected asleep\)/);
    expect(stub.calls.filter((c) => c.startsWith('POST'))).toEqual(['POST /admin/models/Qwen%2FQwen3-8B/sleep?level=1']);
  });

  it('a router that refuses (HTTP 500) fails the action with LIFECYCLE_STEP_FAILED and the status in the audit row', async () => {
    stub.failNext = 500;
    const { action } = service.propose({ upstream: 'h1/qwen', kind: 'sleep', proposer: 'test' });
    service.approve({ id: action.id, nonce: action.nonce!, caller: 'test' });
    const done = await service.settled(action.id);
    expect(done.state).toBe('failed');
    expect(done.error).toMatch(/^LIFECYCLE_STEP_FAILED: .*HTTP 500/);
    const step = store.audit.list({ limit: 50 }).find((e) => e.payload.actionId === action.id && e.type === 'lifecycle.step')!;
    expect(step.payload).toMatchObject({ status: 500 });
    expect(stub.state.get('Qwen/Qwen3-8B')).toBe('awake');
  });
});
