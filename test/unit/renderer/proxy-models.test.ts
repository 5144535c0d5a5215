import { describe, expect, it } from 'vitest';
import { ProxyStatsSchema, type ProxyStats } from '../../../src-preload/contract/index.js';
import { upstreamFigures as upstream } from '../../helpers/proxy-figures.js';
import { chainText, modelsView } from '../../../src-renderer/src/features/proxy/proxy-models.js';


/** Two replicas of qwen (weights 3:1, one failing), gemma alone and asleep, and a group `chat` = qwen → gemma. */
const REPLICA_STATS: ProxyStats = ProxyStatsSchema.parse({
  at: 1_700_000_000_000,
  url: 'http://127.0.0.1:18001/v1',
  answered: 40,
  inFlight: 5,
  queued: 1,
  upstreams: [
    upstream('l20-poc/qwen', 'qwen', { aliases: ['default'], weight: 3, inFlight: 4, queued: 1, routed: 30 }),
    upstream('tri-gpu/qwen', 'qwen', { weight: 1, inFlight: 1, slots: 4, routed: 10, failing: true }),
    upstream('tri-gpu/gemma', 'gemma', { state: 'sleeping', routed: 0 }),
  ],
  models: [
    { name: 'qwen', kind: 'model', chain: ['qwen'], replicas: ['l20-poc/qwen', 'tri-gpu/qwen'], aliases: ['default'] },
    { name: 'gemma', kind: 'model', chain: ['gemma'], replicas: ['tri-gpu/gemma'], aliases: [] },
    { name: 'chat', kind: 'group', chain: ['qwen', 'gemma'], replicas: ['l20-poc/qwen', 'tri-gpu/qwen', 'tri-gpu/gemma'], aliases: [] },
  ],
  failovers: 2,
});

describe('proxy models view', () => {
  it('a two-replica model: weight share (weights differ), slots, queue, routed and its share of the model', () => {
    const view = modelsView(REPLICA_STATS);
    expect(view.failovers).toBe(2);
    expect(view.anyWeighted).toBe(true);
    const qwen = view.rows[0]!;
    expect(qwen).toMatchObject({ name: 'qwen', kind: 'model', aliases: ['default'], weighted: true, routedTotal: 40, chain: [] });
    expect(qwen.replicas).toEqual([
      { key: 'l20-poc/qwen', label: 'l20-poc', serviceId: 'qwen', known: true, state: 'ready', failing: false, weight: 3, weightSharePct: 75, inFlight: 4, slots: 8, queued: 1, routed: 30, routedSharePct: 75 },
      { key: 'tri-gpu/qwen', label: 'tri-gpu', serviceId: 'qwen', known: true, state: 'ready', failing: true, weight: 1, weightSharePct: 25, inFlight: 1, slots: 4, queued: 0, routed: 10, routedSharePct: 25 },
    ]);
  });

  it('one replica with nothing routed yet: no weight to compare, share unknown (not 0%)', () => {
    const gemma = modelsView(REPLICA_STATS).rows[1]!;
    expect(gemma).toMatchObject({ name: 'gemma', weighted: false, routedTotal: 0 });
    expect(gemma.replicas[0]).toMatchObject({ state: 'sleeping', weightSharePct: 100, routed: 0, routedSharePct: null });
  });

  it('a group: its chain in order with how many replicas of each step are ready and not failing; no replica rows of its own', () => {
    const chat = modelsView(REPLICA_STATS).rows[2]!;
    expect(chat).toMatchObject({ name: 'chat', kind: 'group', replicas: [], routedTotal: null });
    expect(chat.chain).toEqual([
      { model: 'qwen', replicas: 2, usable: 1 },
      { model: 'gemma', replicas: 1, usable: 0 },
    ]);
    expect(chainText(chat.chain)).toBe('qwen → gemma');
  });

  it('equal weights are not a weighting; a main without routed/weight/failing/models reads as unknown, not zero', () => {
    const even = modelsView({
      ...REPLICA_STATS,
      upstreams: REPLICA_STATS.upstreams.map((u) => ({ ...u, weight: 2 })),
    });
    expect(even.anyWeighted).toBe(false);
    expect(even.rows[0]!.replicas.map((r) => r.weightSharePct)).toEqual([50, 50]);

    const older = modelsView({
      ...REPLICA_STATS,
      failovers: undefined,
      upstreams: REPLICA_STATS.upstreams.map(({ weight: _w, routed: _r, failing: _f, ...u }) => u),
    });
    expect(older.failovers).toBeNull();
    expect(older.anyWeighted).toBe(false);
    expect(older.rows[0]).toMatchObject({ routedTotal: null, weighted: false });
    expect(older.rows[0]!.replicas[1]).toMatchObject({ failing: false, routed: null, routedSharePct: null, weight: 1 });

    expect(modelsView({ upstreams: REPLICA_STATS.upstreams }).rows).toEqual([]);
  });

  it('a replica listed without figures keeps its host/service and shows every figure as unknown', () => {
    const view = modelsView({ ...REPLICA_STATS, upstreams: REPLICA_STATS.upstreams.slice(0, 1) });
    expect(view.rows[0]!.replicas[1]).toEqual({
      key: 'tri-gpu/qwen',
      label: 'tri-gpu',
      serviceId: 'qwen',
      known: false,
      state: null,
      failing: false,
      weight: null,
      weightSharePct: null,
      inFlight: null,
      slots: null,
      queued: null,
      routed: null,
      routedSharePct: null,
    });
    // the one replica with figures has the whole share
    expect(view.rows[0]!.replicas[0]).toMatchObject({ weightSharePct: 100, routedSharePct: 100 });
    expect(view.rows[2]!.chain).toEqual([
      { model: 'qwen', replicas: 2, usable: 1 },
      { model: 'gemma', replicas: 1, usable: 0 },
    ]);
  });
});
