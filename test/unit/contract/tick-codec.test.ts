// Delta ticks: what main encodes per subscriber and the renderer decodes back
// must be the full state, every time, with unchanged parts kept by identity;
// a decoder that is not on the delta's base refuses it and asks for a keyframe.
import { describe, expect, it } from 'vitest';
import { createPrng } from '../../../src-main/demo/text-gen.js';
import { host, service } from '../renderer/fixtures/fleet.js';
import {
  eventChannels,
  eventWireChannels,
  FleetSnapshotSchema,
  FleetTickWireSchema,
  RESYNC_REPEAT_EVERY,
  TelemetryTickSchema,
  TelemetryTickWireSchema,
  TickStreamDecoder,
  TickStreamEncoder,
  type FleetSnapshot,
  type GpuView,
  type HostView,
  type ServiceView,
  type TelemetryTick,
} from '../../../src-preload/contract/index.js';

function gpu(index: number): GpuView {
  return {
    index,
    uuid: `GPU-${index}`,
    name: 'NVIDIA H100',
    memoryUsedMiB: 1000,
    memoryTotalMiB: 81559,
    utilizationPct: 10,
    powerW: 100,
    powerLimitW: 700,
    temperatureC: 40,
  };
}

const svc = (id: string): ServiceView => service(id);

function hostView(label: string, gpus = 2, services = ['qwen']): HostView {
  return host(label, { gpuModel: 'NVIDIA H100', pricePerHourUsd: 2, gpus: Array.from({ length: gpus }, (_, i) => gpu(i)), services: services.map(svc) });
}

const fleet = (at: number, hosts: HostView[]): FleetSnapshot => ({ at, hosts });
/** What the other side of a bridge sees: JSON over SSE (undefined keys vanish). */
const overJson = <T>(value: T): unknown => JSON.parse(JSON.stringify(value)) as unknown;

/** A random edit of a fleet, immutably (as the core's parse gives fresh objects each tick). */
function edit(state: FleetSnapshot, r: () => number, at: number): FleetSnapshot {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  let hosts = state.hosts.map((h) => structuredClone(h));
  const n = 1 + Math.floor(r() * 6);
  for (let k = 0; k < n; k++) {
    const op = Math.floor(r() * 16);
    const h = hosts.length > 0 ? pick(hosts) : null;
    if (op === 0 || h === null) hosts.push(hostView(`h${Math.floor(r() * 1000)}-${at}-${k}`, Math.floor(r() * 4), r() < 0.5 ? ['a'] : ['a', 'b']));
    else if (op === 1) hosts = hosts.filter((x) => x !== h);
    else if (op === 2) hosts.reverse();
    else if (op === 3 && h.gpus.length > 0) pick(h.gpus).utilizationPct = Math.round(r() * 100);
    else if (op === 4 && h.gpus.length > 0) pick(h.gpus).powerW = r() < 0.2 ? null : Math.round(r() * 700);
    else if (op === 5) h.gpus.push(gpu(h.gpus.length + Math.floor(r() * 3)));
    else if (op === 6) h.gpus.splice(Math.floor(r() * h.gpus.length), 1);
    else if (op === 7) h.hostKey = r() < 0.5 ? undefined : { status: 'unknown', role: 'host', endpoint: 'x:22', keyType: 'ssh-ed25519', fingerprint: `SHA256:${at}`, knownFingerprints: [], knownSource: null };
    else if (op === 8) h.gpuVendor = r() < 0.5 ? undefined : pick(['nvidia', 'amd', null] as const);
    else if (op === 9) h.state = pick(['connected', 'reconnecting', 'failed'] as const);
    else if (op === 10 && h.services.length > 0) {
      const s = pick(h.services);
      s.tunnel = { ...s.tunnel, state: pick(['up', 'degraded', 'reconnecting'] as const), lastProbe: r() < 0.5 ? undefined : { ok: true, at, latencyMs: 3, error: null } };
    } else if (op === 11 && h.services.length > 0) {
      const s = pick(h.services);
      s.source = r() < 0.3 ? undefined : { kind: 'vllm', atMs: at, detail: 'GET /metrics' };
      s.version = r() < 0.5 ? undefined : `0.${at}`;
    } else if (op === 12 && h.services.length > 0) pick(h.services).perEngine = r() < 0.5 ? undefined : [{ engine: '0', requestsRunning: at, requestsWaiting: 0, kvCachePct: 1, generationTokensPerS: null }];
    else if (op === 13) h.services = r() < 0.5 ? h.services.slice(1) : [...h.services, svc(`s${at}${k}`)];
    else if (op === 14 && h.services.length > 1) h.services.reverse();
    else if (op === 15) h.gpus.reverse();
  }
  return { at, hosts };
}

describe('fleet.tick delta codec', () => {
  it('round-trips over 400 random edits: each decoded tick equals the full state and passes FleetSnapshotSchema', () => {
    const r = createPrng(19);
    const encoder = new TickStreamEncoder();
    const decoder = new TickStreamDecoder();
    let state = fleet(1, [hostView('a'), hostView('b', 8, ['qwen', 'llama']), hostView('c', 0, [])]);
    let keyframes = 0;
    let deltaBytes = 0;
    let fullBytes = 0;
    for (let i = 0; i < 400; i++) {
      const wire = overJson(encoder.encode('fleet.tick', state));
      expect(FleetTickWireSchema.safeParse(wire).success).toBe(true);
      if ((wire as { kind: string }).kind === 'key') keyframes++;
      else {
        deltaBytes += JSON.stringify(wire).length;
        fullBytes += JSON.stringify(state).length;
      }
      const decoded = decoder.decode('fleet.tick', wire);
      if (!decoded.ok) throw new Error(`step ${i}: ${decoded.message}`);
      expect(decoded.state, `step ${i}`).toEqual(overJson(state));
      expect(FleetSnapshotSchema.parse(decoded.state)).toEqual(decoded.state);
      state = edit(state, r, i + 2);
    }
    expect(keyframes).toBe(1);
    expect(deltaBytes).toBeLessThan(fullBytes / 2);
  });

  it('keeps the objects of unchanged hosts, GPUs, services and nested parts; changed ones are new', () => {
    const encoder = new TickStreamEncoder();
    const decoder = new TickStreamDecoder();
    const first = fleet(1, [hostView('a'), hostView('b', 2, ['qwen', 'llama'])]);
    const before = decoder.decode('fleet.tick', overJson(encoder.encode('fleet.tick', first)));
    if (!before.ok) throw new Error(before.message);
    const next = structuredClone(first);
    next.at = 2;
    next.hosts[1]!.gpus[1]!.utilizationPct = 99;
    next.hosts[1]!.services[0]!.requestsRunning = 7;
    const after = decoder.decode('fleet.tick', overJson(encoder.encode('fleet.tick', next)));
    if (!after.ok) throw new Error(after.message);
    const [a0, b0] = before.state.hosts;
    const [a1, b1] = after.state.hosts;
    expect(after.state.at).toBe(2);
    expect(a1).toBe(a0);
    expect(b1).not.toBe(b0);
    expect(b1!.gpus[0]).toBe(b0!.gpus[0]);
    expect(b1!.gpus[1]).not.toBe(b0!.gpus[1]);
    expect(b1!.gpus[1]!.utilizationPct).toBe(99);
    expect(b1!.services[1]).toBe(b0!.services[1]);
    expect(b1!.services[0]!.tunnel).toBe(b0!.services[0]!.tunnel);
    expect(b1!.services[0]!.requestsRunning).toBe(7);
    // the state handed out before is not touched
    expect(b0!.gpus[1]!.utilizationPct).toBe(10);
  });

  it('sends only what changed: a GPU figure is one patch; an unchanged fleet is `at` alone', () => {
    const encoder = new TickStreamEncoder();
    const first = fleet(1, [hostView('a'), hostView('b')]);
    encoder.encode('fleet.tick', first);
    const next = structuredClone(first);
    next.at = 2;
    next.hosts[1]!.gpus[0]!.powerW = 321;
    // Numbers both ends hold go by position among the held object's sorted keys (tick-compact.ts): `at` is 0 of
    // [at, hosts]; GPU 0's powerW is item 0, field 5 of [index, memoryTotalMiB, memoryUsedMiB, name, powerLimitW, powerW, …].
    expect(encoder.encode('fleet.tick', next)).toEqual({
      kind: 'delta',
      seq: 1,
      base: 0,
      n: [0, 2],
      hosts: { patch: [{ key: 'b', gpus: { n: [0, 5, 321] } }] },
    });
    expect(encoder.encode('fleet.tick', { ...structuredClone(next), at: 3 })).toEqual({ kind: 'delta', seq: 2, base: 1, n: [0, 3] });
  });

  it('lists optional fields that disappeared in `unset`, and the decoded host no longer has them', () => {
    const encoder = new TickStreamEncoder();
    const decoder = new TickStreamDecoder();
    const withKey: HostView = {
      ...hostView('a'),
      hostKey: { status: 'changed', role: 'host', endpoint: 'a:22', keyType: 'ssh-ed25519', fingerprint: 'SHA256:n', knownFingerprints: ['SHA256:o'], knownSource: 'known_hosts' },
      gpuVendor: 'nvidia',
    };
    decoder.decode('fleet.tick', overJson(encoder.encode('fleet.tick', fleet(1, [withKey]))));
    const { hostKey: _k, gpuVendor: _v, ...without } = withKey;
    const wire = overJson(encoder.encode('fleet.tick', fleet(2, [without])));
    expect(wire).toMatchObject({ hosts: { patch: [{ key: 'a', unset: ['hostKey', 'gpuVendor'] }] } });
    const decoded = decoder.decode('fleet.tick', wire);
    if (!decoded.ok) throw new Error(decoded.message);
    expect('hostKey' in decoded.state.hosts[0]!).toBe(false);
    expect('gpuVendor' in decoded.state.hosts[0]!).toBe(false);
    // a key present with `undefined` (structured clone keeps it) counts as absent too
    const again = encoder.encode('fleet.tick', fleet(3, [{ ...without, hostKey: undefined }]));
    expect(again).toEqual({ kind: 'delta', seq: 2, base: 1, n: [0, 3] });
  });

  it('adds hosts whole, makes removals and moves visible through `order`', () => {
    const encoder = new TickStreamEncoder();
    const decoder = new TickStreamDecoder();
    decoder.decode('fleet.tick', overJson(encoder.encode('fleet.tick', fleet(1, [hostView('a'), hostView('b'), hostView('c')]))));
    const d = hostView('d', 1);
    const wire = overJson(encoder.encode('fleet.tick', fleet(2, [hostView('c'), d, hostView('a')])));
    expect(wire).toEqual({ kind: 'delta', seq: 1, base: 0, n: [0, 2], hosts: { order: ['c', 'd', 'a'], add: [overJson(d)] } });
    const decoded = decoder.decode('fleet.tick', wire);
    if (!decoded.ok) throw new Error(decoded.message);
    expect(decoded.state.hosts.map((h) => h.label)).toEqual(['c', 'd', 'a']);
    expect(decoded.state.hosts[1]).toEqual(d);
  });

  it('replaces a list whose keys repeat (nothing to key by) with `all`', () => {
    const encoder = new TickStreamEncoder();
    const decoder = new TickStreamDecoder();
    const twins = (power: number): HostView => ({ ...hostView('a'), gpus: [gpu(0), { ...gpu(0), powerW: power }] });
    decoder.decode('fleet.tick', overJson(encoder.encode('fleet.tick', fleet(1, [twins(1)]))));
    const wire = overJson(encoder.encode('fleet.tick', fleet(2, [twins(2)])));
    expect(wire).toMatchObject({ hosts: { patch: [{ key: 'a', gpus: { all: [gpu(0), { ...gpu(0), powerW: 2 }] } }] } });
    const decoded = decoder.decode('fleet.tick', wire);
    expect(decoded.ok && decoded.state.hosts[0]!.gpus[1]!.powerW).toBe(2);
  });

  it('refuses a delta whose base is not the state held, holds nothing, and asks for a keyframe once per streak', () => {
    const encoder = new TickStreamEncoder();
    const decoder = new TickStreamDecoder();
    const states = [1, 2, 3, 4].map((at) => fleet(at, [{ ...hostView('a'), updatedAt: at }]));
    expect(decoder.decode('fleet.tick', overJson(encoder.encode('fleet.tick', states[0]!))).ok).toBe(true);
    encoder.encode('fleet.tick', states[1]!); // written nowhere: lost
    const out = decoder.decode('fleet.tick', overJson(encoder.encode('fleet.tick', states[2]!)));
    expect(out).toEqual({ ok: false, refusal: 'out-of-step', message: 'fleet.tick: a delta on #1, but the state held is #0', resync: true });
    const next = decoder.decode('fleet.tick', overJson(encoder.encode('fleet.tick', states[3]!)));
    expect(next).toMatchObject({ ok: false, refusal: 'no-state', resync: false });
    const repeats: boolean[] = [];
    for (let i = 0; i < 2 * RESYNC_REPEAT_EVERY; i++) {
      const r = decoder.decode('fleet.tick', overJson(encoder.encode('fleet.tick', { ...states[3]!, at: 10 + i })));
      repeats.push(!r.ok && r.resync);
    }
    expect(repeats.filter(Boolean)).toHaveLength(2);
    encoder.resync('fleet.tick');
    const key = overJson(encoder.encode('fleet.tick', states[3]!));
    expect(key).toMatchObject({ kind: 'key' });
    expect(decoder.decode('fleet.tick', key)).toEqual({ ok: true, state: overJson(states[3]!) });
  });

  it('a wire payload the schema refuses: the error names the host and field, nothing is applied, a keyframe is asked for', () => {
    const encoder = new TickStreamEncoder();
    const decoder = new TickStreamDecoder();
    const first = fleet(1, [hostView('gpu-03', 2)]);
    const held = decoder.decode('fleet.tick', overJson(encoder.encode('fleet.tick', first)));
    if (!held.ok) throw new Error(held.message);
    const snapshotOfHeld = structuredClone(held.state);
    const bad = { kind: 'delta', seq: 1, base: 0, set: { at: 2 }, hosts: { patch: [{ key: 'gpu-03', gpus: { patch: [{ key: 1, set: { powerW: 'lots' } }] } }] } };
    const out = decoder.decode('fleet.tick', bad);
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.refusal).toBe('invalid');
    expect(out.resync).toBe(true);
    expect(out.message).toMatch(/^fleet\.tick: hosts\.patch\[gpu-03\]\.gpus\.patch\[1\]\.set\.powerW: /);
    expect(held.state).toEqual(snapshotOfHeld);
    // holds nothing now: the next good delta is refused too, until a keyframe
    expect(decoder.decode('fleet.tick', { kind: 'delta', seq: 2, base: 1, set: { at: 3 } })).toMatchObject({ ok: false, refusal: 'no-state' });

    const cases: Array<[unknown, RegExp]> = [
      [{ kind: 'delta', seq: 1, base: 0, hosts: { patch: [{ key: 'gpu-03', unset: ['label'] }] } }, /hosts\.patch\[gpu-03\]\.unset\[#0\]/],
      [{ kind: 'delta', seq: 1, base: 0, hosts: { patch: [{ key: 'gpu-03', set: { label: 'other' } }] } }, /hosts\.patch\[gpu-03\]\.set\.label: Unrecognized key/],
      [{ kind: 'delta', seq: 1, base: 0, hosts: { patch: [{ key: 'gpu-03', set: { gpuStale: 'yes' } }] } }, /hosts\.patch\[gpu-03\]\.set\.gpuStale: .*boolean/],
      [
        { kind: 'delta', seq: 1, base: 0, hosts: { patch: [{ key: 'gpu-03', services: { patch: [{ key: 'qwen', set: { tunnel: { state: 'teleported', localUrl: null, lastError: null } } }] } }] } },
        /hosts\.patch\[gpu-03\]\.services\.patch\[qwen\]\.set\.tunnel\.state: /,
      ],
      [{ kind: 'delta', seq: 1, base: 0, hosts: { add: [{ label: 'x' }], order: ['gpu-03', 'x'] } }, /hosts\.add\[x\]\.address/],
      [{ kind: 'frame', seq: 1 }, /kind/],
      [{ kind: 'key', seq: 1, state: { at: 'now', hosts: [] } }, /state\.at/],
    ];
    // `undefined` for a required field (structured clone can carry it): refused, not applied as a hole
    const holes = new TickStreamDecoder();
    holes.decode('fleet.tick', overJson(new TickStreamEncoder().encode('fleet.tick', first)));
    expect(holes.decode('fleet.tick', { kind: 'delta', seq: 1, base: 0, hosts: { patch: [{ key: 'gpu-03', gpus: { patch: [{ key: 0, set: { name: undefined } }] } }] } })).toMatchObject({
      ok: false,
      refusal: 'invalid',
      message: expect.stringMatching(/gpus\.patch\[0\]\.set\.name: /),
    });
    for (const [wire, message] of cases) {
      const fresh = new TickStreamDecoder();
      fresh.decode('fleet.tick', overJson(new TickStreamEncoder().encode('fleet.tick', first)));
      const r = fresh.decode('fleet.tick', wire);
      expect(r.ok, JSON.stringify(wire)).toBe(false);
      if (!r.ok) expect(r.message, JSON.stringify(wire)).toMatch(message);
    }
  });

  it('a delta that does not fit the state held (unknown host, added twice, missing from order) is refused with the path', () => {
    const first = fleet(1, [hostView('a'), hostView('b')]);
    const cases: Array<[unknown, string]> = [
      [{ kind: 'delta', seq: 1, base: 0, hosts: { patch: [{ key: 'zz', set: { state: 'failed' } }] } }, 'fleet.tick: hosts[zz]: patched, but not in the list'],
      [{ kind: 'delta', seq: 1, base: 0, hosts: { order: ['a', 'b'], add: [hostView('a')] } }, 'fleet.tick: hosts[a]: added, but it is already there'],
      [{ kind: 'delta', seq: 1, base: 0, hosts: { order: ['a', 'c'] } }, 'fleet.tick: hosts[c]: is neither in the state held nor added'],
      [{ kind: 'delta', seq: 1, base: 0, hosts: { add: [hostView('c')] } }, 'fleet.tick: hosts: items added without the new `order`'],
      [{ kind: 'delta', seq: 1, base: 0, hosts: { patch: [{ key: 'a', gpus: { patch: [{ key: 7, set: { powerW: 1 } }] } }] } }, 'fleet.tick: hosts[a].gpus[7]: patched, but not in the list'],
    ];
    for (const [wire, message] of cases) {
      const decoder = new TickStreamDecoder();
      const held = decoder.decode('fleet.tick', overJson(new TickStreamEncoder().encode('fleet.tick', first)));
      const copy = structuredClone(held.ok ? held.state : null);
      expect(decoder.decode('fleet.tick', overJson(wire))).toEqual({ ok: false, refusal: 'unfit', message, resync: true });
      expect(held.ok ? held.state : null).toEqual(copy);
    }
  });

  it('structured clone (Electron IPC) works as JSON does', () => {
    const encoder = new TickStreamEncoder();
    const decoder = new TickStreamDecoder();
    let state = fleet(1, [hostView('a'), hostView('b', 3, ['x', 'y'])]);
    const r = createPrng(7);
    for (let i = 0; i < 50; i++) {
      const decoded = decoder.decode('fleet.tick', structuredClone(encoder.encode('fleet.tick', state)));
      if (!decoded.ok) throw new Error(decoded.message);
      expect(decoded.state).toEqual(state);
      state = edit(state, r, i + 2);
    }
  });
});

describe('telemetry.tick delta codec', () => {
  const tick = (at: number, hosts: Array<[string, Record<string, number | null>, (string | null)?]>): TelemetryTick => ({
    at,
    hosts: hosts.map(([host, values, staleReason]) => ({ host, staleReason: staleReason ?? null, values })),
  });

  it('sends changed and removed value keys only, and decodes to the full tick every time', () => {
    const encoder = new TickStreamEncoder();
    const decoder = new TickStreamDecoder();
    const ticks = [
      tick(1, [['a', { 'gpu.0.util_pct': 1, 'host.cost_usd_h': 2 }], ['b', { 'svc.q.running': 3 }]]),
      tick(2, [['a', { 'gpu.0.util_pct': 5, 'host.cost_usd_h': 2 }], ['b', { 'svc.q.running': 3 }]]),
      tick(3, [['a', { 'gpu.0.util_pct': 5 }], ['b', { 'svc.q.running': null, 'svc.q.waiting': 0 }, 'SSH_DOWN: gone']]),
      tick(4, [['b', { 'svc.q.running': null, 'svc.q.waiting': 0 }], ['c', {}]]),
    ];
    const wires = ticks.map((t) => overJson(encoder.encode('telemetry.tick', t)));
    expect(wires[1]).toEqual({ kind: 'delta', seq: 1, base: 0, n: [0, 2], hosts: { patch: [{ key: 'a', values: { n: [0, 5] } }] } });
    expect(wires[2]).toEqual({
      kind: 'delta',
      seq: 2,
      base: 1,
      n: [0, 3],
      hosts: {
        patch: [
          { key: 'a', values: { unset: ['host.cost_usd_h'] } },
          { key: 'b', set: { staleReason: 'SSH_DOWN: gone' }, values: { set: { 'svc.q.running': null, 'svc.q.waiting': 0 } } },
        ],
      },
    });
    wires.forEach((wire, i) => {
      expect(TelemetryTickWireSchema.safeParse(wire).success).toBe(true);
      const decoded = decoder.decode('telemetry.tick', wire);
      if (!decoded.ok) throw new Error(decoded.message);
      expect(decoded.state).toEqual(ticks[i]);
      expect(TelemetryTickSchema.parse(decoded.state)).toEqual(ticks[i]);
    });
  });

  it('keeps an unchanged host tick by identity, and a record key named __proto__ stays an own value', () => {
    const encoder = new TickStreamEncoder();
    const decoder = new TickStreamDecoder();
    const first = decoder.decode('telemetry.tick', overJson(encoder.encode('telemetry.tick', tick(1, [['a', { x: 1 }], ['b', { y: 1 }]]))));
    const raw = JSON.parse('{"kind":"delta","seq":1,"base":0,"set":{"at":2},"hosts":{"patch":[{"key":"b","values":{"set":{"__proto__":5}}}]}}') as unknown;
    const second = decoder.decode('telemetry.tick', raw);
    if (!first.ok || !second.ok) throw new Error('refused');
    expect(second.state.hosts[0]).toBe(first.state.hosts[0]);
    const values = second.state.hosts[1]!.values;
    expect(Object.getPrototypeOf(values)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('keeps a separate state per channel on one stream', () => {
    const encoder = new TickStreamEncoder();
    const decoder = new TickStreamDecoder();
    decoder.decode('fleet.tick', overJson(encoder.encode('fleet.tick', fleet(1, [hostView('a')]))));
    decoder.decode('telemetry.tick', overJson(encoder.encode('telemetry.tick', tick(1, [['a', { x: 1 }]]))));
    encoder.resync('telemetry.tick');
    expect(encoder.encode('fleet.tick', fleet(2, [hostView('a')]))).toMatchObject({ kind: 'delta' });
    expect(encoder.encode('telemetry.tick', tick(2, [['a', { x: 2 }]]))).toMatchObject({ kind: 'key' });
    expect(encoder.encodeEvent('host.status', { label: 'a', state: 'connected', message: null })).toEqual({ label: 'a', state: 'connected', message: null });
  });
});

describe('eventWireChannels', () => {
  it('carries every event channel, with the two ticks in their wire form', () => {
    expect(Object.keys(eventWireChannels).sort()).toEqual(Object.keys(eventChannels).sort());
    expect(eventWireChannels['fleet.tick']).toBe(FleetTickWireSchema);
    expect(eventWireChannels['telemetry.tick']).toBe(TelemetryTickWireSchema);
    expect(eventWireChannels['host.status']).toBe(eventChannels['host.status']);
  });
});
