import { createHmac, timingSafeEqual } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { DeliveryDispatcher, buildRequest, inQuietHours, SIGNATURE_HEADER, TIMESTAMP_HEADER, type Sender } from '../../../../src-main/core/notify/index.js';
import type { ConsoleNotification } from '../../../../src-main/core/notify/index.js';
import { NotifyChannelConfigSchema, type NotifyDelivery } from '../../../../src-preload/contract/notify.js';

const n = (over: Partial<ConsoleNotification> = {}): ConsoleNotification => ({
  id: 1, key: 'host:a', severity: 'critical', title: 'Host a down', body: 'no answer for 30 s', route: 'fleet/a', event: 'host.down', at: 1, outcome: 'sent', ...over,
});
const ch = (over: Record<string, unknown> = {}) => NotifyChannelConfigSchema.parse({ id: 'c1', kind: 'webhook', url: 'http://127.0.0.1:9/hook', events: ['host.down', 'alert.warning'], secretRef: 'notify.c1', ...over });
const flush = () => new Promise<void>((r) => setImmediate(r));

describe('message shapes', () => {
  it('webhook: JSON body with an HMAC-SHA256 signature of timestamp.body', () => {
    const req = buildRequest(ch(), n(), 's3cret', 1_700_000_000_000);
    const ts = req.headers[TIMESTAMP_HEADER]!;
    expect(ts).toBe('1700000000');
    const expected = Buffer.from('sha256=' + createHmac('sha256', 's3cret').update(`${ts}.${req.body}`).digest('hex'));
    expect(timingSafeEqual(expected, Buffer.from(req.headers[SIGNATURE_HEADER]!))).toBe(true);
    expect(JSON.parse(req.body)).toMatchObject({ event: 'host.down', severity: 'critical', title: 'Host a down' });
    expect(req.body).not.toContain('s3cret');
  });
  it('slack: {text}', () => {
    const req = buildRequest(ch({ kind: 'slack', secretRef: undefined }), n(), null, 0);
    expect(JSON.parse(req.body)).toEqual({ text: '[critical] Host a down — no answer for 30 s' });
  });
  it('zulip: form-encoded stream message with basic auth', () => {
    const req = buildRequest(ch({ kind: 'zulip', url: 'https://z.example.org', zulip: { email: 'bot@z.example.org', stream: 'ops' } }), n(), 'KEY', 0);
    expect(req.url).toBe('https://z.example.org/api/v1/messages');
    const form = new URLSearchParams(req.body);
    expect(form.get('type')).toBe('stream');
    expect(form.get('to')).toBe('ops');
    expect(form.get('topic')).toBe('GPU Console');
    expect(Buffer.from(req.headers.authorization!.slice(6), 'base64').toString()).toBe('bot@z.example.org:KEY');
  });
  it('ntfy: title, priority, tags headers, optional bearer', () => {
    const req = buildRequest(ch({ kind: 'ntfy', url: 'https://ntfy.sh/gpu', secretRef: undefined }), n(), null, 0);
    expect(req.headers).toMatchObject({ title: 'Host a down', priority: '5', tags: 'rotating_light,host.down' });
    expect(req.headers.authorization).toBeUndefined();
    expect(buildRequest(ch({ kind: 'ntfy' }), n(), 'tok', 0).headers.authorization).toBe('Bearer tok');
  });
});

describe('channel config', () => {
  it('names the bad field', () => {
    const bad = (over: Record<string, unknown>) => NotifyChannelConfigSchema.safeParse({ id: 'c1', kind: 'webhook', url: 'http://x/h', events: ['host.down'], secretRef: 'notify.r', ...over });
    expect(bad({ url: 'not a url' }).error?.issues[0]?.path).toEqual(['url']);
    expect(bad({ kind: 'pager' }).error?.issues[0]?.path).toEqual(['kind']);
    expect(bad({ secretRef: undefined }).error?.issues[0]?.path).toEqual(['secretRef']);
    expect(bad({ url: 'ftp://x/h' }).error?.issues[0]?.path).toEqual(['url']);
  });
  it('a secretRef is one notify.<name>: never another capability\'s secret nor a console channel\'s stored URL', () => {
    const ref = (secretRef: string) => NotifyChannelConfigSchema.safeParse({ id: 'c1', kind: 'webhook', url: 'http://x/h', events: ['host.down'], secretRef });
    for (const bad of ['ssh.passphrase.l20-poc', 'upstream.apikey.qwen', 'notify.other.url', 'notify.', 'notify:c1', 'NOTIFY.c1', 'proxy.token']) {
      expect(ref(bad).error?.issues[0]?.path, bad).toEqual(['secretRef']);
    }
    for (const ok of ['notify.zulip', 'notify.ops-hook', 'notify.Pager_2']) expect(ref(ok).success, ok).toBe(true);
  });
});

describe('quiet hours', () => {
  it('wraps midnight and honours the time zone', () => {
    const at = (iso: string) => Date.parse(iso);
    const q = { from: '22:00', to: '07:00', tz: 'UTC' };
    expect(inQuietHours(q, at('2026-01-01T23:30:00Z'))).toBe(true);
    expect(inQuietHours(q, at('2026-01-01T06:59:00Z'))).toBe(true);
    expect(inQuietHours(q, at('2026-01-01T07:00:00Z'))).toBe(false);
    expect(inQuietHours({ from: '09:00', to: '17:00', tz: 'Asia/Tokyo' }, at('2026-01-01T01:00:00Z'))).toBe(true);
    expect(inQuietHours(undefined, 0)).toBe(false);
  });
});

function setup(channels: ReturnType<typeof ch>[], send: Sender, clock = new FakeClock(), random = () => 0.5) {
  const rows: NotifyDelivery[] = [];
  // random 0.5: the middle of the ±20 % jitter, i.e. the plain exponential delays.
  const d = new DeliveryDispatcher({ clock, channels: () => channels, secret: async () => 'sek', destination: () => null, record: (r) => rows.push(r), send, initialBackoffMs: 1_000, maxBackoffMs: 4_000, maxAttempts: 4, random });
  return { d, rows, clock };
}

describe('DeliveryDispatcher', () => {
  it('retries with exponential backoff (1 s, 2 s, 4 s) and records each attempt', async () => {
    const calls: number[] = [];
    const clock = new FakeClock();
    const { d, rows } = setup([ch()], async () => { calls.push(clock.now()); throw Object.assign(new Error('x'), { code: 'ECONNREFUSED' }); }, clock);
    d.dispatch(n());
    await flush();
    for (const ms of [1_000, 2_000, 4_000]) { clock.advance(ms); await flush(); }
    const t0 = calls[0]!;
    expect(calls.map((c) => c - t0)).toEqual([0, 1_000, 3_000, 7_000]);
    expect(rows.map((r) => `${r.attempt}:${r.status}:${r.error}`)).toEqual(['1:retrying:ECONNREFUSED', '2:retrying:ECONNREFUSED', '3:retrying:ECONNREFUSED', '4:failed:ECONNREFUSED']);
  });
  it('spreads retries by ±20 % so channels that failed together do not retry in step', async () => {
    for (const [r, expected] of [[0, 800], [1, 1_200]] as const) {
      const calls: number[] = [];
      const clock = new FakeClock();
      const { d } = setup([ch()], async () => { calls.push(clock.now()); throw Object.assign(new Error('x'), { code: 'ECONNREFUSED' }); }, clock, () => r);
      d.dispatch(n());
      await flush();
      clock.advance(expected - 1);
      await flush();
      expect(calls.length).toBe(1);
      clock.advance(1);
      await flush();
      expect(calls.map((c) => c - calls[0]!)).toEqual([0, expected]);
      await d.dispose();
    }
  });

  it('does not retry a 4xx other than 429', async () => {
    const { d, rows } = setup([ch()], async () => ({ status: 400 }));
    d.dispatch(n());
    await flush();
    expect(rows.map((r) => r.status)).toEqual(['failed']);
  });
  it('routes by event and minimum severity', async () => {
    const sent: string[] = [];
    const { d } = setup([ch({ id: 'a', minSeverity: 'critical' }), ch({ id: 'b', events: ['approval.waiting'] })], async (req) => { sent.push(req.url); return { status: 200 }; });
    d.dispatch(n({ severity: 'warning', event: 'alert.warning' }));
    d.dispatch(n({ event: 'host.down' }));
    await flush();
    expect(sent).toHaveLength(1);
  });
  it('rate-limits per channel per minute', async () => {
    const { d, rows, clock } = setup([ch({ maxPerMinute: 2 })], async () => ({ status: 204 }));
    for (let i = 0; i < 4; i++) d.dispatch(n({ key: `k${i}` }));
    await flush(); await flush();
    expect(rows.map((r) => r.status).sort()).toEqual(['delivered', 'delivered', 'rate-limited', 'rate-limited']);
    clock.advance(60_000);
    d.dispatch(n());
    await flush();
    expect(rows.filter((r) => r.status === 'delivered')).toHaveLength(3);
  });
  it('quiet hours hold warnings, let criticals through', async () => {
    const clock = new FakeClock(Date.parse('2026-01-01T23:00:00Z'));
    const { d, rows } = setup([ch({ quietHours: { from: '22:00', to: '07:00' } })], async () => ({ status: 200 }), clock);
    d.dispatch(n({ severity: 'warning', event: 'alert.warning' }));
    d.dispatch(n());
    await flush();
    expect(rows.map((r) => `${r.event}:${r.status}`).sort()).toEqual(['alert.warning:skipped-quiet', 'host.down:delivered']);
  });
  it('asks the secret and the destination rule for the channel being sent; with no rule given, loopback is refused', async () => {
    const seen: unknown[] = [];
    const asked: string[] = [];
    const c = ch();
    const send: Sender = async (_req, _t, rule) => { seen.push(rule); return { status: 204 }; };
    const rows: NotifyDelivery[] = [];
    const d = new DeliveryDispatcher({ clock: new FakeClock(), channels: () => [c], secret: async (x) => { asked.push(x.id); return 'k'; }, record: (r) => rows.push(r), send });
    d.dispatch(n());
    await flush();
    expect(asked).toEqual(['c1']);
    expect(seen).toEqual([{ allowLoopback: false }]);
    const d2 = new DeliveryDispatcher({ clock: new FakeClock(), channels: () => [c], secret: async () => 'k', destination: () => ({ allowLoopback: true }), record: () => undefined, send });
    d2.dispatch(n());
    await flush();
    expect(seen.at(-1)).toEqual({ allowLoopback: true });
  });
  it('a refused destination, a forbidden secret or a channel changed under the notice fails at once: no retry would mend it', async () => {
    for (const code of ['NOTIFY_DESTINATION_REFUSED', 'NOTIFY_SECRET_REF_FORBIDDEN', 'NOTIFY_CHANNEL_CHANGED']) {
      const clock = new FakeClock();
      let calls = 0;
      const refusing = code === 'NOTIFY_DESTINATION_REFUSED';
      const rows: NotifyDelivery[] = [];
      const d = new DeliveryDispatcher({
        clock, channels: () => [ch()], record: (r) => rows.push(r), initialBackoffMs: 10,
        secret: async () => { if (!refusing) throw Object.assign(new Error('no'), { code }); return 'k'; },
        send: async () => { calls += 1; throw Object.assign(new Error('no'), { code }); },
      });
      d.dispatch(n());
      await flush();
      clock.advance(60_000);
      await flush();
      expect(rows.map((r) => `${r.attempt}:${r.status}:${r.error}`), code).toEqual([`1:failed:${code}`]);
      expect(calls, code).toBe(refusing ? 1 : 0);
    }
  });
  it('dispatch returns at once while a send hangs', () => {
    const { d } = setup([ch()], () => new Promise(() => {}));
    const t = performance.now();
    for (let i = 0; i < 5; i++) d.dispatch(n({ key: `k${i}` }));
    expect(performance.now() - t).toBeLessThan(50);
    d.dispose();
  });
});
