import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOffPremCounter, silentLogger } from '../../../../src-main/core/base/index.js';
import { ConfigSchema } from '../../../../src-main/core/config/index.js';
import { FleetService } from '../../../../src-main/core/fleet/index.js';
import { driverFor, type LifecycleTargetConfig } from '../../../../src-main/core/lifecycle/index.js';
import { UrlClients, httpIo } from '../../../../src-main/core/lifecycle/io.js';
import { upstreamKey } from '../../../../src-main/core/upstream/index.js';
import { FakeSession } from '../fleet/fakes.js';

// A front door's admin API forwarded by one of the console's tunnels, as the
// config's advice for lifecycle.routerBaseUrl says ("forward a remote router
// with a tunnel"): the tunnel's public port refuses the router's admin paths,
// and the router driver still reaches them, through the tunnel's private end.

let router: Server;
let calls: string[];
let fleet: FleetService;

beforeEach(async () => {
  calls = [];
  router = createServer((req, res) => {
    calls.push(`${req.method} ${req.url}`);
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(req.url?.endsWith('/status') ? '{"state":"sleeping"}' : '{"ok":true}');
  });
  await new Promise<void>((r) => router.listen(0, '127.0.0.1', r));
  const routerPort = (router.address() as AddressInfo).port;
  const config = ConfigSchema.parse({
    hosts: [{ label: 'door', ssh: { host: 'gpu.example', user: 'ops', identityFile: '/keys/id' }, services: [{ id: 'admin', kind: 'vllm', remotePort: 9000, model: 'm' }] }],
  });
  fleet = new FleetService({ config, logger: silentLogger, connectionFactory: (h) => new FakeSession(h.label, new Map([[9000, routerPort]]), '') });
  await fleet.connect('door');
  await expect.poll(() => fleet.snapshot().hosts[0]!.services[0]!.tunnel.localUrl, { timeout: 5_000 }).not.toBeNull();
});

afterEach(async () => {
  await fleet.dispose();
  router.closeAllConnections();
  await new Promise((r) => router.close(r));
});

describe('lifecycle.routerBaseUrl on a tunnel port', () => {
  it('the public port refuses the admin call; the driver reaches it through the private end, on-prem', async () => {
    const publicUrl = fleet.snapshot().hosts[0]!.services[0]!.tunnel.localUrl!;
    const refused = await request(`${publicUrl}/admin/models/m/sleep?level=1`, { method: 'POST' });
    expect(refused.statusCode).toBe(403);
    await refused.body.text();
    expect(calls.filter((c) => c.startsWith('POST'))).toEqual([]);

    const privateEnd = fleet.upstream(upstreamKey('door', 'admin'));
    expect(fleet.upstreamAt(`${publicUrl}/admin/models/m/sleep?level=1`)).toEqual({ client: privateEnd, path: '/admin/models/m/sleep?level=1' });
    expect(fleet.upstreamAt(`${publicUrl.replace('127.0.0.1', 'localhost')}/x`)).toEqual({ client: privateEnd, path: '/x' });
    expect(fleet.upstreamAt('http://127.0.0.1:9/admin')).toBeNull();
    expect(fleet.upstreamAt('not a url')).toBeNull();

    const target: LifecycleTargetConfig = {
      label: 'door', serviceId: 'admin', upstream: 'door/admin', kind: 'vllm', model: 'm', remoteHost: '127.0.0.1', remotePort: 9000,
      driver: 'router', routerBaseUrl: `${publicUrl}/admin`, restartCommand: null, sleepLevel: 1,
    };
    const offPrem = createOffPremCounter();
    const urls = new UrlClients(offPrem);
    try {
      const io = httpIo(target, fleet, urls);
      const [step] = driverFor(target).plan('sleep', { sleepLevel: 1 });
      expect(step).toMatchObject({ kind: 'http', url: `${publicUrl}/admin/models/m/sleep?level=1` });
      const answer = await io.http('POST', { url: step!.kind === 'http' ? step!.url! : '' }, null, 5_000);
      expect(answer.status).toBe(200);
      expect(calls).toContain('POST /admin/models/m/sleep?level=1');
      expect(offPrem.counts()).toEqual({ proxy: 0, lifecycle: 0, probe: 0 });
    } finally {
      await urls.close();
    }
  });
});
