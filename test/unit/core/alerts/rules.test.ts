import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { AlertEngine, expectedPerSeq, type AlertRulesSource, type HostAlertTick, type ServiceTick } from '../../../../src-main/core/alerts/index.js';
import { ALERT_SERIES_MAX_POINTS, type AlertEvent } from '../../../../src-preload/contract/alerts.js';

// Issue #30 items 1-3: degradation like with like, the rules for what hurts
// users, context and grouping. One tick per second on an injected clock.

function setup(rules: AlertRulesSource | null = null) {
  const clock = new FakeClock(1_700_000_000_000);
  const engine = new AlertEngine(clock, {}, undefined, () => rules);
  const events: AlertEvent[] = [];
  engine.onDidChange((e) => events.push(e));
  const run = (seconds: number, tick: (i: number) => HostAlertTick | HostAlertTick[]) => {
    for (let i = 0; i < seconds; i++) {
      const t = tick(i);
      engine.observe(Array.isArray(t) ? t : [t]);
      clock.advance(1000);
    }
  };
  const kinds = () => events.map((e) => [e.type, e.alert.kind, e.alert.severity]);
  return { clock, engine, events, run, kinds };
}

const svc = (p: Partial<ServiceTick> = {}): ServiceTick => ({ serviceId: 'q', model: 'Qwen3.6-27B-FP8', genTokPerS: null, running: null, waiting: 0, kvCachePct: 40, health: 'ok', ...p });
const host = (services: ServiceTick[], p: Partial<HostAlertTick> = {}): HostAlertTick => ({ host: 'h', staleReason: null, session: 'connected', services, ...p });

describe('degradation: per-sequence speed at a comparable load', () => {
  it("the demo's case raises nothing: two requests at exactly the model's per-sequence speed (baseline 71.5 tok/s at c=4)", () => {
    const { engine, events, run } = setup();
    engine.setBaseline('Qwen3.6-27B-FP8', 71.5, 'manual', undefined, 4); // 17.9 tok/s per sequence
    run(600, () => host([svc({ genTokPerS: 34.0, running: 2 })])); // 2 × 17.0
    expect(events).toEqual([]);
  });

  it('the same load 40 % slower per sequence raises a warning within one busy minute', () => {
    const { engine, events, run } = setup();
    engine.setBaseline('Qwen3.6-27B-FP8', 71.5, 'manual', undefined, 4);
    run(120, () => host([svc({ genTokPerS: 2 * 17.9 * 0.6, running: 2 })]));
    expect(events.map((e) => [e.type, e.alert.severity])).toEqual([['raised', 'warning']]);
    expect(events[0]!.alert.raisedAt - 1_700_000_000_000).toBeLessThanOrEqual(61_000);
    expect(events[0]!.alert.message).toMatch(/tok\/s per sequence at ~2\.0 running is 40% below/);
  });

  it("prefers the server's own per-sequence figure (1 / ITL p50) over tokens ÷ running", () => {
    const { engine, events, run } = setup();
    engine.setBaseline('Qwen3.6-27B-FP8', 80, 'manual', undefined, 4); // 20 per sequence
    // gen ÷ running says 10 (half the requests are in prefill); ITL says 1/0.05 = 20: no alert.
    run(120, () => host([svc({ genTokPerS: 40, running: 4, itlP50S: 0.05 })]));
    expect(events).toEqual([]);
  });

  it('traffic with gaps is judged on its busy seconds; idle seconds neither raise nor clear', () => {
    const { engine, events, run, engine: e } = setup();
    engine.setBaseline('Qwen3.6-27B-FP8', 20, 'manual', undefined, 1);
    const busy = (i: number) => i % 20 < 8; // 8 s of traffic in every 20
    run(300, (i) => host([busy(i) ? svc({ genTokPerS: 10, running: 1 }) : svc({ genTokPerS: 0, running: 0 })]));
    expect(events.map((x) => [x.type, x.alert.severity])).toEqual([['raised', 'critical']]);
    run(600, () => host([svc({ genTokPerS: 0, running: 0 })])); // a long idle stretch
    expect(e.list().map((a) => a.kind)).toEqual(['throughput']);
  });

  it('no verdict outside every load band, and none from a stored baseline without levels', () => {
    const a = setup();
    a.engine.setBaseline('Qwen3.6-27B-FP8', 30, 'manual', undefined, 1);
    a.run(200, () => host([svc({ genTokPerS: 8 * 5, running: 8 })])); // c=8 against a level at c=1: beyond ×2
    expect(a.events).toEqual([]);
    const b = setup();
    b.engine.restoreBaseline({ model: 'Qwen3.6-27B-FP8', tokPerS: 71.5, source: 'benchmark', setAt: 1 });
    b.run(200, () => host([svc({ genTokPerS: 5, running: 2 })]));
    expect(b.events).toEqual([]);
    expect(b.engine.listBaselines()[0]).not.toHaveProperty('levels');
  });

  it('expected speed: interpolated between levels, the nearest within ×2 outside them', () => {
    const levels = [
      { concurrency: 1, perSeqTokPerS: 30 },
      { concurrency: 4, perSeqTokPerS: 24 },
      { concurrency: 8, perSeqTokPerS: 18 },
    ];
    expect(expectedPerSeq(levels, 2.5, 2)).toBeCloseTo(27);
    expect(expectedPerSeq(levels, 0.6, 2)).toBe(30);
    expect(expectedPerSeq(levels, 16, 2)).toBe(18);
    expect(expectedPerSeq(levels, 17, 2)).toBeNull();
    expect(expectedPerSeq(levels, 0.4, 2)).toBeNull();
  });

  it('carries its window, route and recent series (readings’ own times, gaps as null, at most the contract’s points)', () => {
    const { engine, events, run } = setup();
    engine.setBaseline('Qwen3.6-27B-FP8', 20, 'manual');
    run(400, (i) => host([i % 20 >= 15 ? svc({ running: 0, genTokPerS: 0 }) : svc({ genTokPerS: 8, running: 1 })]));
    const a = engine.list()[0]!;
    expect(events[0]!.alert).toMatchObject({ kind: 'throughput', windowMs: 300_000, route: 'hosts/h/q' });
    expect(a.series!.at.length).toBeLessThanOrEqual(ALERT_SERIES_MAX_POINTS);
    expect(a.series!.values).toContain(null);
    expect(a.series!.values.filter((v) => v !== null).every((v) => v === 8)).toBe(true);
    expect(a.series!.at.at(-1)).toBe(1_700_000_000_000 + 399_000);
  });
});

describe('rules for what hurts users', () => {
  it('service_down: critical after 15 s while the host is connected; not while SSH reconnects; clears once it answers', () => {
    const b = setup();
    b.run(60, () => host([svc({ health: 'down' })], { session: 'reconnecting' }));
    // back from a reconnect, a server still starting (vLLM refuses until loaded) is the host's incident for 5 min
    b.run(290, () => host([svc({ health: 'down' })]));
    expect(b.kinds()).toEqual([]);
    b.run(30, () => host([svc({ health: 'down' })]));
    expect(b.kinds()).toEqual([['raised', 'service_down', 'critical']]);
    const { run, kinds } = setup();
    run(14, () => host([svc({ health: 'down' })]));
    expect(kinds()).toEqual([]);
    run(2, () => host([svc({ health: 'down' })]));
    expect(kinds()).toEqual([['raised', 'service_down', 'critical']]);
    run(11, () => host([svc({ health: 'ok' })]));
    expect(kinds().at(-1)).toEqual(['cleared', 'service_down', 'critical']);
  });

  it('service_down: not while a lifecycle action drains the service (an approved restart); a restart that fails pages once the drain ends', () => {
    const { run, kinds } = setup();
    const failing = { classes: [], errors: { windowMs: 300_000, answered: 100, failed: 40 } };
    const waiting = [{ class: 'interactive' as const, ttftP95Ms: 1_000, waitP95Ms: 25_000, requestsPerS: 1, holdBudgetMs: 30_000 }];
    run(120, () => host([svc({ health: 'down', proxy: { ...failing, classes: waiting, state: 'draining' } })]));
    expect(kinds()).toEqual([]); // nor the queue held through the drain
    run(20, () => host([svc({ health: 'down', proxy: { ...failing, state: 'down' } })]));
    expect(kinds()).toEqual([['raised', 'service_down', 'critical']]);
    // A restart that worked: the error window still counts the drain's refusals for a while; nothing pages for them.
    const b = setup();
    b.run(120, () => host([svc({ health: 'down', proxy: { ...failing, state: 'draining' } })]));
    b.run(200, () => host([svc({ proxy: { ...failing, state: 'ready' } })]));
    expect(b.kinds()).toEqual([]);
  });

  it('error_rate: over 5 % of at least 20 answers; a handful never pages; an absent window reads nothing', () => {
    const errors = (answered: number, failed: number) => ({ classes: [], errors: { windowMs: 300_000, answered, failed } });
    const a = setup();
    a.run(70, () => host([svc({ proxy: errors(10, 5) })])); // 50 % of 10
    expect(a.kinds()).toEqual([]);
    a.run(62, () => host([svc({ proxy: errors(200, 16) })])); // 8 %
    expect(a.kinds()).toEqual([['raised', 'error_rate', 'warning']]);
    expect(a.engine.list()[0]).toMatchObject({ value: 8, threshold: 5, windowMs: 300_000, series: { unit: '% failed answers' } });
    a.run(120, () => host([svc({ proxy: { classes: [] } })])); // H2's figures absent: neither raise nor clear
    expect(a.engine.list()).toHaveLength(1);
  });

  it('hanging_requests: in flight over 120 s with no byte for 60 s', () => {
    const { run, kinds, engine } = setup();
    run(5, () => host([svc({ proxy: { classes: [], stalled: [{ class: 'batch', inFlightMs: 200_000, sinceByteMs: 30_000 }] } })]));
    expect(kinds()).toEqual([]);
    run(1, () => host([svc({ proxy: { classes: [], stalled: [{ class: 'interactive', inFlightMs: 130_000, sinceByteMs: 70_000 }] } })]));
    expect(kinds()).toEqual([['raised', 'hanging_requests', 'warning']]);
    expect(engine.list()[0]!.message).toMatch(/1 request in flight over 120 s with no byte for 60 s/);
  });

  it('ttft_slow per class over its target with enough answers; queue_wait at half the hold budget', () => {
    const cls = (c: 'interactive' | 'batch', ttftP95Ms: number, waitP95Ms: number, requestsPerS: number) => ({ class: c, ttftP95Ms, waitP95Ms, requestsPerS, holdBudgetMs: 10_000 });
    const { run, kinds, engine } = setup();
    run(70, () => host([svc({ proxy: { classes: [cls('interactive', 12_000, 1_000, 0.1), cls('batch', 90_000, 1_000, 1)] } })])); // 6 answers/min: too few
    expect(kinds()).toEqual([]);
    run(62, () => host([svc({ proxy: { classes: [cls('interactive', 12_000, 6_000, 1), cls('batch', 90_000, 1_000, 1)] } })]));
    expect(kinds()).toEqual([
      ['raised', 'queue_wait', 'warning'],
      ['raised', 'ttft_slow', 'warning'],
    ]);
    expect(engine.list().map((a) => a.id).sort()).toEqual(['queue_wait:h/q#interactive', 'ttft_slow:h/q#interactive']); // no batch TTFT target by default
  });

  it('gpu_hot: 87 °C warns after a minute, the driver’s critical temperature is critical', () => {
    const { run, kinds } = setup();
    run(62, () => host([], { gpus: [{ index: 0, tempC: 88, criticalC: 95 }, { index: 1, tempC: 70, criticalC: null }] }));
    expect(kinds()).toEqual([['raised', 'gpu_hot', 'warning']]);
    run(62, () => host([], { gpus: [{ index: 0, tempC: 96, criticalC: 95 }] }));
    expect(kinds().at(-1)).toEqual(['changed', 'gpu_hot', 'critical']);
  });

  it('tunnel_flapping: 3 drops of the session within 10 min; a person’s disconnect is not a drop', () => {
    const { run, kinds } = setup();
    const cycle = (i: number) => host([], { session: i % 60 < 50 ? 'connected' : 'reconnecting' });
    run(125, cycle);
    expect(kinds()).toEqual([]); // 2 drops
    run(60, (i) => cycle(i + 125));
    expect(kinds()).toEqual([['raised', 'tunnel_flapping', 'warning']]);
    const b = setup();
    b.run(400, (i) => host([], { session: i % 60 < 50 ? 'connected' : 'disconnected' }));
    expect(b.kinds()).toEqual([]);
  });

  it('config overrides: a host turns a rule off, a model sets its own target', () => {
    const rules: AlertRulesSource = {
      alerts: { rules: { ttft_slow: { targetsMs: { interactive: 5_000 } } }, models: { 'qwen3.6-27b-fp8': { rules: { ttft_slow: { targetsMs: { interactive: 20_000 } } } } } },
      hosts: [{ label: 'h', alerts: { rules: { gpu_hot: { enabled: false } } } }],
    };
    const { run, kinds } = setup(rules);
    const cls = { class: 'interactive' as const, ttftP95Ms: 12_000, waitP95Ms: null, requestsPerS: 1 };
    run(80, () => [host([svc({ proxy: { classes: [cls] } }), svc({ serviceId: 'l', model: 'other', proxy: { classes: [cls] } })], { gpus: [{ index: 0, tempC: 99, criticalC: null }] })]);
    expect(kinds()).toEqual([['raised', 'ttft_slow', 'warning']]);
  });
});

describe('one incident per cause', () => {
  it('a host going down with three services pages once: host_stale; its services raise nothing meanwhile', () => {
    const { run, events, engine } = setup();
    engine.setBaseline('Qwen3.6-27B-FP8', 40, 'manual', undefined, 2);
    const three = (p: Partial<ServiceTick>) => ['a', 'b', 'c'].map((id) => svc({ serviceId: id, ...p }));
    run(120, () => host(three({ genTokPerS: 40, running: 2, proxy: { classes: [], errors: { windowMs: 300_000, answered: 500, failed: 0 } } })));
    expect(events).toEqual([]);
    const failing = { classes: [], errors: { windowMs: 300_000, answered: 500, failed: 200 } };
    run(180, () => host(three({ genTokPerS: null, running: null, health: 'unknown', proxy: failing }), { session: 'reconnecting', staleReason: 'SSH reconnecting' }));
    // back, the proxy's window still remembers the outage's failures: held by the incident for its 5 min
    run(200, () => host(three({ genTokPerS: 40, running: 2, proxy: failing })));
    expect(events.filter((e) => e.type === 'raised').map((e) => e.alert.id)).toEqual(['host_stale:h']);
  });

  it('a service that is down holds its own consequences; one raised before is tied to it (annotated, not paged)', () => {
    const { run, events } = setup();
    const slow = { classes: [{ class: 'interactive' as const, ttftP95Ms: 30_000, waitP95Ms: null, requestsPerS: 1 }] };
    run(70, () => host([svc({ proxy: slow })]));
    expect(events.map((e) => [e.type, e.alert.id])).toEqual([['raised', 'ttft_slow:h/q#interactive']]);
    const failing = { ...slow, errors: { windowMs: 300_000, answered: 100, failed: 60 } };
    run(90, () => host([svc({ health: 'down', proxy: failing })]));
    expect(events.map((e) => [e.type, e.alert.id, e.alert.incident])).toEqual([
      ['raised', 'ttft_slow:h/q#interactive', undefined],
      ['annotated', 'ttft_slow:h/q#interactive', 'service_down:h/q'],
      ['raised', 'service_down:h/q', undefined],
    ]);
  });

  it('a server that dies of CUDA OOM pages once: the log failure first holds service_down; a failure logged after service_down belongs to it', () => {
    const oom = { host: 'h', serviceId: 'q', matched: 2, kinds: ['cuda-oom' as const, 'engine-dead' as const], context: [] };
    const a = setup();
    a.engine.observeLogFailure(oom);
    a.run(120, () => host([svc({ health: 'down' })]));
    expect(a.events.filter((e) => e.type === 'raised').map((e) => [e.alert.id, e.alert.incident])).toEqual([['log_failure:h/q', undefined]]);
    const b = setup();
    b.run(20, () => host([svc({ health: 'down' })]));
    b.engine.observeLogFailure(oom);
    expect(b.events.filter((e) => e.type === 'raised').map((e) => [e.alert.id, e.alert.incident])).toEqual([
      ['service_down:h/q', undefined],
      ['log_failure:h/q', 'service_down:h/q'],
    ]);
  });
});
