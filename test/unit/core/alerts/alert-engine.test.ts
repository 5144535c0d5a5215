import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { AlertEngine, alertTickFromValues, type HostAlertTick } from '../../../../src-main/core/alerts/index.js';
import type { AlertEvent } from '../../../../src-preload/contract/alerts.js';

function setup(thresholds = {}) {
  const clock = new FakeClock();
  const engine = new AlertEngine(clock, { sustainMs: 30_000, clearMs: 10_000, waitingWindowMs: 20_000, staleAfterMs: 15_000, ...thresholds });
  const events: AlertEvent[] = [];
  engine.onDidChange((e) => events.push(e));
  /** Feeds one tick per second for `seconds`. */
  const run = (seconds: number, tick: (i: number) => HostAlertTick) => {
    for (let i = 0; i < seconds; i++) {
      engine.observe([tick(i)]);
      clock.advance(1000);
    }
  };
  return { clock, engine, events, run };
}

const svc = (p: Partial<HostAlertTick['services'][number]>): HostAlertTick => ({
  host: 'h',
  staleReason: null,
  services: [{ serviceId: 'q', model: 'qwen', genTokPerS: 100, running: 4, waiting: 0, kvCachePct: 50, ...p }],
});

describe('AlertEngine', () => {
  it('throughput: per-sequence speed ≥30% below the baseline over 60 busy s warns, ≥50% is critical, cleared after recovery', () => {
    const { engine, events, run } = setup({ sustainMs: 60_000 }); // the busy window is the rule's sustain
    engine.setBaseline('qwen', 400, 'manual', undefined, 4); // 100 tok/s per sequence at c=4
    run(59, () => svc({ genTokPerS: 260 })); // 4 × 65 tok/s
    expect(events).toEqual([]); // fewer than 60 busy seconds: no verdict yet
    run(2, () => svc({ genTokPerS: 260 }));
    expect(events.map((e) => [e.type, e.alert.severity])).toEqual([['raised', 'warning']]);
    expect(events[0]!.alert).toMatchObject({ kind: 'throughput', host: 'h', serviceId: 'q', model: 'qwen', value: 65, threshold: 70, windowMs: 300_000, route: 'hosts/h/q' });
    expect(events[0]!.alert.series?.unit).toBe('tok/s per sequence');
    run(50, () => svc({ genTokPerS: 180 })); // 45 per sequence: the 60 s mean crosses 50 % after 45 s
    expect(events.map((e) => [e.type, e.alert.severity])).toEqual([
      ['raised', 'warning'],
      ['changed', 'critical'],
    ]);
    run(35, () => svc({ genTokPerS: 380 }));
    // the mean passes the warning band on its way up (≈10 s), is back above 70 after ~31 s, then clearMs (10 s) must pass
    expect(events.map((e) => [e.type, e.alert.severity])).toEqual([
      ['raised', 'warning'],
      ['changed', 'critical'],
      ['changed', 'warning'],
    ]);
    run(10, () => svc({ genTokPerS: 380 }));
    expect(events.at(-1)!.type).toBe('cleared');
    expect(engine.list()).toEqual([]);
  });

  it('a single bad sample neither raises nor, once raised, clears', () => {
    const { engine, events, run } = setup();
    engine.setBaseline('qwen', 100);
    run(40, (i) => svc({ genTokPerS: i === 20 ? 10 : 100 }));
    expect(events).toEqual([]);
  });

  it('no alert while idle, or without a baseline', () => {
    const { engine, events, run } = setup();
    run(60, () => svc({ genTokPerS: 0, running: 0 }));
    engine.setBaseline('qwen', 100);
    run(60, () => svc({ genTokPerS: 0, running: 0 }));
    expect(events).toEqual([]);
  });

  it('KV cache above 95% sustained', () => {
    const { events, run } = setup();
    run(40, () => svc({ kvCachePct: 97 }));
    expect(events.map((e) => e.alert.kind)).toEqual(['kv_cache']);
    expect(events[0]!.alert.value).toBe(97);
  });

  it('waiting requests growing over the window (and not when it drains)', () => {
    const { events, run } = setup();
    run(60, (i) => svc({ waiting: 1 + Math.floor(i / 5) }));
    expect(events.map((e) => e.alert.kind)).toEqual(['waiting_growing']);
    const other = setup();
    other.run(60, (i) => svc({ waiting: i % 10 === 0 ? 0 : 5 }));
    expect(other.events).toEqual([]);
  });

  it('host stale after staleAfterMs', () => {
    const { events, run, engine } = setup();
    run(14, () => ({ host: 'h', staleReason: 'TELEMETRY_SCRAPE_TIMEOUT: GET /metrics', services: [] }));
    expect(events).toEqual([]);
    run(2, () => ({ host: 'h', staleReason: 'TELEMETRY_SCRAPE_TIMEOUT: GET /metrics', services: [] }));
    expect(events.map((e) => [e.type, e.alert.id])).toEqual([['raised', 'host_stale:h']]);
    expect(engine.list()[0]!.message).toMatch(/TELEMETRY_SCRAPE_TIMEOUT/);
  });

  it('reads alert input from telemetry tick values', () => {
    const t = alertTickFromValues('h', null, { 'svc.q.gen_tok_s': 50, 'svc.q.running': 2, 'svc.q.kv_pct': 12, 'gpu.0.util_pct': 90 }, () => 'qwen');
    expect(t.services).toEqual([{ serviceId: 'q', model: 'qwen', genTokPerS: 50, running: 2, waiting: null, kvCachePct: 12, itlP50S: null }]);
  });
});
