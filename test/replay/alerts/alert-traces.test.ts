import { afterAll, describe, expect, it } from 'vitest';
import { T0, replay, type ReplayResult, type Trace } from './replay.js';
import { sweepLevels, type HostSpec, type Label, type Load, type ServiceSpec } from './fleet-sim.js';

// Issue #30, "Measured, not assumed": generated fleet traces with labelled
// faults replayed into the alert engine at the poll interval (1 s), through
// telemetry's own mapping. Targets: every fault raised within its rule's
// sustain + one poll of showing in the rule's figure (recall 100 %), no alert
// on 24 simulated hours of normal traffic, one page per root cause.

const MIN = 60_000;
const qwen: ServiceSpec = { id: 'qwen', model: 'Qwen3.6-27B-FP8', kind: 'vllm', s1: 30 };
const gemma: ServiceSpec = { id: 'gemma', model: 'gemma-3-27b', kind: 'llama', s1: 40 };
const triGpu: HostSpec = { label: 'tri-gpu', services: [qwen], gpus: 2 };
const strix: HostSpec = { label: 'strix', services: [gemma], gpus: 1 };
const l20: HostSpec = {
  label: 'l20-poc',
  services: [
    { id: 'chat', model: 'chat-8b', kind: 'vllm', s1: 60 },
    { id: 'code', model: 'code-14b', kind: 'vllm', s1: 45 },
    { id: 'embed', model: 'small-3b', kind: 'llama', s1: 90 },
  ],
  gpus: 1,
};
export const baselinesOf = (...hosts: HostSpec[]) => hosts.flatMap((h) => h.services.map((s) => ({ model: s.model, levels: sweepLevels(s.s1) })));

/** Always busy: c = 2…6, a new level every minute. */
const busyLoad =
  (seed: number): Load =>
  (s, t) =>
    2 + ((Math.floor(t / MIN) * 7 + s * 3 + seed) % 5);

const faultTrace = (name: string, hosts: HostSpec[], faults: Trace['faults'], labels: Label[], extra: Partial<Trace> = {}): Trace => ({
  name,
  hosts,
  load: busyLoad(name.length),
  faults,
  labels,
  durationMs: 60 * MIN,
  tickMs: 1000,
  baselines: baselinesOf(...hosts),
  seed: name.length * 97,
  ...extra,
});

const upstreamOf = (round: Parameters<NonNullable<Label['visibleWhen']>>[0], host: string, id: string) => round.proxy.upstreams.find((u) => u.label === host && u.serviceId === id);

/** Session drops (connected → anything else) of a host seen so far: the tunnel_flapping label's figure. */
function dropCounter(host: string, n: number): NonNullable<Label['visibleWhen']> {
  let last: string | undefined;
  let drops = 0;
  return ({ readings }) => {
    const s = readings.hosts.find((h) => h.label === host)!.session.state;
    if (last === 'connected' && s !== 'connected') drops++;
    last = s;
    return drops >= n;
  };
}

const TRACES: Trace[] = [
  faultTrace('slowed vLLM server (−40 % per sequence), steady traffic', [triGpu], [{ kind: 'slow', host: 'tri-gpu', serviceId: 'qwen', fromMs: 20 * MIN, toMs: 40 * MIN }], [
    { name: 'slow', rule: 'throughput', host: 'tri-gpu', serviceId: 'qwen', fromMs: 20 * MIN, toMs: 40 * MIN },
  ]),
  faultTrace(
    'slowed llama-server (−40 %), traffic 8 s in every 20',
    [strix],
    [{ kind: 'slow', host: 'strix', serviceId: 'gemma', fromMs: 20 * MIN, toMs: 50 * MIN }],
    [{ name: 'slow with gaps', rule: 'throughput', host: 'strix', serviceId: 'gemma', fromMs: 20 * MIN, toMs: 50 * MIN, busyShare: 0.4 }],
    { load: (_s, t) => ((t / 1000) % 20 < 8 ? 3 : 0) },
  ),
  faultTrace('server down 10 min', [triGpu], [{ kind: 'down', host: 'tri-gpu', serviceId: 'qwen', fromMs: 20 * MIN, toMs: 30 * MIN }], [
    { name: 'down', rule: 'service_down', host: 'tri-gpu', serviceId: 'qwen', fromMs: 20 * MIN, toMs: 30 * MIN },
  ]),
  faultTrace('5xx burst (half the answers fail for 5 min)', [strix], [{ kind: '5xx', host: 'strix', serviceId: 'gemma', fromMs: 20 * MIN, toMs: 25 * MIN }], [
    {
      name: '5xx',
      rule: 'error_rate',
      host: 'strix',
      serviceId: 'gemma',
      fromMs: 20 * MIN,
      toMs: 25 * MIN,
      visibleWhen: (r) => {
        const e = upstreamOf(r, 'strix', 'gemma')?.errors;
        return e !== undefined && e.answered >= 20 && e.failed / e.answered >= 0.05;
      },
    },
  ]),
  faultTrace('a hung request (no byte since it arrived)', [triGpu], [{ kind: 'hung', host: 'tri-gpu', serviceId: 'qwen', fromMs: 20 * MIN, toMs: 30 * MIN }], [
    {
      name: 'hung',
      rule: 'hanging_requests',
      host: 'tri-gpu',
      serviceId: 'qwen',
      fromMs: 20 * MIN,
      toMs: 30 * MIN,
      visibleWhen: (r) => (upstreamOf(r, 'tri-gpu', 'qwen')?.stalled ?? []).some((x) => x.inFlightMs >= 120_000 && x.sinceByteMs >= 60_000),
    },
  ]),
  faultTrace('a hot GPU (climbs to 92 °C)', [triGpu], [{ kind: 'hot', host: 'tri-gpu', gpu: 1, fromMs: 20 * MIN, toMs: 35 * MIN }], [
    {
      name: 'hot',
      rule: 'gpu_hot',
      host: 'tri-gpu',
      serviceId: null,
      fromMs: 20 * MIN,
      toMs: 35 * MIN,
      visibleWhen: (r) => (r.readings.hosts[0]!.gpus.readings[1]!.temperatureC ?? 0) >= 87,
    },
  ]),
  faultTrace('a flapping tunnel (down 5 s every 90 s)', [strix], [{ kind: 'flap', host: 'strix', fromMs: 20 * MIN, toMs: 30 * MIN }], [
    { name: 'flap', rule: 'tunnel_flapping', host: 'strix', serviceId: null, fromMs: 20 * MIN, toMs: 30 * MIN, visibleWhen: dropCounter('strix', 3) },
  ]),
  faultTrace('a host down with three services', [l20, strix], [{ kind: 'hostdown', host: 'l20-poc', fromMs: 20 * MIN, toMs: 30 * MIN }], [
    { name: 'host down', rule: 'host_stale', host: 'l20-poc', serviceId: null, fromMs: 20 * MIN, toMs: 30 * MIN },
  ]),
  faultTrace(
    'maintenance window: the server stopped under a silence',
    [triGpu],
    [{ kind: 'down', host: 'tri-gpu', serviceId: 'qwen', fromMs: 20 * MIN, toMs: 30 * MIN }],
    [{ name: 'maintenance', rule: 'service_down', host: 'tri-gpu', serviceId: 'qwen', fromMs: 20 * MIN, toMs: 30 * MIN, silenced: true }],
    // Stands in for the alert book's silence (rule, host, service, time) until the replay reads the real one.
    { silenced: (a) => a.host === 'tri-gpu' && a.serviceId === 'qwen' && a.raisedAt >= T0 + 19 * MIN && a.raisedAt < T0 + 35 * MIN },
  ),
  faultTrace(
    'slow first tokens, then a queue near its hold budget',
    [strix],
    [
      { kind: 'ttft', host: 'strix', serviceId: 'gemma', fromMs: 20 * MIN, toMs: 30 * MIN },
      { kind: 'queue', host: 'strix', serviceId: 'gemma', fromMs: 40 * MIN, toMs: 50 * MIN },
    ],
    [
      { name: 'ttft', rule: 'ttft_slow', host: 'strix', serviceId: 'gemma', fromMs: 20 * MIN, toMs: 30 * MIN },
      { name: 'queue', rule: 'queue_wait', host: 'strix', serviceId: 'gemma', fromMs: 40 * MIN, toMs: 50 * MIN },
    ],
  ),
];

/** The demo's case: baseline 71.5 tok/s at c=4 (17.9 per sequence); two requests at 17.0 each for two hours. */
const DEMO: Trace = {
  name: "the demo's two requests at spec",
  hosts: [{ label: 'tri-gpu', services: [{ ...qwen, s1: 17.0 * 1.08 }], gpus: 1 }],
  load: () => 2,
  faults: [],
  labels: [],
  durationMs: 120 * MIN,
  tickMs: 1000,
  baselines: [{ model: qwen.model, levels: [{ concurrency: 4, perSeqTokPerS: 71.5 / 4 }] }],
  seed: 4,
};

const results: ReplayResult[] = [];

afterAll(() => {
  const rows = results.flatMap((r) => r.labels.map((l) => ({ r, l })));
  const byRule = new Map<string, { raised: number; expected: number; pages: number; worst: number; allowed: number }>();
  for (const { l } of rows) {
    const e = byRule.get(l.label.rule) ?? { raised: 0, expected: 0, pages: 0, worst: 0, allowed: 0 };
    e.expected++;
    if (l.raisedAt !== null) e.raised++;
    e.pages += l.pages;
    e.worst = Math.max(e.worst, l.latencyMs ?? Infinity);
    e.allowed = Math.max(e.allowed, l.allowedMs);
    byRule.set(l.label.rule, e);
  }
  const lines = ['rule               raised/expected  pages  worst latency  allowed (sustain + poll)'];
  for (const [rule, e] of byRule) lines.push(`${rule.padEnd(18)} ${`${e.raised}/${e.expected}`.padEnd(16)} ${String(e.pages).padEnd(6)} ${`${(e.worst / 1000).toFixed(0)} s`.padEnd(14)} ${(e.allowed / 1000).toFixed(0)} s`);
  lines.push('', 'label              trace                                                      latency  pages');
  for (const { r, l } of rows) lines.push(`${l.label.name.padEnd(18)} ${r.trace.slice(0, 58).padEnd(58)} ${l.latencyMs === null ? 'missed' : `${(l.latencyMs / 1000).toFixed(0)} s`.padEnd(8)} ${l.pages}`);
  const fa = results.reduce((n, r) => n + r.falseAlarms.length, 0);
  const ticks = results.reduce((n, r) => n + r.ticks, 0);
  lines.push(`false alarms: ${fa} over ${results.length} traces, ${ticks.toLocaleString('en')} ticks (the 24 h normal trace is in normal-day.test.ts)`);
  console.log(`\nalert replay\n${lines.join('\n')}`);
});

describe('alert replay: labelled faults', () => {
  for (const trace of TRACES) {
    it(trace.name, () => {
      const r = replay(trace);
      results.push(r);
      for (const l of r.labels) {
        expect(l.raisedAt, `${l.label.name}: raised`).not.toBeNull();
        expect(l.latencyMs!, `${l.label.name}: latency`).toBeLessThanOrEqual(l.allowedMs);
        expect(l.pages, `${l.label.name}: pages`).toBe(l.label.silenced ? 0 : 1);
      }
      expect(r.falseAlarms.map((a) => `${a.id} at +${Math.round((a.raisedAt - T0) / 1000)} s: ${a.message}`)).toEqual([]);
    });
  }
});

describe('alert replay: no false alarms', () => {
  it(DEMO.name, () => {
    const r = replay(DEMO);
    results.push(r);
    expect(r.events).toEqual([]);
  });

});
