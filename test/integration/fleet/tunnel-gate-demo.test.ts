import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import type { IncomingMessage, Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../../../src-main/core/api.js';
import type { App } from '../../../src-main/core/app.js';
import { upstreamKey } from '../../../src-main/core/upstream/index.js';
import type { ActionView, ServiceView } from '../../../src-preload/contract/index.js';
import { startDemoConsole, type DemoConsole } from '../../helpers/demo-console.js';
import { HAVE_OPENSSH } from '../../helpers/ssh-tools.js';
import { until } from '../../helpers/until.js';

// Issue #26 (finding 7), on the demo fleet as an operator runs it, over both
// SSH transports: a plain client on a tunnel's local port (what the console
// shows and hands to apps) cannot put a model to sleep or touch its slots and
// router, and the engine never sees it try; inference still streams through
// that port; the console's own lifecycle reaches the same endpoints through
// the tunnel's private socket, after an approval.

const TRANSPORTS = HAVE_OPENSSH ? (['builtin', 'openssh'] as const) : (['builtin'] as const);

/** What an engine's HTTP server received (the simulators keep their server private: tests look in). */
function recordRequests(server: Server): string[] {
  const seen: string[] = [];
  server.prependListener('request', (req: IncomingMessage) => seen.push(`${req.method} ${req.url}`));
  return seen;
}

/** Every POST the tests send outside /v1/ is an admin call (the fleet's own polls are GETs). */
const ADMIN = /^POST (?!\/v1\/)/;

describe.each(TRANSPORTS)('%s transport: the tunnel ports refuse engine admin paths', (transport) => {
  let app: App;
  let c: DemoConsole | undefined;
  let api: Api;
  let dataDir: string;
  let qwenSeen: string[];
  let coderSeen: string[];

  const svc = (label: string, id: string): ServiceView | undefined => app.fleet.snapshot().hosts.find((h) => h.label === label)?.services.find((s) => s.id === id);
  const localUrl = (label: string, id: string) => svc(label, id)!.tunnel.localUrl!;

  /** 20 s, and a timeout shows each host's state, last error and tunnels. */
  const WAIT = { timeoutMs: 20_000, what: () => `the demo fleet; hosts were ${JSON.stringify(app.fleet.snapshot().hosts.map((h) => [h.label, h.state, h.lastError?.message, h.services.map((s) => s.tunnel.state)]))}` };

  async function call<T>(channel: string, input: unknown): Promise<T> {
    const r = await api.invoke(channel, input, { caller: 'test' });
    if (!r.ok) throw Object.assign(new Error(r.error.message), { code: r.error.code });
    return r.data as T;
  }

  beforeAll(async () => {
    // Short: the openssh transport's control sockets live under it too.
    dataDir = mkdtempSync(join(tmpdir(), 'gc-gate-'));
    c = await startDemoConsole({ dataDir, fleet: { timeScale: 100, sshTransport: transport }, proxyPort: 0, pollIntervalMs: 150 });
    app = c.app;
    api = c.api;
    qwenSeen = recordRequests((c!.demo.host('l20-poc').simulator('qwen') as unknown as { server: Server }).server);
    coderSeen = recordRequests((c!.demo.host('strix').llamaServer('coder') as unknown as { server: Server }).server);
    await until(() => svc('l20-poc', 'qwen')?.tunnel.state === 'up' && svc('l20-poc', 'qwen')?.sleep === 'awake' && svc('strix', 'coder')?.tunnel.state === 'up', WAIT);
  }, 60_000);

  afterAll(async () => {
    await c?.dispose();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("POST /sleep (and /collective_rpc, /%73leep, //sleep, a slot erase, a router unload) on a tunnel's port is 403; the engine never sees it", async () => {
    const refusals: [string, string, string][] = [
      ['l20-poc', 'qwen', '/sleep?level=1'],
      ['l20-poc', 'qwen', '/wake_up'],
      ['l20-poc', 'qwen', '/collective_rpc'],
      ['l20-poc', 'qwen', '/reset_prefix_cache'],
      ['l20-poc', 'qwen', '/%73leep'],
      ['l20-poc', 'qwen', '//sleep'],
      ['strix', 'coder', '/slots/0?action=erase'],
      ['strix', 'coder', '/models/unload'],
    ];
    for (const [label, id, path] of refusals) {
      const res = await request(`${localUrl(label, id)}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"method":"reload_weights","model":"coder"}' });
      expect(res.statusCode, path).toBe(403);
      const body = (await res.body.json()) as { error: { code: string; message: string } };
      expect(body.error.code, path).toBe('TUNNEL_ADMIN_PATH_REFUSED');
      expect(body.error.message).toMatch(/use the console's actions \(wake\/sleep\/restart\) so the change is approved and audited/);
    }
    expect(qwenSeen.filter((r) => ADMIN.test(r))).toEqual([]);
    expect(coderSeen.filter((r) => ADMIN.test(r))).toEqual([]);
    expect(c!.demo.host('l20-poc').simulator('qwen').state().sleepState).toBe('awake');
    const tunnel = app.fleet.snapshot().hosts.find((h) => h.label === 'l20-poc')!.services[0]!.tunnel;
    expect(tunnel.localUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('a streaming chat still goes through the same port', async () => {
    const res = await request(`${localUrl('l20-poc', 'qwen')}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'Qwen3.6-27B-FP8', stream: true, max_tokens: 8, messages: [{ role: 'user', content: 'hello' }] }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/event-stream/);
    const text = await res.body.text();
    expect(text.match(/^data: \{/gm)!.length).toBeGreaterThan(2);
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(qwenSeen).toContain('POST /v1/chat/completions');
  });

  it("the console's own path is the tunnel's private socket, in a 0700 folder of the data dir, closed to other users", async () => {
    const client = app.fleet.upstream(upstreamKey('l20-poc', 'qwen'));
    expect(client.endpoint).toMatchObject({ kind: 'tunnel', key: 'l20-poc/qwen' });
    const socketPath = client.endpoint.kind === 'tunnel' ? client.endpoint.socketPath : '';
    expect(dirname(socketPath)).toBe(join(dataDir, 'tunnels'));
    expect(statSync(dirname(socketPath)).mode & 0o777).toBe(0o700);
    expect(statSync(socketPath).isSocket()).toBe(true);
    expect(statSync(socketPath).mode & 0o077).toBe(0);
    const res = await client.request({ path: '/is_sleeping', deadlineMs: 10_000, maxBodyBytes: 64 * 1024 });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ is_sleeping: false });
    // Another local user cannot connect to it by path (root would: the check runs as nobody).
    if (process.getuid?.() === 0) {
      // A spawn can fail for reasons of the machine (EAGAIN under load): that is retried once and
      // named, never read as "no output".
      let seen = await connectAsNobody(socketPath);
      if (seen.spawnError !== null || seen.out === '') seen = await connectAsNobody(socketPath);
      expect(seen, JSON.stringify(seen)).toMatchObject({ spawnError: null, out: 'EACCES' });
    }
  });

  it('the lifecycle still puts the model to sleep and wakes it, approved and audited, through the private path', async () => {
    const act = async (kind: 'sleep' | 'wake'): Promise<ActionView> => {
      const { action } = await call<{ action: ActionView }>('actions.propose', { upstream: 'l20-poc/qwen', kind, reason: 'tunnel gate test' });
      await call('actions.approve', { id: action.id, nonce: action.nonce, displayName: 'Test Operator' });
      return app.lifecycle.service.settled(action.id);
    };
    const slept = await act('sleep');
    expect(slept.state, slept.error ?? undefined).toBe('verified');
    expect(qwenSeen.some((r) => /^POST \/sleep/.test(r))).toBe(true);
    await until(() => svc('l20-poc', 'qwen')?.sleep === 'asleep-1', WAIT);
    const woke = await act('wake');
    expect(woke.state, woke.error ?? undefined).toBe('verified');
    await until(() => svc('l20-poc', 'qwen')?.sleep === 'awake', WAIT);
  }, 40_000);
});

/** Connects to a Unix socket as user nobody; what the child printed (its error code, or CONNECTED). */
async function connectAsNobody(socketPath: string): Promise<{ out: string; err: string; code: number | null; spawnError: string | null }> {
  const script = `require('net').connect(${JSON.stringify(socketPath)}).on('connect',()=>process.stdout.write('CONNECTED',()=>process.exit(0))).on('error',e=>process.stdout.write(String(e.code),()=>process.exit(0)))`;
  const child = spawn(process.execPath, ['-e', script], { uid: 65534, gid: 65534, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let spawnError: string | null = null;
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  child.once('error', (e) => (spawnError = e.message));
  const code = await new Promise<number | null>((r) => child.once('close', (c) => r(c)));
  return { out: out.trim(), err: err.trim().slice(0, 500), code, spawnError };
}
