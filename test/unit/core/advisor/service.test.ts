import { describe, expect, it } from 'vitest';
import type { EventChannel } from '../../../../src-preload/contract/index.js';
import { AdvisorService, REJECTIONS_SETTING, roundSampleOf, type AdvisorFleetState } from '../../../../src-main/core/advisor/index.js';
import { createLogger, FakeClock, toDisposable } from '../../../../src-main/core/base/index.js';
import { openStore } from '../../../../src-main/core/store/index.js';
import { upstreamFigures } from '../../../helpers/proxy-figures.js';

const KEY = 'gpu-a/qwen';

function host(extra: Partial<AdvisorFleetState['hosts'][number]> = {}): AdvisorFleetState['hosts'][number] {
  return {
    label: 'gpu-a',
    session: { state: 'connected' },
    gpus: {
      readings: [
        { index: 0, utilizationPct: 30, memoryUsedMiB: 40_000, memoryTotalMiB: 80_000 },
        { index: 1, utilizationPct: 97, memoryUsedMiB: 79_000, memoryTotalMiB: 80_000 },
      ],
      stale: null,
    },
    gpuProcesses: null,
    services: [{ id: 'qwen', figures: { kvCachePct: 42 }, stale: null, reading: { slotsReported: 4 } }],
    ...extra,
  };
}

describe('advisor round samples', () => {
  it("reads the service's own GPUs where the process list names them, else the busiest of the host's", () => {
    const u = upstreamFigures(KEY, 'Qwen');
    expect(roundSampleOf(u, { hosts: [host()] }, 1)).toMatchObject({ gpuUtilPct: 97, kvCachePct: 42, serverSlots: 4 });
    const own = host({ gpuProcesses: { processes: [{ gpuIndex: 0, serviceId: 'qwen' }, { gpuIndex: 1, serviceId: 'other' }] } });
    expect(roundSampleOf(u, { hosts: [own] }, 1)).toMatchObject({ gpuUtilPct: 30, gpuMemoryPct: 50 });
  });

  it('stale GPU readings, a lost host and stale service figures are unknown, never 0', () => {
    const u = upstreamFigures(KEY, 'Qwen');
    const stale = host({ gpus: { ...host().gpus, stale: { code: 'TELEMETRY_SCRAPE_FAILED', message: 'x' } } });
    expect(roundSampleOf(u, { hosts: [stale] }, 1)).toMatchObject({ gpuUtilPct: null, gpuMemoryPct: null, kvCachePct: 42 });
    expect(roundSampleOf(u, { hosts: [host({ session: { state: 'reconnecting' } })] }, 1)).toMatchObject({ gpuUtilPct: null });
    const svc = host({ services: [{ id: 'qwen', figures: { kvCachePct: 42 }, stale: { code: 'X', message: 'y' }, reading: null }] });
    expect(roundSampleOf(u, { hosts: [svc] }, 1)).toMatchObject({ kvCachePct: null });
    expect(roundSampleOf(u, { hosts: [] }, 1)).toMatchObject({ gpuUtilPct: null, kvCachePct: null, serverSlots: null });
  });
});

describe('advisor service', () => {
  function start(seed: unknown) {
    const clock = new FakeClock();
    const store = openStore({ file: ':memory:', clock });
    if (seed !== undefined) store.settings.set(REJECTIONS_SETTING, seed);
    const lines: string[] = [];
    const events: EventChannel[] = [];
    const rounds: ((s: AdvisorFleetState) => void)[] = [];
    const advisor = new AdvisorService({
      proxy: { snapshot: () => ({ at: clock.now(), url: null, answered: 0, inFlight: 0, queued: 0, upstreams: [upstreamFigures(KEY, 'Qwen')] }), setCaps: () => { throw new Error('not here'); }, onDidAnswer: () => toDisposable(() => undefined) },
      fleet: { onDidRound: (l) => (rounds.push(l), toDisposable(() => undefined)) },
      settings: store.settings,
      audit: store.audit,
      emit: (channel) => events.push(channel),
      clock,
      logger: createLogger({ level: 'debug', write: (l) => lines.push(l) }),
    });
    return { advisor, store, lines, events, rounds, clock };
  }

  it('keeps a damaged stored rejection aside, logs it, and writes it back unchanged', () => {
    const damaged = { id: 'adv_x', kind: 'sideways' };
    const { lines, store } = start([damaged]);
    expect(lines.join('\n')).toMatch(/kept an unreadable advisor rejection aside/);
    expect(store.settings.get(REJECTIONS_SETTING)).toEqual([damaged]);
  });

  it('answers an unknown id with ADVISOR_UNKNOWN_RECOMMENDATION, touching nothing', () => {
    const { advisor, store } = start(undefined);
    expect(() => advisor.apply('adv_0123456789abcdef', 'test')).toThrow(expect.objectContaining({ code: 'ADVISOR_UNKNOWN_RECOMMENDATION' }));
    expect(() => advisor.reject('adv_0123456789abcdef', 'x', 'test')).toThrow(expect.objectContaining({ code: 'ADVISOR_UNKNOWN_RECOMMENDATION' }));
    expect(store.audit.list({ limit: 10 }).filter((e) => e.type.startsWith('advisor.'))).toEqual([]);
  });

  it('says why there is no advice, and pushes advisor.changed once per change of what it says', () => {
    const { advisor, events, rounds, clock } = start(undefined);
    expect(advisor.list().upstreams).toEqual([{ upstream: KEY, verdict: 'insufficient_traffic', because: ['no fleet round of this upstream in the window yet'] }]);
    for (let i = 0; i < 40; i++) {
      clock.advance(1000);
      for (const r of rounds) r({ hosts: [host()] });
    }
    expect(events).toEqual(['advisor.changed']);
    expect(advisor.list().upstreams[0]!.because[0]).toMatch(/^not enough traffic in the last 15 min: 0 requests over 40 rounds/);
  });
});
