// Real HTTP receivers on 127.0.0.1, one per channel shape, plus one that is down and one that is slow.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src-main/core/base/index.js';
import { DeliveryDispatcher, SIGNATURE_HEADER, TIMESTAMP_HEADER, type ConsoleNotification } from '../../../src-main/core/notify/index.js';
import { NotifyChannelConfigSchema, type NotifyDelivery } from '../../../src-preload/contract/notify.js';
import { until } from '../../helpers/until.js';

interface Got { url: string; headers: IncomingMessage['headers']; body: string }
const servers: Server[] = [];
const dispatchers: DeliveryDispatcher[] = [];
afterEach(async () => {
  for (const d of dispatchers.splice(0)) d.dispose();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => { s.closeAllConnections(); s.close(r); })));
});

async function receiver(opts: { delayMs?: number; status?: number } = {}): Promise<{ base: string; got: Got[] }> {
  const got: Got[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      got.push({ url: req.url ?? '', headers: req.headers, body });
      setTimeout(() => { if (!res.destroyed) res.writeHead(opts.status ?? 200).end('ok'); }, opts.delayMs ?? 0);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, got };
}

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

const SECRETS: Record<string, string> = { 'notify.hook': 'hmac-key-123', 'notify.zulip': 'zulip-api-key', 'notify.ntfy': 'ntfy-token' };
const notice: ConsoleNotification = { id: 7, key: 'host:l20', severity: 'critical', title: 'Host l20 down', body: 'no answer', route: 'fleet/l20', event: 'host.down', at: 1, outcome: 'sent' };

function dispatcher(channels: unknown[], extra: { timeoutMs?: number } = {}) {
  const rows: NotifyDelivery[] = [];
  const d = new DeliveryDispatcher({
    clock: systemClock, channels: () => channels.map((c) => NotifyChannelConfigSchema.parse(c)), secret: async (c) => SECRETS[c.secretRef ?? ''] ?? null,
    // The receivers are on loopback, as a config.yaml channel may be (no destination rule).
    destination: () => null,
    record: (r) => rows.push(r), initialBackoffMs: 20, maxBackoffMs: 80, maxAttempts: 3, timeoutMs: extra.timeoutMs ?? 2_000,
  });
  dispatchers.push(d);
  return { d, rows };
}
describe('deliveries to real receivers', () => {
  it('delivers each shape: slack, zulip, ntfy, signed webhook', async () => {
    const [slack, zulip, ntfy, hook] = await Promise.all([receiver(), receiver(), receiver(), receiver()]);
    const events = ['host.down'];
    const { d, rows } = dispatcher([
      { id: 'slack', kind: 'slack', url: `${slack.base}/services/T/B/X`, events },
      { id: 'zulip', kind: 'zulip', url: zulip.base, events, secretRef: 'notify.zulip', zulip: { email: 'bot@example.org', stream: 'ops' } },
      { id: 'ntfy', kind: 'ntfy', url: `${ntfy.base}/gpu-alerts`, events, secretRef: 'notify.ntfy' },
      { id: 'hook', kind: 'webhook', url: `${hook.base}/in`, events, secretRef: 'notify.hook' },
    ]);
    d.dispatch(notice);
    await until(() => rows.filter((r) => r.status === 'delivered').length === 4, { timeoutMs: 5_000 });

    expect(JSON.parse(slack.got[0]!.body)).toEqual({ text: '[critical] Host l20 down — no answer' });
    expect(zulip.got[0]!.url).toBe('/api/v1/messages');
    expect(new URLSearchParams(zulip.got[0]!.body).get('to')).toBe('ops');
    expect(Buffer.from(zulip.got[0]!.headers.authorization!.slice(6), 'base64').toString()).toBe('bot@example.org:zulip-api-key');
    expect(ntfy.got[0]!.headers).toMatchObject({ title: 'Host l20 down', priority: '5', authorization: 'Bearer ntfy-token' });
    const h = hook.got[0]!;
    const ts = String(h.headers[TIMESTAMP_HEADER]);
    const want = Buffer.from('sha256=' + createHmac('sha256', 'hmac-key-123').update(`${ts}.${h.body}`).digest('hex'));
    expect(timingSafeEqual(want, Buffer.from(String(h.headers[SIGNATURE_HEADER])))).toBe(true);
    // Nothing recorded carries a URL or a secret.
    const recorded = JSON.stringify(rows);
    for (const s of [...Object.values(SECRETS), '127.0.0.1', '/services/']) expect(recorded).not.toContain(s);
  });

  it('a receiver that is down: refused, retried with backoff, each attempt recorded, the caller not blocked', async () => {
    const port = await closedPort();
    const { d, rows } = dispatcher([{ id: 'down', kind: 'slack', url: `http://127.0.0.1:${port}/x`, events: ['host.down'] }]);
    const t = performance.now();
    d.dispatch(notice);
    expect(performance.now() - t).toBeLessThan(20);
    await until(() => rows.some((r) => r.status === 'failed'), { timeoutMs: 5_000 });
    expect(rows.map((r) => `${r.attempt}:${r.status}:${r.error}`)).toEqual(['1:retrying:ECONNREFUSED', '2:retrying:ECONNREFUSED', '3:failed:ECONNREFUSED']);
  });

  it('a slow receiver: the attempt times out and is retried', async () => {
    const slow = await receiver({ delayMs: 1_000 });
    const { d, rows } = dispatcher([{ id: 'slow', kind: 'webhook', url: `${slow.base}/in`, events: ['host.down'], secretRef: 'notify.hook' }], { timeoutMs: 150 });
    d.dispatch(notice);
    await until(() => rows.some((r) => r.status === 'failed'), { timeoutMs: 5_000 });
    expect(rows).toHaveLength(3);
    expect(rows.map((r) => `${r.httpStatus}:${r.error}`)).toEqual(Array(3).fill('null:TIMEOUT'));
    expect(slow.got.length).toBe(3);
  });

  it('a 503 is retried, then a send test reports the outcome', async () => {
    const bad = await receiver({ status: 503 });
    const { d } = dispatcher([]);
    const out = await d.test(NotifyChannelConfigSchema.parse({ id: 't', kind: 'slack', url: `${bad.base}/x`, events: ['other'] }), { ...notice, event: 'other' });
    expect(out).toMatchObject({ status: 'failed', httpStatus: 503, attempt: 3 });
  });
});
