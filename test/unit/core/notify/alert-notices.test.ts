// An alert's notice in outside channels (a text sparkline of its series and
// where the console opens on it) and the fallback when a channel gives up.
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { DeliveryDispatcher, NotificationService, buildRequest, type ConsoleNotification } from '../../../../src-main/core/notify/index.js';
import { fallbackNotice } from '../../../../src-main/core/notify/fallback.js';
import { sparkline, SPARKLINE_MAX_CHARS } from '../../../../src-main/core/notify/sparkline.js';
import { NotifyChannelConfigSchema, type ConsoleNotificationView } from '../../../../src-preload/contract/notify.js';

const series = { unit: 'tok/s per sequence', at: [0, 60_000, 120_000, 180_000, 240_000, 300_000], values: [18, 18, null, 12, 9, 9] };
const alertNotice = (over: Partial<ConsoleNotification> = {}): ConsoleNotification => ({
  id: 7, key: 'alert:throughput:gpu-a/qwen', severity: 'critical', title: 'gpu-a: throughput', body: 'qwen: 9.0 tok/s per sequence, 50 % below 18.0', route: 'hosts/gpu-a/qwen', event: 'alert.critical', at: 1, outcome: 'sent', series, ...over,
});
const ch = (over: Record<string, unknown> = {}) => NotifyChannelConfigSchema.parse({ id: 'oncall', kind: 'slack', url: 'https://hooks.slack.example/T/B/x', events: ['alert.critical', 'alert.warning'], ...over });
const flush = () => new Promise<void>((r) => setImmediate(r));

describe('sparkline', () => {
  it('scales between the series\' own low and high, leaves a gap for a missing reading and names the range, unit and span', () => {
    expect(sparkline(series)).toBe('██ ▃▁▁ 9.00–18.0 tok/s per sequence (last 5 min)');
  });
  it('a series without readings draws nothing; a flat one draws full bars; a long one is cut to the width', () => {
    expect(sparkline({ unit: '°C', at: [0, 1000], values: [null, null] })).toBeNull();
    expect(sparkline({ unit: '°C', at: [0, 1000], values: [88, 88] })).toBe('██ 88.0 °C (last 1 s)');
    const long = { unit: 's', at: Array.from({ length: 120 }, (_, i) => i * 1000), values: Array.from({ length: 120 }, (_, i) => i) };
    const bars = sparkline(long)!.split(' ')[0]!;
    expect(bars).toHaveLength(SPARKLINE_MAX_CHARS);
    expect(bars[0]).toBe('▁');
    expect(bars.at(-1)).toBe('█');
  });
});

describe('alert notices in outside channels', () => {
  it('slack, zulip and ntfy get the sparkline and the console route under the body; the webhook gets the series itself', () => {
    const slack = JSON.parse(buildRequest(ch(), alertNotice(), null, 0).body) as { text: string };
    expect(slack.text.split('\n')).toEqual(['[critical] gpu-a: throughput — qwen: 9.0 tok/s per sequence, 50 % below 18.0', '██ ▃▁▁ 9.00–18.0 tok/s per sequence (last 5 min)', 'In GPU Console: hosts/gpu-a/qwen']);
    const zulip = new URLSearchParams(buildRequest(ch({ kind: 'zulip', url: 'https://z.example.org', zulip: { email: 'b@z.example.org', stream: 'ops' }, secretRef: 'notify.z' }), alertNotice(), 'k', 0).body);
    expect(zulip.get('content')).toContain('\nIn GPU Console: hosts/gpu-a/qwen');
    expect(buildRequest(ch({ kind: 'ntfy', url: 'https://ntfy.sh/gpu' }), alertNotice(), null, 0).body).toContain('▃▁▁ 9.00–18.0');
    const hook = JSON.parse(buildRequest(ch({ kind: 'webhook', url: 'https://h.example/x', secretRef: 'notify.h' }), alertNotice(), 's', 0).body) as { series: unknown; route: string };
    expect(hook.series).toEqual(series);
    expect(hook.route).toBe('hosts/gpu-a/qwen');
  });
  it('a unit from outside cannot page a workspace; a notice without a series is unchanged', () => {
    const hostile = alertNotice({ series: { ...series, unit: '<!channel>' } });
    expect(JSON.parse(buildRequest(ch(), hostile, null, 0).body).text).not.toContain('<!channel>');
    const plain = JSON.parse(buildRequest(ch(), alertNotice({ series: undefined, event: 'host.down' }), null, 0).body) as { text: string };
    expect(plain.text).not.toContain('\n');
  });
});

describe('a channel that gives up', () => {
  it('after its last attempt, the notice is shown in the app and on the desktop, saying which channel failed and why; never sent outside again', async () => {
    const clock = new FakeClock();
    const dispatcher = new DeliveryDispatcher({ clock, channels: () => [ch()], secret: async () => null, record: () => undefined, maxAttempts: 2, initialBackoffMs: 1_000, random: () => 0.5, send: async () => ({ status: 500 }) });
    const emitted: ConsoleNotificationView[] = [];
    const native: string[] = [];
    const outside: ConsoleNotification[] = [];
    const svc = new NotificationService({
      clock,
      audit: { append: () => ({}) } as never,
      emit: ((channel: string, p: ConsoleNotificationView) => channel === 'notifications.notice' && emitted.push(p)) as never,
      notifier: { notify: (n) => native.push(n.title) },
      outbound: { dispatch: (n) => { outside.push(n); dispatcher.dispatch(n); } },
    });
    dispatcher.onDidGiveUp((u) => svc.notifyHere(fallbackNotice(u)));
    svc.notify({ key: 'alert:x', severity: 'critical', title: 'gpu-a: service down', body: 'qwen does not answer', route: 'hosts/gpu-a/qwen', event: 'alert.critical' });
    await flush();
    expect(emitted).toHaveLength(1);
    clock.advance(1_000);
    await flush();
    await flush();
    expect(emitted).toHaveLength(2);
    const fb = emitted[1]!;
    expect(fb.title).toBe('Not delivered to slack channel oncall: gpu-a: service down');
    expect(fb.body).toBe('qwen does not answer\n(HTTP 500 after 2 attempts; shown here instead)');
    expect(fb.severity).toBe('critical');
    expect(fb.route).toBe('hosts/gpu-a/qwen');
    expect(native).toEqual(['gpu-a: service down', 'Not delivered to slack channel oncall: gpu-a: service down']);
    expect(outside).toHaveLength(1);
    await dispatcher.dispose();
  });
  it('a send-test that fails answers its caller only: no fallback notice', async () => {
    const dispatcher = new DeliveryDispatcher({ clock: new FakeClock(), channels: () => [], secret: async () => null, record: () => undefined, maxAttempts: 1, send: async () => ({ status: 404 }) });
    const gaveUp: unknown[] = [];
    dispatcher.onDidGiveUp((u) => gaveUp.push(u));
    const d = await dispatcher.test(ch(), alertNotice());
    expect(d.status).toBe('failed');
    expect(gaveUp).toEqual([]);
    await dispatcher.dispose();
  });
});
