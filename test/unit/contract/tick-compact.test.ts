// The compact form of delta ticks (tick-compact.ts): numbers by position, whole
// numbers as changes, nested objects by field. A recorded stream of the demo
// fleet (2 hosts × 8 GPUs × 2 services, traffic on, read by the collector;
// test/fixtures/ticks, captured with the api's events) decodes to the whole
// state at every tick, and travels in less than the named deltas did.
import { gunzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diffObject } from '../../../src-preload/contract/delta.js';
import {
  FleetTickWireSchema,
  ProxyStatsWireSchema,
  TelemetryTickWireSchema,
  TickStreamDecoder,
  TickStreamEncoder,
  type DeltaChannel,
  type FleetSnapshot,
  type TelemetryTick,
} from '../../../src-preload/contract/index.js';
import { compactPatch, expandPatch } from '../../../src-preload/contract/tick-compact.js';

const FIXTURE = join(import.meta.dirname, '../../fixtures/ticks/demo-2-hosts-traffic.json.gz');
const recorded = (): Array<{ channel: DeltaChannel; state: unknown }> => JSON.parse(gunzipSync(readFileSync(FIXTURE)).toString('utf8'));
const overJson = <T>(value: T): unknown => JSON.parse(JSON.stringify(value)) as unknown;
const bytes = (value: unknown): number => JSON.stringify(value).length;
const WIRE = { 'fleet.tick': FleetTickWireSchema, 'telemetry.tick': TelemetryTickWireSchema, 'proxy.stats': ProxyStatsWireSchema } as const;
type Obj = Record<string, unknown>;

describe('compact delta ticks on a recorded demo stream', () => {
  for (const [transport, carry] of [
    ['JSON (web bridge)', overJson],
    ['structured clone (IPC)', structuredClone],
  ] as const) {
    it(`decodes to the whole state at every tick over ${transport}`, () => {
      const encoder = new TickStreamEncoder();
      const decoder = new TickStreamDecoder();
      const ticks = recorded();
      expect(ticks.length).toBeGreaterThanOrEqual(45);
      let deltas = 0;
      for (const [i, { channel, state }] of ticks.entries()) {
        const wire = carry(encoder.encode(channel, state as never));
        expect(WIRE[channel].safeParse(wire).success, `tick ${i}`).toBe(true);
        if ((wire as { kind: string }).kind === 'delta') deltas++;
        const out = decoder.decode(channel, wire);
        if (!out.ok) throw new Error(`tick ${i}: ${out.message}`);
        expect(out.state, `tick ${i} ${channel}`).toEqual(overJson(state));
      }
      expect(deltas).toBe(ticks.length - 3);
    });
  }

  it('sends under half the bytes of the named deltas; a service source whose time alone moved sends no detail text', () => {
    const ticks = recorded();
    const encoder = new TickStreamEncoder();
    const last = new Map<DeltaChannel, Obj>();
    let named = 0;
    let compact = 0;
    for (const { channel, state } of ticks) {
      const wire = encoder.encode(channel, state as never) as Obj;
      const prev = last.get(channel);
      last.set(channel, state as Obj);
      if (prev === undefined) continue;
      named += bytes(diffObject(prev, state as Obj, SPEC[channel]) ?? {});
      compact += bytes(wire);
      if (channel === 'fleet.tick') expect(JSON.stringify(wire)).not.toContain('GET /metrics');
    }
    expect(compact).toBeLessThan(named / 2);
  });
});

// The codec's specs (tick-codec.ts keeps them private; these must match for the byte comparison only).
const SPEC: Record<DeltaChannel, object> = {
  'fleet.tick': {
    lists: { hosts: { keyField: 'label', item: { lists: { gpus: { keyField: 'index', item: { lists: { processes: { keyField: 'pid', item: {} } } } }, services: { keyField: 'id', item: {} } } } } },
  },
  'telemetry.tick': { lists: { hosts: { keyField: 'host', item: { records: ['values'] } } } },
  'proxy.stats': { lists: { upstreams: { keyField: 'upstream', item: { lists: { classes: { keyField: 'class', item: {} } } } } } },
};

describe('compact parts', () => {
  const spec = {};
  const base = { b: 'x', atMs: 1796489767255, power: 520.08, source: { kind: 'vllm', atMs: 1796489767000, detail: 'GET /metrics' }, __proto__x: 1 };

  it('a timestamp goes as its change, a float by position, a nested object by its changed field', () => {
    const next = { ...base, atMs: 1796489768255, power: 521.5, source: { ...base.source, atMs: 1796489768000 } };
    const wire = compactPatch(diffObject(base, next, spec)!, base, spec);
    // sorted keys: __proto__x, atMs, b, power, source; source's: atMs, detail, kind
    expect(wire).toEqual({ d: [1, 1000], n: [3, 521.5], o: [4, { d: [0, 1000] }] });
    expect(expandPatch(overJson(wire), base, spec, '')).toEqual({ set: { atMs: 1796489768255, power: 521.5, source: next.source } });
  });

  it('positions go in order, each after the first as its distance from the one before', () => {
    const held = { values: { 'gpu.0.power_w': 1, 'gpu.0.temp_c': 2, 'gpu.1.power_w': 3, 'gpu.1.temp_c': 4, 'host.load1': 5.5 } };
    const next = { values: { ...held.values, 'host.load1': 6.25, 'gpu.0.temp_c': 7.5, 'gpu.1.power_w': 8.5 } };
    const rec = { records: ['values'] };
    const wire = compactPatch(diffObject(held, next, rec)!, held, rec);
    expect(wire).toEqual({ values: { n: [1, 7.5, 1, 8.5, 2, 6.25] } });
    expect(expandPatch(overJson(wire), held, rec, '')).toEqual({ values: { set: { 'gpu.0.temp_c': 7.5, 'gpu.1.power_w': 8.5, 'host.load1': 6.25 } } });
  });

  it('a nested field added or removed, and a number that becomes null, stay named', () => {
    const next = { ...base, power: null, source: { kind: 'vllm', atMs: 1796489767000, version: '0.9' } };
    const wire = compactPatch(diffObject(base, next, spec)!, base, spec);
    expect(wire).toEqual({ set: { power: null }, o: [4, { s: { version: '0.9' }, u: ['detail'] }] });
    expect(expandPatch(overJson(wire), base, spec, '')).toEqual({ set: { power: null, source: next.source } });
  });

  it('a record key named __proto__ is set as an own value, by position too', () => {
    const held = JSON.parse('{"__proto__": 1, "a": 2}') as Obj;
    const rec = { records: ['values'] };
    const out = expandPatch({ values: { n: [0, 7] } }, { values: held }, rec, '') as { values: { set: Obj } };
    expect(Object.prototype.hasOwnProperty.call(out.values.set, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(out.values.set)).toBe(Object.prototype);
  });

  it('refuses parts that do not fit the state held (unfit) or cannot be read (invalid), naming where; nothing is applied', () => {
    const encoder = new TickStreamEncoder();
    const first: TelemetryTick = { at: 1, hosts: [{ host: 'a', staleReason: null, values: { 'gpu.0.power_w': 100, 'host.load1': 1.5 } }] };
    const key = overJson(encoder.encode('telemetry.tick', first));
    const cases: Array<[unknown, string, RegExp]> = [
      [{ n: [9, 1] }, 'unfit', /position 9, but the object held has 2 fields/],
      [{ hosts: { patch: [{ key: 'a', values: { d: [1, 1] } }] } }, 'unfit', /hosts\[a\]\.values\.host\.load1: a change to a field that holds no whole number/],
      [{ n: [0] }, 'invalid', /not a list of position, value pairs/],
      [{ n: ['at', 2] }, 'invalid', /./],
      [{ n: [0, 2], set: { at: 3 } }, 'unfit', /at: set twice/],
      [{ hosts: { patch: [{ key: 'a', values: { o: [0, {}] } }] } }, 'unfit', /gpu\.0\.power_w: patched by field/],
      [{ hosts: { n: [3, 0, 1] } }, 'unfit', /hosts: `n` names item 3, but the list held has 1/],
      [{ hosts: { n: [0, 0] } }, 'invalid', /hosts: `n` is not a list of item, position, value triples/],
    ];
    for (const [patch, refusal, message] of cases) {
      const decoder = new TickStreamDecoder();
      const held = decoder.decode('telemetry.tick', key);
      if (!held.ok) throw new Error(held.message);
      const out = decoder.decode('telemetry.tick', { kind: 'delta', seq: 1, base: 0, ...(patch as Obj) });
      expect(out, JSON.stringify(patch)).toMatchObject({ ok: false, refusal, message: expect.stringMatching(message) });
      expect(held.state).toEqual(first);
    }
  });

  it("a GPU's processes: keyed by pid (a moved figure is one triple), set whole when they appear, unset when they go, whole again when pids repeat", () => {
    const encoder = new TickStreamEncoder();
    const decoder = new TickStreamDecoder();
    const first = recorded().find((t) => t.channel === 'fleet.tick')!.state as FleetSnapshot;
    const proc = (pid: number | null, mib: number) => ({ pid, name: 'vllm', user: 'ops', usedMemoryMiB: mib, serviceId: 'svc0', why: 'it or its parent listens on :8000' });
    const withProcesses = (at: number, processes: ReturnType<typeof proc>[] | undefined): FleetSnapshot => {
      const next = structuredClone(first);
      next.at = at;
      const { processes: _p, ...gpu } = next.hosts[0]!.gpus[0]!;
      next.hosts[0]!.gpus[0] = processes === undefined ? gpu : { ...gpu, processes };
      return next;
    };
    const states = [withProcesses(1, undefined), withProcesses(2, [proc(7, 100), proc(8, 5)]), withProcesses(3, [proc(7, 180), proc(8, 5)]), withProcesses(4, [proc(null, 1), proc(null, 2)]), withProcesses(5, undefined)];
    const wires = states.map((state) => overJson(encoder.encode('fleet.tick', state)));
    const gpus = (w: unknown) => JSON.stringify((w as { hosts: { patch: Array<{ gpus?: unknown }> } }).hosts.patch[0]!.gpus);
    // process 0's usedMemoryMiB (field 3 of name, pid, serviceId, usedMemoryMiB, user, why) moved by 80
    expect(gpus(wires[2])).toBe(JSON.stringify({ patch: [{ key: 0, processes: { d: [0, 3, 80] } }] }));
    expect(gpus(wires[3])).toContain('"all":[');
    expect(gpus(wires[4])).toContain('"unset":["processes"]');
    wires.forEach((wire, i) => {
      const out = decoder.decode('fleet.tick', wire);
      if (!out.ok) throw new Error(`${i}: ${out.message}`);
      expect(out.state, `state ${i}`).toEqual(overJson(states[i]));
    });
  });

  it('a fleet whose GPU figures move sends them by position, and decodes them', () => {
    const encoder = new TickStreamEncoder();
    const decoder = new TickStreamDecoder();
    const ticks = recorded().filter((t) => t.channel === 'fleet.tick').map((t) => t.state as FleetSnapshot);
    decoder.decode('fleet.tick', overJson(encoder.encode('fleet.tick', ticks[0]!)));
    const wire = overJson(encoder.encode('fleet.tick', ticks[1]!)) as { hosts: { patch: Array<{ gpus?: Obj }> } };
    const gpuParts = wire.hosts.patch.flatMap((h) => (h.gpus === undefined ? [] : [h.gpus]));
    expect(gpuParts.length).toBeGreaterThan(0);
    // GPUs whose numbers alone moved travel as (GPU, field, value) triples: no names, no per-GPU wrapper
    for (const p of gpuParts) {
      expect(JSON.stringify(p)).not.toMatch(/powerW|temperatureC|utilizationPct/);
      expect((p.n as number[] | undefined)?.length ?? 0).toBeGreaterThan(0);
    }
    const out = decoder.decode('fleet.tick', wire);
    expect(out.ok && out.state).toEqual(overJson(ticks[1]));
  });
});
