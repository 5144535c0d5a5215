// Holds that match what the console knows (issue #33 item 1), through the real
// console: proxy → fleet → SSH session (ssh2) → a loopback relay standing in
// for the network → an ssh2 server → a model stub. A cut link that comes back
// is held and served 200 (field notes §3: the intended behaviour); with sshd
// stopped (the relay's listener closed: ECONNREFUSED), the first refused
// reconnect releases the held request and new ones are refused at once, each
// with Retry-After = the next attempt — not held 45 s for a 503. Both
// transports: on openssh a reconnect also hands the tunnel's socket back to
// the new master, which the released request must not fall into.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src-main/core/app.js';
import type { HostState } from '../../../src-main/core/fleet/index.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { HAVE_OPENSSH } from '../../helpers/ssh-tools.js';
import { until } from '../../helpers/until.js';
import { startTestSshServer, type TestSshServer } from '../fleet/helpers/test-ssh-server.js';
import { startStub } from './helpers.js';
import { startLinkRelay, type LinkRelay } from './link-relay.js';

const okBody = JSON.stringify({ id: 'x', object: 'chat.completion', model: 'test-model', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });

// CI has the OpenSSH client (Debian 12); a machine without one runs the builtin transport only.
const TRANSPORTS = HAVE_OPENSSH ? (['builtin', 'openssh'] as const) : (['builtin'] as const);

describe.each(TRANSPORTS)('%s transport', (transport) => {
  let dir: string;
  let sshd: TestSshServer;
  let relay: LinkRelay;
  let model: Awaited<ReturnType<typeof startStub>>;
  let t: TestApp;
  let app: App;
  let token: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gc-link-holds-'));
    model = await startStub((req, res) => {
      if (req.method === 'GET' && req.url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ object: 'list', data: [{ id: 'test-model', object: 'model', owned_by: 'vllm' }] }));
      }
      if (req.method === 'POST' && req.url === '/v1/chat/completions') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(okBody);
      }
      if (req.url === '/health') return void res.writeHead(200).end();
      res.writeHead(404).end();
    });
    sshd = await startTestSshServer();
    relay = await startLinkRelay(sshd.port);
    const knownHosts = sshd.writeKnownHosts(`[127.0.0.1]:${relay.port} ${sshd.hostKeyPublicLine}\n`);
    const modelPort = Number(new URL(model.url).port);
    const configFile = join(dir, 'config.yaml');
    writeFileSync(
      configFile,
      [
        'hosts:',
        '  - label: gpu-a',
        `    ssh: { host: 127.0.0.1, port: ${relay.port}, user: ops, identityFile: ${sshd.clientKeyFile}, transport: ${transport}, keepaliveIntervalMs: 1000 }`,
        `    knownHostsFile: ${knownHosts}`,
        '    telemetry: { gpu: none }',
        '    health: { intervalMs: 0 }',
        '    services:',
        `      - { id: m, kind: vllm, remotePort: ${modelPort}, model: test-model }`,
        '',
      ].join('\n'),
    );
    t = await startTestApp({ dataDir: join(dir, 'data'), configFile, pollIntervalMs: 250, proxyPort: 0 });
    app = t.app;
    token = app.proxy.createToken('tests', 'interactive', 'test').token;
    await servedOnce();
  }, 40_000);

  afterAll(async () => {
    await t?.dispose();
    await relay?.close();
    await sshd?.close();
    await model?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const host = (): HostState => app.fleet.state().hosts.find((h) => h.label === 'gpu-a')!;

  function chat(timeoutMs = 8_000) {
    return request(`${app.proxy.url()}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test-model', messages: [{ role: 'user', content: 'hi' }] }),
      // On the old code the sshd-down request was held the full 45 s: fail within the test's time instead.
      signal: AbortSignal.timeout(timeoutMs),
    });
  }

  /** Until a request goes through (the link and its tunnel are up). */
  async function servedOnce(): Promise<void> {
    await until(async () => {
      if (host()?.session.state !== 'connected') return false;
      const res = await chat();
      await res.body.text();
      return res.statusCode === 200;
    }, { timeoutMs: 20_000, intervalMs: 200, what: () => `a request served through gpu-a (SSH ${host()?.session.state})` });
  }

  /** When the fleet first publishes `pred` of the host (the proxy routes on these publications). */
  function whenPublished(pred: (h: HostState) => boolean): Promise<number> {
    return new Promise((resolve) => {
      const sub = app.fleet.onDidChange((state) => {
        const h = state.hosts.find((x) => x.label === 'gpu-a');
        if (!h || !pred(h)) return;
        sub.dispose();
        resolve(performance.now());
      });
    });
  }

  describe('holds on the real link', () => {
    it('a cut link that comes back: the request is held and served 200, saying it was held for a reconnect', async () => {
      relay.cut();
      // Keepalive (1 s × 2) or the console's dead-link check notices; then attempts go unanswered.
      await until(() => host().session.state === 'reconnecting', { timeoutMs: 15_000, what: () => `SSH to notice the cut (${host().session.state})` });
      expect(host().session.recovery).toMatchObject({ outlook: 'transient' });
      const t0 = performance.now();
      const pending = chat(20_000);
      setTimeout(() => relay.restore(), 2_500);
      const res = await pending;
      const ms = performance.now() - t0;
      expect(res.statusCode).toBe(200);
      expect(JSON.parse(await res.body.text()).choices[0].message.content).toBe('hi');
      expect(res.headers['x-hold-reason']).toBe('reconnecting');
      expect(ms).toBeGreaterThan(2_000);
      expect(Number(res.headers['x-hold-ms'])).toBeGreaterThan(2_000);
    }, 40_000);

    it('sshd stopped: the held request is released within 1 s of the first refused reconnect, new ones are refused at once, both with Retry-After; back when sshd is', async () => {
      await servedOnce();
      const refused = whenPublished((h) => h.session.state === 'reconnecting' && h.session.lastError?.code === 'SSH_CONNECT_FAILED');
      await relay.refuse();
      // The link drops (transient: a reconnect is expected in about a second) and a request arrives.
      await until(() => host().session.state === 'reconnecting', { timeoutMs: 10_000, what: 'SSH to notice the drop' });
      const held = chat();
      const firstRefusedAt = await refused;
      const a = await held;
      const releasedAfterMs = performance.now() - firstRefusedAt;
      expect(a.statusCode).toBe(503);
      expect(releasedAfterMs).toBeLessThan(1_000);
      expect(a.headers['x-hold-reason']).toBe('reconnecting');
      expect(Number(a.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(JSON.parse(await a.body.text()).error).toMatchObject({ code: 'tunnel_down', recovery_expected: false, link_failure: 'refused' });

      // What the console knows: a refusal, and when it tries next.
      const rec = host().session.recovery;
      expect(rec).toMatchObject({ outlook: 'hard', lastFailure: 'refused', hardBecause: 'refused' });

      // A new request: refused at once, Retry-After the seconds to the next attempt.
      const t0 = performance.now();
      const b = await chat();
      const ms = performance.now() - t0;
      expect(b.statusCode).toBe(503);
      expect(ms).toBeLessThan(1_000);
      const next = host().session.nextRetryAt;
      const retryAfter = Number(b.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      if (next !== null) expect(retryAfter).toBeLessThanOrEqual(Math.max(1, Math.ceil((next - Date.now()) / 1000) + 1));
      expect(b.headers['x-hold-reason']).toBeUndefined();
      expect(b.headers['x-action-required']).toBeUndefined();
      expect(JSON.parse(await b.body.text()).error).toMatchObject({ code: 'tunnel_down', recovery_expected: false });
      // /metrics counts both: one released after a hold, one refused at once.
      const metrics = await (await request(`${new URL(app.proxy.url()!).origin}/metrics`)).body.text();
      expect(metrics).toMatch(/gpu_console_proxy_refusals_total\{upstream="gpu-a\/m",code="tunnel_down",held="true"\} [1-9]/);
      expect(metrics).toMatch(/gpu_console_proxy_refusals_total\{upstream="gpu-a\/m",code="tunnel_down",held="false"\} [1-9]/);

      // sshd back on its port: the next attempt connects and requests are served again.
      await relay.listen();
      await servedOnce();
      expect(host().session.recovery).toBeNull();
    }, 60_000);
  });
});
