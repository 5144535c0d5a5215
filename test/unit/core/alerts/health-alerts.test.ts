import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { AlertEngine, hostAlertSettingsOf, type HostHealthAlertInput } from '../../../../src-main/core/alerts/index.js';
import { parseConfig, type ConfigIssue } from '../../../../src-main/core/config/index.js';
import type { AlertEvent } from '../../../../src-preload/contract/index.js';

const GIB = 1024 ** 3;
const opts = { file: 'config.yaml', home: '/home/me' };

/** The config's coded error and the paths of its issues. */
function configIssues(text: string): { code: string; issues: ConfigIssue[] } {
  try {
    parseConfig(text, opts);
  } catch (err) {
    const e = err as { code: string; details: { issues: ConfigIssue[] } };
    return { code: e.code, issues: e.details.issues };
  }
  throw new Error('expected a config error');
}
const HOLD = 15 * 60_000;

function setup(settings = hostAlertSettingsOf(undefined, undefined)) {
  const clock = new FakeClock(1_700_000_000_000);
  const engine = new AlertEngine(clock, { clearMs: 10_000, healthSustainMs: 20_000 }, () => settings);
  const events: AlertEvent[] = [];
  engine.onDidChange((e) => events.push(e));
  /** One round a second for `seconds`, the host as `host(i)` says. */
  const run = (seconds: number, host: (i: number) => HostHealthAlertInput) => {
    for (let i = 0; i < seconds; i++) {
      engine.observeHealth([host(i)]);
      clock.advance(1000);
    }
  };
  return { clock, engine, events, run };
}

type Faults = NonNullable<NonNullable<HostHealthAlertInput['health']>['faults']>;

function host(p: { freeGiB?: number; totalGiB?: number; stale?: boolean; flags?: HostHealthAlertInput['gpuProcesses']; faults?: Faults | null; rebootedAtMs?: number | null } = {}): HostHealthAlertInput {
  const total = (p.totalGiB ?? 1000) * GIB;
  const free = (p.freeGiB ?? 500) * GIB;
  return {
    label: 'h',
    health: {
      stale: p.stale ? { code: 'SSH_NOT_CONNECTED' } : null,
      figures: {
        disks: [
          { kind: 'root', path: '/', mount: '/', totalBytes: total, freeBytes: free },
          // The model cache on the same filesystem: one alert, not two.
          { kind: 'cache', path: '/home/u/.cache/huggingface', mount: '/', totalBytes: total, freeBytes: free },
        ],
      },
      rebootedAtMs: p.rebootedAtMs ?? null,
      faults: p.faults ?? null,
    },
    gpuProcesses: p.flags ?? { flags: [] },
  };
}

const gpu = (p: Partial<Faults['gpus'][number]> = {}): Faults['gpus'][number] => ({
  gpuIndex: 0,
  eccUncorrectedVolatile: 0,
  retiredPagesPending: false,
  throttleReasons: [],
  slowdownSinceMs: null,
  ...p,
});

const types = (events: AlertEvent[]) => events.map((e) => `${e.type}:${e.alert.kind}`);

describe('health alerts: disk_low', () => {
  it('raises after the sustain when free is below 10 GiB (16 % of a 50 GiB disk), one alert per mount, clears only above the margin', () => {
    const { events, run } = setup();
    run(19, () => host({ freeGiB: 8, totalGiB: 50 }));
    expect(events).toEqual([]);
    run(2, () => host({ freeGiB: 8, totalGiB: 50 }));
    expect(types(events)).toEqual(['raised:disk_low']);
    expect(events[0]!.alert).toMatchObject({ id: 'disk_low:h#disk:/', severity: 'warning', value: 8, threshold: 10 });
    expect(events[0]!.alert.message).toContain('8.0 GiB free of 50.0 GiB (16.0 %)');
    // 10.5 GiB is above the threshold but inside the 10 % margin: still low.
    run(60, () => host({ freeGiB: 10.5, totalGiB: 50 }));
    expect(types(events)).toEqual(['raised:disk_low']);
    run(9, () => host({ freeGiB: 11.5, totalGiB: 50 }));
    expect(types(events)).toEqual(['raised:disk_low']);
    run(2, () => host({ freeGiB: 11.5, totalGiB: 50 }));
    expect(types(events)).toEqual(['raised:disk_low', 'cleared:disk_low']);
  });

  it('below 10 % of a small disk is low even with more than 10 GiB free', () => {
    const { events, run } = setup();
    run(25, () => host({ freeGiB: 15, totalGiB: 200 }));
    expect(types(events)).toEqual(['raised:disk_low']);
  });

  it('a stale round neither raises nor clears; unknown free space raises nothing', () => {
    const { events, run } = setup();
    run(25, () => host({ freeGiB: 5 }));
    run(60, () => host({ freeGiB: 500, stale: true }));
    expect(types(events)).toEqual(['raised:disk_low']);
    const { events: e2, run: run2 } = setup();
    run2(30, () => ({ ...host(), health: { ...host().health!, figures: { disks: [{ kind: 'root', path: '/', mount: '/', totalBytes: null, freeBytes: null }] } } }));
    expect(e2).toEqual([]);
  });

  it('thresholds come from config: the fleet-wide block, and a host override field by field', () => {
    const cfg = parseConfig(
      [
        'alerts: { disk: { freePct: 5, freeGiB: 50 } }',
        'hosts:',
        '  - { label: a, ssh: { host: 127.0.0.1, user: u, agent: true }, alerts: { disk: { freeGiB: 2 } } }',
        '  - { label: b, ssh: { host: 127.0.0.1, user: u, agent: true } }',
      ].join('\n'),
      opts,
    );
    const a = hostAlertSettingsOf(cfg.hosts[0]!.alerts, cfg.alerts);
    const b = hostAlertSettingsOf(cfg.hosts[1]!.alerts, cfg.alerts);
    expect(a.disk).toEqual({ freePct: 5, freeGiB: 2, clearMarginPct: 10 });
    expect(b.disk).toEqual({ freePct: 5, freeGiB: 50, clearMarginPct: 10 });
    // 30 GiB free of 100: low for b (below 50 GiB), not for a (above 2 GiB and 5 %).
    const ra = setup(a);
    ra.run(30, () => host({ freeGiB: 30, totalGiB: 100 }));
    expect(ra.events).toEqual([]);
    const rb = setup(b);
    rb.run(30, () => host({ freeGiB: 30, totalGiB: 100 }));
    expect(types(rb.events)).toEqual(['raised:disk_low']);
  });

  it('bad alert settings are a coded config error naming the field', () => {
    const bad = configIssues('alerts: { disk: { freePct: 140 } }');
    expect(bad.code).toBe('CONFIG_INVALID');
    expect(bad.issues).toEqual([expect.objectContaining({ path: 'alerts.disk.freePct', message: expect.stringContaining('between 0 and 100') })]);
    expect(configIssues('alerts: { eventHoldMs: 5 }').issues[0]).toMatchObject({ path: 'alerts.eventHoldMs' });
    expect(configIssues('alerts: { logWatchIntervalMs: 1000 }').issues[0]).toMatchObject({ path: 'alerts.logWatchIntervalMs' });
    expect(JSON.stringify(configIssues('alerts: { diskk: {} }').issues)).toContain('diskk');
    expect(configIssues('hosts: [{ label: a, ssh: { host: 127.0.0.1, user: u, agent: true }, alerts: { throttleAfterMs: 5 } }]').issues[0]!.message).toContain('throttleAfterMs');
    expect(configIssues('hosts: [{ label: a, ssh: { host: 127.0.0.1, user: u, agent: true }, services: [{ id: q, kind: vllm, remotePort: 8000, model: m, logWatch: maybe }] }]').issues[0]).toMatchObject({ path: 'hosts[0].services[0].logWatch' });
  });
});

describe('health alerts: GPU processes', () => {
  const flag = { code: 'FLEET_GPU_PROCESS_UNKNOWN', message: 'PID 4812 llama-server holds 9.1 GiB on GPU0 — not a configured service', pid: 4812, serviceId: null, gpuIndex: 0, command: 'kill 4812' };
  it('an unknown holder is raised after the sustain with its command and GPU, cleared once gone', () => {
    const { events, run } = setup();
    run(21, () => host({ flags: { flags: [flag] } }));
    expect(types(events)).toEqual(['raised:gpu_process_unknown']);
    expect(events[0]!.alert).toMatchObject({ gpuIndex: 0, command: 'kill 4812', message: flag.message, value: 4812 });
    run(11, () => host());
    expect(types(events)).toEqual(['raised:gpu_process_unknown', 'cleared:gpu_process_unknown']);
  });

  it('a second and a stale listener on a service port each raise, under the service', () => {
    const { events, run } = setup();
    const second = { ...flag, code: 'FLEET_PORT_SECOND_LISTENER', serviceId: 'coder', gpuIndex: null, message: 'PID 77 also listens on 8080' };
    const stale = { ...flag, code: 'FLEET_PORT_STALE_LISTENER', pid: 78, serviceId: 'qwen', gpuIndex: null, message: 'PID 78 holds 8000 while qwen is down' };
    run(21, () => host({ flags: { flags: [second, stale] } }));
    expect(events.map((e) => [e.alert.kind, e.alert.serviceId])).toEqual([
      ['gpu_process_unknown', 'coder'],
      ['gpu_process_unknown', 'qwen'],
    ]);
  });
});

describe('health alerts: GPU faults and throttling', () => {
  it('a new Xid raises at once (critical for 79), a repeat counts into it, and it clears after the hold with no new one', () => {
    const { clock, events, run } = setup();
    const t0 = clock.now();
    run(3, () => host({ faults: { gpus: [gpu()], kernelLog: { xids: [] } } }));
    const xid = (atMs: number, n = 79) => ({ atMs, xid: n, pciBusId: '0000:3B:00.0', gpuIndex: 0, text: `NVRM: Xid (PCI:0000:3b:00): ${n}, pid=1234, GPU has fallen off the bus.` });
    run(5, () => host({ faults: { gpus: [gpu()], kernelLog: { xids: [xid(t0 + 2500)] } } }));
    expect(types(events)).toEqual(['raised:gpu_fault']);
    expect(events[0]!.alert).toMatchObject({ severity: 'critical', gpuIndex: 0, value: 79, count: 1 });
    expect(events[0]!.alert.context).toEqual([expect.objectContaining({ failure: 'xid', text: expect.stringContaining('fallen off the bus') })]);
    expect(events[0]!.alert.message).not.toContain('fallen off');
    run(5, () => host({ faults: { gpus: [gpu()], kernelLog: { xids: [xid(t0 + 2500), xid(t0 + 9000)] } } }));
    expect(events.map((e) => [e.type, e.repeat ?? false, e.alert.count])).toEqual([
      ['raised', false, 1],
      ['changed', true, 2],
    ]);
    clock.advance(HOLD);
    run(1, () => host({ faults: { gpus: [gpu()], kernelLog: { xids: [xid(t0 + 2500), xid(t0 + 9000)] } } }));
    expect(types(events)).toEqual(['raised:gpu_fault', 'changed:gpu_fault', 'cleared:gpu_fault']);
  });

  it('Xids from before the hold window at the first read are history, not news', () => {
    const { clock, events, run } = setup();
    const old = { atMs: clock.now() - HOLD - 1000, xid: 79, pciBusId: null, gpuIndex: 0, text: 'NVRM: Xid 79' };
    run(3, () => host({ faults: { gpus: [gpu()], kernelLog: { xids: [old] } } }));
    expect(events).toEqual([]);
  });

  it('a rise in volatile uncorrected ECC raises; the first reading only sets the mark; a pending retirement is a state', () => {
    const { events, run } = setup();
    run(2, () => host({ faults: { gpus: [gpu({ eccUncorrectedVolatile: 3 })], kernelLog: null } }));
    expect(events).toEqual([]);
    run(1, () => host({ faults: { gpus: [gpu({ eccUncorrectedVolatile: 5 })], kernelLog: null } }));
    expect(events.map((e) => [e.alert.kind, e.alert.severity, e.alert.value, e.alert.threshold])).toEqual([['gpu_fault', 'critical', 5, 3]]);
    run(1, () => host({ faults: { gpus: [gpu({ eccUncorrectedVolatile: 5, retiredPagesPending: true })], kernelLog: null } }));
    expect(events.map((e) => e.alert.id)).toEqual(['gpu_fault:h#gpu0:ecc', 'gpu_fault:h#gpu0:pending']);
    run(11, () => host({ faults: { gpus: [gpu({ eccUncorrectedVolatile: 5 })], kernelLog: null } }));
    expect(events.map((e) => `${e.type}:${e.alert.id}`).at(-1)).toBe('cleared:gpu_fault:h#gpu0:pending');
  });

  it('a slowdown raises gpu_throttle once it is older than throttleAfterMs (configurable), not for idle or power cap', () => {
    const { clock, events, run } = setup();
    const since = clock.now();
    run(59, () => host({ faults: { gpus: [gpu({ throttleReasons: ['hw_thermal_slowdown'], slowdownSinceMs: since })], kernelLog: null } }));
    run(5, () => host({ faults: { gpus: [gpu({ gpuIndex: 1, throttleReasons: ['sw_power_cap', 'gpu_idle'], slowdownSinceMs: null })], kernelLog: null } }));
    expect(events).toEqual([]);
    const { clock: c2, events: e2, run: run2 } = setup();
    const s2 = c2.now();
    run2(62, () => host({ faults: { gpus: [gpu({ throttleReasons: ['hw_thermal_slowdown'], slowdownSinceMs: s2 })], kernelLog: null } }));
    expect(e2.map((e) => [e.type, e.alert.kind, e.alert.gpuIndex])).toEqual([['raised', 'gpu_throttle', 0]]);
    expect(e2[0]!.alert.message).toMatch(/GPU0 has been slowed down for 60 s \(hw_thermal_slowdown\)/);
    const fast = setup({ ...hostAlertSettingsOf(undefined, undefined), throttleAfterMs: 10_000 });
    const s3 = fast.clock.now();
    fast.run(11, () => host({ faults: { gpus: [gpu({ throttleReasons: ['thermal'], slowdownSinceMs: s3 })], kernelLog: null } }));
    expect(types(fast.events)).toEqual(['raised:gpu_throttle']);
  });
});

describe('health alerts: reboot', () => {
  it('a new reboot time raises host_rebooted at once, held then cleared by itself; the same one again is not news', () => {
    const { clock, events, run } = setup();
    run(2, () => host());
    const at = clock.now();
    run(10, () => host({ rebootedAtMs: at }));
    expect(types(events)).toEqual(['raised:host_rebooted']);
    clock.advance(HOLD);
    run(1, () => host({ rebootedAtMs: at }));
    expect(types(events)).toEqual(['raised:host_rebooted', 'cleared:host_rebooted']);
    run(30, () => host({ rebootedAtMs: at }));
    expect(types(events)).toEqual(['raised:host_rebooted', 'cleared:host_rebooted']);
  });
});
