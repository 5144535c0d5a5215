// proxy.stats travels delta-coded like the ticks: what main encodes per
// subscriber decodes back to the full ProxyStats every time, unchanged
// upstreams keep their objects, and a tick that moves a few figures costs a
// fraction of the whole state on the wire.
import { describe, expect, it } from 'vitest';
import { createPrng } from '../../../src-main/demo/text-gen.js';
import {
  eventWireChannels,
  ProxyStatsSchema,
  ProxyStatsWireSchema,
  TickStreamDecoder,
  TickStreamEncoder,
  type ClassFigures,
  type ProxyStats,
  type UpstreamFigures,
} from '../../../src-preload/contract/index.js';

const CLASSES = ['interactive', 'system', 'batch'] as const;

function classFigures(c: (typeof CLASSES)[number]): ClassFigures {
  return { class: c, inFlight: 0, queued: 0, waitP50Ms: null, waitP95Ms: null, ttftP50Ms: null, ttftP95Ms: null, requestsPerS: 0, tokensOutPerS: 0, completed: 0, rejected: 0, holdBudgetMs: 45_000 };
}

function upstream(i: number): UpstreamFigures {
  return {
    upstream: `gpu-${String(i).padStart(2, '0')}/svc0`,
    label: `gpu-${String(i).padStart(2, '0')}`,
    serviceId: 'svc0',
    model: i % 2 ? 'Qwen3.6-27B-FP8' : 'Gemma-3-27B-it',
    aliases: ['default'],
    state: 'ready',
    slots: 8,
    caps: { interactive: 8, system: 4, batch: 6, reservedInteractive: 2 },
    inFlight: 0,
    queued: 0,
    serviceMsEstimate: null,
    classes: CLASSES.map(classFigures),
    routed: 0,
    errors: { windowMs: 300_000, answered: 0, failed: 0 },
    stalled: [],
  };
}

function stats(at: number, count: number): ProxyStats {
  const upstreams = Array.from({ length: count }, (_, i) => upstream(i));
  return {
    at,
    url: 'http://127.0.0.1:8700',
    answered: 0,
    inFlight: 0,
    queued: 0,
    upstreams,
    models: [{ name: 'Qwen3.6-27B-FP8', kind: 'model', chain: ['Qwen3.6-27B-FP8'], replicas: upstreams.filter((_, i) => i % 2).map((u) => u.upstream), aliases: [] }],
    failovers: 0,
    requestLog: { written: 0, dropped: 0, pending: 0, failingSince: null },
  };
}

/** One tick of traffic: a few upstreams' figures move, sometimes a state, an optional field or the list itself. */
function edit(prev: ProxyStats, r: () => number, at: number): ProxyStats {
  const upstreams = prev.upstreams.map((u) => {
    if (r() > 0.2) return u;
    const classes = u.classes.map((c) => (r() > 0.5 ? c : { ...c, inFlight: Math.floor(r() * 8), completed: c.completed + 1, waitP95Ms: r() > 0.5 ? Math.round(r() * 900) : null }));
    const next: UpstreamFigures = { ...u, inFlight: Math.floor(r() * 8), routed: (u.routed ?? 0) + 1, classes };
    if (r() < 0.05) next.state = r() < 0.5 ? 'sleeping' : 'ready';
    if (r() < 0.05) delete next.errors;
    if (r() < 0.05) next.latency = { ttftP50Ms: 120, ttftP95Ms: 300, e2eP50Ms: 900, e2eP95Ms: 2400, requests: 9, streamed: 6 };
    if (r() < 0.03) next.classes = next.classes.map((c) => {
      const { holdBudgetMs: _gone, ...rest } = c;
      return rest;
    });
    return next;
  });
  let list = upstreams;
  if (r() < 0.05) list = [...list.slice(1), upstream(100 + Math.floor(r() * 1000))];
  const next: ProxyStats = { ...prev, at, answered: prev.answered + 3, upstreams: list };
  if (r() < 0.05) delete next.requestLog;
  else if (next.requestLog === undefined) next.requestLog = { written: 1, dropped: 0, pending: 0, failingSince: null };
  return next;
}

const bytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v));

describe('proxy.stats delta codec', () => {
  it('round-trips 400 random ticks: each decoded state equals the state sent and passes ProxyStatsSchema', () => {
    const r = createPrng(7);
    const encoder = new TickStreamEncoder();
    const decoder = new TickStreamDecoder();
    let state = stats(1, 24);
    for (let i = 0; i < 400; i++) {
      const wire = JSON.parse(JSON.stringify(encoder.encode('proxy.stats', state))) as unknown;
      expect(ProxyStatsWireSchema.safeParse(wire).success).toBe(true);
      const out = decoder.decode('proxy.stats', wire);
      if (!out.ok) throw new Error(out.message);
      expect(out.state).toEqual(JSON.parse(JSON.stringify(state)));
      expect(ProxyStatsSchema.safeParse(out.state).success).toBe(true);
      state = edit(state, r, i + 2);
    }
  });

  it('keeps unchanged upstreams and classes by identity; a tick that moves one figure sends a small patch', () => {
    const encoder = new TickStreamEncoder();
    const decoder = new TickStreamDecoder();
    const first = stats(1, 64);
    const a = decoder.decode('proxy.stats', encoder.encode('proxy.stats', first));
    if (!a.ok) throw new Error(a.message);
    const moved = { ...first.upstreams[5]!, inFlight: 3 };
    const second: ProxyStats = { ...first, at: 2, upstreams: first.upstreams.map((u, i) => (i === 5 ? moved : u)) };
    const wire = encoder.encode('proxy.stats', second);
    // numbers by position among the held object's sorted keys: `at` is 1 of [answered, at, …]; upstream 5's inFlight is field 4
    expect(wire).toEqual({ kind: 'delta', seq: 1, base: 0, n: [1, 2], upstreams: { n: [5, 4, 3] } });
    expect(bytes(wire) * 100).toBeLessThan(bytes(second));
    const b = decoder.decode('proxy.stats', JSON.parse(JSON.stringify(wire)));
    if (!b.ok) throw new Error(b.message);
    expect(b.state.upstreams[4]).toBe(a.state.upstreams[4]);
    expect(b.state.upstreams[5]).not.toBe(a.state.upstreams[5]);
    expect(b.state.upstreams[5]!.classes).toBe(a.state.upstreams[5]!.classes);
    expect(b.state.upstreams[5]!.inFlight).toBe(3);
  });

  it('names what disappeared in unset (an upstream field, a class field, a top-level field)', () => {
    const encoder = new TickStreamEncoder();
    const decoder = new TickStreamDecoder();
    const first = stats(1, 2);
    decoder.decode('proxy.stats', encoder.encode('proxy.stats', first));
    const { requestLog: _log, ...rest } = first;
    const { errors: _errors, ...u0 } = first.upstreams[0]!;
    const { holdBudgetMs: _hb, ...c0 } = first.upstreams[1]!.classes[0]!;
    const second: ProxyStats = { ...rest, at: 2, upstreams: [u0, { ...first.upstreams[1]!, classes: [c0, ...first.upstreams[1]!.classes.slice(1)] }] };
    const wire = encoder.encode('proxy.stats', second) as Record<string, unknown>;
    expect(wire['unset']).toEqual(['requestLog']);
    const out = decoder.decode('proxy.stats', JSON.parse(JSON.stringify(wire)));
    if (!out.ok) throw new Error(out.message);
    expect('requestLog' in out.state).toBe(false);
    expect('errors' in out.state.upstreams[0]!).toBe(false);
    expect('holdBudgetMs' in out.state.upstreams[1]!.classes[0]!).toBe(false);
  });

  it('refuses a patch naming a field ProxyStats does not have, and asks for a keyframe', () => {
    const encoder = new TickStreamEncoder();
    const decoder = new TickStreamDecoder();
    decoder.decode('proxy.stats', encoder.encode('proxy.stats', stats(1, 2)));
    const out = decoder.decode('proxy.stats', { kind: 'delta', seq: 1, base: 0, upstreams: { patch: [{ key: 'gpu-00/svc0', set: { secret: 'x' } }] } });
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.refusal).toBe('invalid');
    expect(out.message).toContain('secret');
    expect(out.resync).toBe(true);
  });

  it('is carried in its wire form by the bridges', () => {
    expect(eventWireChannels['proxy.stats']).toBe(ProxyStatsWireSchema);
  });
});
