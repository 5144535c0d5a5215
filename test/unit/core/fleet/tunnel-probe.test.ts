import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, OnPremErrorCode, createOffPremCounter } from '../../../../src-main/core/base/index.js';
import { probeTunnel, testTunnel } from '../../../../src-main/core/fleet/index.js';
import { UpstreamClient } from '../../../../src-main/core/upstream/index.js';

// The probe and the operator's Test go through an upstream client; a client of
// a URL asks the on-prem guard when it is made, before anything connects.

let server: Server | null = null;
const clients: UpstreamClient[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.destroy()));
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = null;
});

async function models(): Promise<string> {
  server = createServer((req, res) => {
    res.writeHead(req.url === '/v1/models' ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ data: [{ id: 'qwen' }] }));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('tunnel probe and the on-prem guard', () => {
  it('probes a tunnel URL on loopback as before, counting nothing', async () => {
    const offPrem = createOffPremCounter();
    const client = UpstreamClient.forUrl(await models(), { onPrem: offPrem, purpose: 'probe' });
    clients.push(client);
    const r = await probeTunnel(client, new FakeClock(), { timeoutMs: 1000 });
    expect(r).toMatchObject({ ok: true, error: null });
    expect(offPrem.counts()).toEqual({ proxy: 0, lifecycle: 0, probe: 0 });
    const t = await testTunnel(client, 'qwen', new FakeClock(), { timeoutMs: 1000, localUrl: 'http://127.0.0.1:1' });
    expect(t.steps[0]).toMatchObject({ name: 'models', ok: true, status: 200 });
  });

  it('refuses a URL off this machine without connecting, and counts it as a probe', () => {
    const offPrem = createOffPremCounter();
    expect(() => UpstreamClient.forUrl('http://10.0.0.5:8000', { onPrem: offPrem, purpose: 'probe' })).toThrow(
      expect.objectContaining({ code: OnPremErrorCode.REFUSED, message: expect.stringContaining('http://10.0.0.5:8000') }),
    );
    expect(() => UpstreamClient.forUrl('http://example.com', { onPrem: offPrem, purpose: 'probe' })).toThrow(expect.objectContaining({ code: OnPremErrorCode.REFUSED }));
    expect(offPrem.counts()).toEqual({ proxy: 0, lifecycle: 0, probe: 2 });
  });

  it('a probe that gets no answer in time is FLEET_PROBE_TIMEOUT (what the proxy reads as a dead link)', async () => {
    server = createServer(() => undefined); // never answers
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const client = UpstreamClient.forUrl(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { onPrem: null, purpose: 'probe' });
    clients.push(client);
    const r = await probeTunnel(client, new FakeClock(), { timeoutMs: 200 });
    expect(r).toMatchObject({ ok: false, error: { code: 'FLEET_PROBE_TIMEOUT', message: 'no answer within 200 ms' } });
    const refused = UpstreamClient.forUrl('http://127.0.0.1:1', { onPrem: null, purpose: 'probe' });
    clients.push(refused);
    expect(await probeTunnel(refused, new FakeClock(), { timeoutMs: 1000 })).toMatchObject({ ok: false, error: { code: 'FLEET_PROBE_FAILED', message: expect.stringMatching(/^ECONNREFUSED /) } });
  });
});
