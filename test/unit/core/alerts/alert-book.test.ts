import { afterEach, describe, expect, it } from 'vitest';
import { AlertOps, SILENCES_SETTING } from '../../../../src-main/core/alerts/index.js';
import { Emitter, FakeClock, silentLogger, type Logger } from '../../../../src-main/core/base/index.js';
import { ConfigSchema } from '../../../../src-main/core/config/index.js';
import type { NotificationInput } from '../../../../src-main/core/notify/index.js';
import { openStore, type Store } from '../../../../src-main/core/store/index.js';
import type { Alert, AlertEvent } from '../../../../src-preload/contract/alerts.js';

const config = ConfigSchema.parse({
  hosts: [
    { label: 'gpu-a', ssh: { host: '10.0.0.5', user: 'ops', agent: true }, services: [{ id: 'qwen', kind: 'vllm', remotePort: 8000, model: 'Qwen3-8B', aliases: ['fast'] }] },
    { label: 'gpu-b', ssh: { host: '10.0.0.6', user: 'ops', agent: true }, services: [{ id: 'llama', kind: 'llama-server', remotePort: 8080, model: 'llama-3' }] },
  ],
});

const alertOf = (p: Partial<Alert> = {}): Alert => ({
  id: 'throughput:gpu-a/qwen',
  kind: 'throughput',
  severity: 'warning',
  host: 'gpu-a',
  serviceId: 'qwen',
  model: null,
  message: 'slower per sequence',
  value: 30,
  threshold: 42,
  raisedAt: 1,
  updatedAt: 1,
  ...p,
});

/** A fake engine: what it lists and the events it fires, as the AlertEngine would. */
class FakeSource {
  readonly open = new Map<string, Alert>();
  private readonly emitter = new Emitter<AlertEvent>();
  list = (): Alert[] => [...this.open.values()];
  onDidChange = (l: (e: AlertEvent) => void) => this.emitter.on(l);
  fire(type: AlertEvent['type'], alert: Alert, repeat?: boolean): void {
    if (type === 'cleared') this.open.delete(alert.id);
    else this.open.set(alert.id, alert);
    this.emitter.fire({ type, at: 0, alert, ...(repeat ? { repeat } : {}) });
  }
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function setup(opts: { store?: Store; clock?: FakeClock; logger?: Logger } = {}) {
  const clock = opts.clock ?? new FakeClock();
  const store = opts.store ?? openStore({ file: ':memory:', clock });
  if (!opts.store) cleanups.push(() => store.close());
  const source = new FakeSource();
  const notices: NotificationInput[] = [];
  const events: { channel: string; payload: unknown }[] = [];
  let n = 0;
  const ops = new AlertOps({
    source,
    audit: store.audit,
    settings: store.settings,
    notices: { notify: (i) => notices.push(i) },
    emit: (channel, payload) => events.push({ channel, payload }),
    clock,
    logger: opts.logger ?? silentLogger,
    config: () => config,
    newSilenceId: () => `sil-${++n}`,
  });
  cleanups.push(() => ops.dispose());
  const audit = (type: string) => store.audit.list({ type, limit: 100 });
  const annotated = () => events.filter((e) => e.channel === 'alert.changed' && (e.payload as AlertEvent).type === 'annotated').map((e) => (e.payload as AlertEvent).alert);
  return { clock, store, source, notices, events, ops, audit, annotated };
}

describe('alert book: what pages', () => {
  it('a raise pages with its figure, window, series and route; a repeat and a clear do not', () => {
    const { source, notices, audit } = setup();
    const series = { unit: 'tok/s per sequence', at: [1, 2], values: [40, 30] };
    source.fire('raised', alertOf({ windowMs: 300_000, series, route: 'hosts/gpu-a/qwen' }));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ key: 'alert:throughput:gpu-a/qwen', title: 'gpu-a: Slower per sequence', route: 'hosts/gpu-a/qwen', series });
    expect(notices[0]!.body).toBe('slower per sequence (30 vs threshold 42 tok/s per sequence over 5 min)');
    source.fire('changed', alertOf({ count: 2 }), true);
    source.fire('cleared', alertOf());
    expect(notices).toHaveLength(1);
    expect(audit('alert.raised')[0]!.payload).toMatchObject({ alertId: 'throughput:gpu-a/qwen', raisedAt: 1 });
    expect(audit('alert.cleared')).toHaveLength(1);
  });

  it('a grouped alert (incident) is audited but never pages on its own', () => {
    const { source, notices, audit } = setup();
    source.fire('raised', alertOf({ incident: 'host_stale:gpu-a' }));
    expect(notices).toHaveLength(0);
    expect(audit('alert.raised')[0]!.payload).toMatchObject({ incident: 'host_stale:gpu-a' });
  });

  it('acknowledged: recorded with who, audited, pushed; same-severity changes stay quiet, an escalation to critical pages again', () => {
    const { source, notices, ops, audit, annotated, clock } = setup();
    source.fire('raised', alertOf());
    clock.advance(5_000);
    const acked = ops.ack('throughput:gpu-a/qwen', ' looking at it ', 'operator:ann@web');
    expect(acked.ack).toEqual({ by: 'operator:ann@web', at: clock.now(), note: 'looking at it' });
    expect(ops.list()[0]!.ack?.by).toBe('operator:ann@web');
    expect(annotated().map((a) => a.ack?.by)).toEqual(['operator:ann@web']);
    expect(audit('alert.acknowledged')[0]).toMatchObject({ actor: 'operator:ann@web', target: 'gpu-a/qwen', payload: { alertId: 'throughput:gpu-a/qwen', kind: 'throughput', host: 'gpu-a', serviceId: 'qwen' } });
    source.fire('changed', alertOf({ value: 29 }));
    expect(notices).toHaveLength(1);
    source.fire('changed', alertOf({ severity: 'critical', value: 10 }));
    expect(notices).toHaveLength(2);
    expect(notices[1]!.severity).toBe('critical');
    source.fire('changed', alertOf({ severity: 'critical', value: 9 }));
    expect(notices).toHaveLength(2);
    // Cleared: the acknowledgement goes with it; raised again later, it pages anew.
    source.fire('cleared', alertOf());
    source.fire('raised', alertOf());
    expect(notices).toHaveLength(3);
    expect(ops.list()[0]!.ack).toBeNull();
  });

  it('the tray counts only alerts that need a person: not acknowledged, silenced or held by an incident', () => {
    const { source, ops } = setup();
    source.fire('raised', alertOf());
    source.fire('raised', alertOf({ id: 'service_down:gpu-b/llama', kind: 'service_down', host: 'gpu-b', serviceId: 'llama' }));
    source.fire('raised', alertOf({ id: 'error_rate:gpu-b/llama', kind: 'error_rate', host: 'gpu-b', serviceId: 'llama', incident: 'service_down:gpu-b/llama' }));
    expect(ops.needingAttention()).toBe(2);
    ops.ack('throughput:gpu-a/qwen', null, 'operator:ann@web');
    expect(ops.needingAttention()).toBe(1);
    ops.silence({ rule: 'service_down', host: 'gpu-b', forMs: 3_600_000, reason: 'rebuilding gpu-b' }, 'operator:ann@web');
    expect(ops.needingAttention()).toBe(0);
  });

  it('acknowledging an alert that is not open is ALERTS_UNKNOWN_ALERT', () => {
    const { ops } = setup();
    expect(() => ops.ack('throughput:gpu-a/qwen', null, 'operator:x@web')).toThrow(expect.objectContaining({ code: 'ALERTS_UNKNOWN_ALERT' }));
  });
});

describe('alert book: silences', () => {
  it('a silence marks open and future matching alerts, which never page; its end re-annotates and pages once', () => {
    const { source, notices, ops, audit, annotated, events } = setup();
    source.fire('raised', alertOf());
    expect(notices).toHaveLength(1);
    const s = ops.silence({ rule: 'throughput', host: 'gpu-a', forMs: 3_600_000, reason: 'maintenance window' }, 'operator:ann@web');
    expect(annotated().at(-1)!.silencedBy).toBe(s.id);
    expect(audit('alerts.silence.set')[0]).toMatchObject({ actor: 'operator:ann@web', payload: { silenceId: s.id, rule: 'throughput', host: 'gpu-a', reason: 'maintenance window', covers: ['throughput:gpu-a/qwen'] } });
    expect(events.some((e) => e.channel === 'alerts.silences')).toBe(true);
    // Changes and new alerts under the silence: audited with it, not paged.
    source.fire('changed', alertOf({ severity: 'critical' }));
    source.fire('raised', alertOf({ id: 'kv_cache:gpu-a/qwen', kind: 'kv_cache' }));
    source.fire('raised', alertOf({ id: 'throughput:gpu-b/llama', host: 'gpu-b', serviceId: 'llama' }));
    expect(notices.map((n) => n.key)).toEqual(['alert:throughput:gpu-a/qwen', 'alert:kv_cache:gpu-a/qwen', 'alert:throughput:gpu-b/llama']);
    expect(audit('alert.changed')[0]!.payload).toMatchObject({ silencedBy: s.id });
    expect(ops.list().find((a) => a.id === 'throughput:gpu-a/qwen')!.silencedBy).toBe(s.id);
    ops.unsilence(s.id, 'operator:bob@cli');
    expect(audit('alerts.silence.ended')[0]).toMatchObject({ actor: 'operator:bob@cli', payload: { silenceId: s.id } });
    expect(annotated().at(-1)).toMatchObject({ id: 'throughput:gpu-a/qwen', silencedBy: null });
    expect(notices.map((n) => n.key)).toEqual(['alert:throughput:gpu-a/qwen', 'alert:kv_cache:gpu-a/qwen', 'alert:throughput:gpu-b/llama', 'alert:throughput:gpu-a/qwen']);
    expect(() => ops.unsilence(s.id, 'operator:bob@cli')).toThrow(expect.objectContaining({ code: 'ALERTS_UNKNOWN_SILENCE' }));
  });

  it('a silence by model (or its alias) matches the service that serves it', () => {
    const { source, notices, ops } = setup();
    const s = ops.silence({ rule: 'all', model: 'FAST', forMs: 600_000, reason: 'reload' }, 'operator:x@web');
    expect(s.model).toBe('Qwen3-8B');
    source.fire('raised', alertOf());
    expect(notices).toHaveLength(0);
    expect(ops.list()[0]!.silencedBy).toBe(s.id);
  });

  it('runs out by itself at `until`: audited once by the console, and the alert still open pages then', () => {
    const { source, notices, ops, audit, clock } = setup();
    ops.silence({ rule: 'all', host: 'gpu-a', forMs: 120_000, reason: 'reboot' }, 'operator:x@web');
    source.fire('raised', alertOf());
    expect(notices).toHaveLength(0);
    clock.advance(119_000);
    expect(audit('alerts.silence.expired')).toHaveLength(0);
    clock.advance(1_000);
    expect(audit('alerts.silence.expired')).toHaveLength(1);
    expect(audit('alerts.silence.expired')[0]!.actor).toBe('system');
    expect(notices).toHaveLength(1);
    expect(ops.silences()).toEqual([]);
    clock.advance(3_600_000);
    expect(audit('alerts.silence.expired')).toHaveLength(1);
  });

  it('a 30-day silence is not expired early by a timer overflow (Node timers wrap past 24.8 days)', () => {
    const clock = new FakeClock();
    const delays: number[] = [];
    const set = clock.setTimeout.bind(clock);
    clock.setTimeout = (fn, ms) => (delays.push(ms), set(fn, ms));
    const { ops, audit } = setup({ clock });
    ops.silence({ rule: 'all', forMs: 30 * 86_400_000, reason: 'long maintenance' }, 'operator:x@web');
    clock.advance(29 * 86_400_000);
    expect(ops.silences()).toHaveLength(1);
    expect(audit('alerts.silence.expired')).toHaveLength(0);
    clock.advance(86_400_000);
    expect(ops.silences()).toHaveLength(0);
    expect(audit('alerts.silence.expired')).toHaveLength(1);
    expect(Math.max(...delays)).toBeLessThan(2 ** 31 - 1);
  });

  it('the scope must name what the config has', () => {
    const { ops } = setup();
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        return [(err as { code: string }).code, (err as { details: { field: string } }).details.field];
      }
      return null;
    };
    expect(code(() => ops.silence({ rule: 'all', host: 'nope', forMs: 60_000, reason: 'abc' }, 'x'))).toEqual(['ALERTS_SILENCE_SCOPE_UNKNOWN', 'host']);
    expect(code(() => ops.silence({ rule: 'all', host: 'gpu-b', serviceId: 'qwen', forMs: 60_000, reason: 'abc' }, 'x'))).toEqual(['ALERTS_SILENCE_SCOPE_UNKNOWN', 'serviceId']);
    expect(code(() => ops.silence({ rule: 'all', model: 'gpt-9', forMs: 60_000, reason: 'abc' }, 'x'))).toEqual(['ALERTS_SILENCE_SCOPE_UNKNOWN', 'model']);
    expect(ops.silences()).toEqual([]);
  });

  it('at most 100 in force: the next is ALERTS_TOO_MANY_SILENCES', () => {
    const { ops } = setup();
    for (let i = 0; i < 100; i++) ops.silence({ rule: 'all', host: 'gpu-a', forMs: 60_000, reason: `window ${i}` }, 'x');
    expect(() => ops.silence({ rule: 'all', forMs: 60_000, reason: 'one more' }, 'x')).toThrow(expect.objectContaining({ code: 'ALERTS_TOO_MANY_SILENCES' }));
  });

  it('a restart keeps silences in force; a damaged stored row is kept aside, logged and written back', () => {
    const clock = new FakeClock();
    const store = openStore({ file: ':memory:', clock });
    cleanups.push(() => store.close());
    const first = setup({ store, clock });
    const s = first.ops.silence({ rule: 'all', host: 'gpu-a', forMs: 3_600_000, reason: 'kept across restarts' }, 'operator:x@web');
    void first.ops.dispose();
    store.settings.set(SILENCES_SETTING, [...store.settings.get<unknown[]>(SILENCES_SETTING)!, { id: 'broken', rule: 'nope' }]);
    const warnings: string[] = [];
    const logger = { ...silentLogger, warn: (m: string) => warnings.push(m), child: () => logger } as Logger;
    const second = setup({ store, clock, logger });
    expect(second.ops.silences().map((x) => x.id)).toEqual([s.id]);
    expect(warnings).toContain('kept an unreadable stored silence aside');
    second.ops.silence({ rule: 'all', host: 'gpu-b', forMs: 60_000, reason: 'another' }, 'x');
    expect(store.settings.get<unknown[]>(SILENCES_SETTING)).toContainEqual({ id: 'broken', rule: 'nope' });
  });

  it('the reason keeps the operator words with inline secrets masked', () => {
    const { ops, audit } = setup();
    const s = ops.silence({ rule: 'all', forMs: 60_000, reason: 'rotating HF_TOKEN=hf_abcdef123456' }, 'x');
    expect(s.reason).toBe('rotating HF_TOKEN=[redacted]');
    expect(JSON.stringify(audit('alerts.silence.set'))).not.toContain('hf_abcdef');
  });
});
