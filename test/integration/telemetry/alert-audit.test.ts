import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AlertOps } from '../../../src-main/core/alerts/index.js';
import { Emitter, FakeClock, silentLogger } from '../../../src-main/core/base/index.js';
import type { EventSink } from '../../../src-main/core/channel.js';
import { ConfigService, ConfigSchema } from '../../../src-main/core/config/index.js';
import type { LogFailureFound } from '../../../src-main/core/logs/index.js';
import type { NotificationInput } from '../../../src-main/core/notify/index.js';
import { requestWindows } from '../../../src-main/core/proxy/index.js';
import { openStore, type Store } from '../../../src-main/core/store/index.js';
import { TelemetryService, type TelemetryReadings } from '../../../src-main/core/telemetry/index.js';
import { AlertEventSchema, type AlertEvent } from '../../../src-preload/contract/index.js';

// Issue #29 item 5: every raise and clear of the new alerts is an audit row
// (on a real SQLite file) and goes through the notification channels; a log
// failure's lines are the alert's context in memory and in the pushed event,
// never in the audit row or the notice. Repeats inside the rate limit count
// into the alert without a new row or notice.

const T0 = 1_700_000_000_000;
const OOM = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 44.40 GiB';
let dir = '';
let store: Store | null = null;
afterEach(() => {
  store?.close();
  store = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

function world() {
  dir = mkdtempSync(join(tmpdir(), 'gc-alert-audit-'));
  const clock = new FakeClock(T0);
  store = openStore({ file: join(dir, 'console.db'), clock });
  const config = new ConfigService({ path: join(dir, 'none.yaml'), home: dir });
  config.replace(ConfigSchema.parse({ alerts: { logFailureEveryMs: 600_000 }, hosts: [{ label: 'l20', ssh: { host: 'gpu', user: 'ops', agent: true }, services: [] }] }));
  const rounds = new Emitter<TelemetryReadings>();
  const failures = new Emitter<LogFailureFound>();
  const pushed: AlertEvent[] = [];
  const notices: NotificationInput[] = [];
  const notify = { notify: (n: NotificationInput) => notices.push(n) };
  const emit: EventSink = (channel, payload) => {
    if (channel === 'alert.changed') pushed.push(AlertEventSchema.parse(payload));
  };
  const telemetry = new TelemetryService({
    store,
    config,
    fleet: { onDidRound: (l) => rounds.on(l) },
    proxy: null,
    requests: requestWindows(store.db),
    notices: notify,
    emit,
    clock,
    logger: silentLogger,
    logFailures: { onDidFindFailure: (l) => failures.on(l) },
  });
  // The alert book audits, pushes and pages the engine's events (as app.ts builds it after telemetry).
  new AlertOps({ source: telemetry.alerts, audit: store.audit, settings: store.settings, notices: notify, emit, clock, logger: silentLogger, config: () => config.current });
  const round = (rebootedAtMs: number | null) =>
    rounds.fire({
      at: clock.now(),
      hosts: [
        {
          label: 'l20',
          config: {},
          session: { state: 'connected', lastError: null },
          gpus: { readings: [], stale: null },
          services: [],
          health: { stale: null, figures: { disks: [], memTotalBytes: null, memAvailableBytes: null, swapTotalBytes: null, swapFreeBytes: null, load1: null }, rebootedAtMs, faults: null },
          gpuProcesses: null,
        },
      ],
    });
  const audit = () => store!.audit.list({ limit: 100 }).filter((e) => e.type.startsWith('alert.')).reverse();
  return { clock, telemetry, failures, pushed, notices, round, audit };
}

const found = (n: number): LogFailureFound => ({
  host: 'l20',
  serviceId: 'qwen',
  matched: n,
  kinds: ['cuda-oom'],
  context: [
    { text: 'INFO: loading weights', ts: T0, failure: null },
    { text: OOM, ts: T0 + 1, failure: 'cuda-oom' },
  ],
});

describe('alert audit and notices', () => {
  it('a log failure: raised with its context in the event, audited and notified without the lines; repeats counted; cleared after the hold', () => {
    const w = world();
    w.failures.fire(found(2));
    expect(w.pushed.map((e) => e.type)).toEqual(['raised']);
    expect(w.pushed[0]!.alert).toMatchObject({ kind: 'log_failure', severity: 'critical', serviceId: 'qwen', count: 2, message: 'cuda-oom in the log of qwen (2 lines)' });
    expect(w.pushed[0]!.alert.context?.map((l) => l.text)).toEqual(['INFO: loading weights', OOM]);
    let rows = w.audit();
    expect(rows.map((r) => r.type)).toEqual(['alert.raised']);
    expect(rows[0]).toMatchObject({ actor: 'system', target: 'l20/qwen' });
    expect(rows[0]!.payload).toMatchObject({ kind: 'log_failure', severity: 'critical', count: 2, contextLines: 2 });
    expect(w.notices).toHaveLength(1);
    expect(w.notices[0]).toMatchObject({ key: 'alert:log_failure:l20/qwen', severity: 'critical', title: 'l20: Log failure' });

    // Within the rate limit: counted into it, pushed as a repeat, no new row, no new notice.
    w.clock.advance(60_000);
    w.failures.fire(found(3));
    expect(w.pushed.map((e) => [e.type, e.repeat ?? false, e.alert.count])).toEqual([
      ['raised', false, 2],
      ['changed', true, 5],
    ]);
    expect(w.audit()).toHaveLength(1);
    expect(w.notices).toHaveLength(1);

    // No new failure for the hold (15 min from the last one): cleared by itself, audited with the final count.
    w.clock.advance(15 * 60_000 - 1);
    w.round(null);
    expect(w.pushed.at(-1)!.type).toBe('changed');
    w.clock.advance(1);
    w.round(null);
    expect(w.pushed.at(-1)!.type).toBe('cleared');
    rows = w.audit();
    expect(rows.map((r) => r.type)).toEqual(['alert.raised', 'alert.cleared']);
    expect(rows[1]!.payload).toMatchObject({ kind: 'log_failure', count: 5 });
    expect(w.telemetry.alerts.list()).toEqual([]);

    // No line of the log anywhere in the audit log or a notice.
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain('OutOfMemoryError');
    expect(stored).not.toContain('loading weights');
    expect(JSON.stringify(w.notices)).not.toContain('OutOfMemoryError');
  });

  it('names the failures cause first, whatever order the lines gave them', () => {
    const w = world();
    w.failures.fire({ ...found(3), kinds: ['traceback', 'engine-dead', 'cuda-oom', 'traceback'] });
    expect(w.pushed[0]!.alert.message).toBe('cuda-oom, engine-dead, traceback in the log of qwen (3 lines)');
  });

  it('a failure after the rate-limit window renews the alert: new context, a real change audited and notified', () => {
    const w = world();
    w.failures.fire(found(1));
    w.clock.advance(600_000);
    w.failures.fire({ ...found(1), kinds: ['traceback'], context: [{ text: 'Traceback (most recent call last):', ts: null, failure: 'traceback' }] });
    expect(w.pushed.map((e) => [e.type, e.repeat ?? false, e.alert.count])).toEqual([
      ['raised', false, 1],
      ['changed', false, 2],
    ]);
    expect(w.pushed[1]!.alert.context?.map((l) => l.text)).toEqual(['Traceback (most recent call last):']);
    expect(w.audit().map((r) => r.type)).toEqual(['alert.raised', 'alert.changed']);
    expect(w.notices).toHaveLength(2);
  });

  it('a reboot: raised and audited at once, cleared by itself after the hold and audited', () => {
    const w = world();
    w.round(null);
    const at = w.clock.now();
    w.round(at);
    expect(w.audit().map((r) => [r.type, r.payload['kind']])).toEqual([['alert.raised', 'host_rebooted']]);
    expect(w.notices[0]).toMatchObject({ title: 'l20: Rebooted', route: 'hosts/l20' });
    w.clock.advance(15 * 60_000);
    w.round(at);
    expect(w.audit().map((r) => [r.type, r.payload['kind']])).toEqual([
      ['alert.raised', 'host_rebooted'],
      ['alert.cleared', 'host_rebooted'],
    ]);
    expect(store!.audit.verify()).toMatchObject({ ok: true });
  });
});
