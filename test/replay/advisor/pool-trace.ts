// Generated proxy traces for the advisor (fixed seed, no fixtures): one upstream's
// priority pool simulated in 100 ms steps under the proxy's admission rules
// (interactive first; system and batch never take the interactive reserve; a
// waiter past its hold budget is refused), with a GPU whose utilisation and KV
// cache follow the sequences running. The trace drives the real AdvisorService
// through its ports on a FakeClock: every answer as the proxy's onDidAnswer,
// one fleet round per second, and setCaps as the proxy's (so an applied advice
// changes the simulated pool).
import { createPrng } from '../../../src-main/demo/text-gen.js';
import type { PoolCaps, ProxyStats, TrafficClass } from '../../../src-preload/contract/index.js';
import { AdvisorService, type AdvisorFleetState, type AdvisorSettings } from '../../../src-main/core/advisor/index.js';
import { FakeClock, silentLogger, toDisposable, type Disposable } from '../../../src-main/core/base/index.js';
import type { Store } from '../../../src-main/core/store/index.js';
import { upstreamFigures } from '../../helpers/proxy-figures.js';

const CLASSES: readonly TrafficClass[] = ['interactive', 'system', 'batch'];
const STEP_MS = 100;
const ROUND_MS = 1_000;
export const UPSTREAM = 'gpu-a/qwen';

/** Open traffic (Poisson arrivals) or closed loop (`clients` each sending again after `thinkS`). */
export interface ClassLoad {
  ratePerS?: number;
  clients?: number;
  thinkS?: number;
  /** Mean service time (exponential), seconds. */
  serviceS: number;
}

export interface TraceSpec {
  slots: number;
  caps: PoolCaps;
  load: Partial<Record<TrafficClass, ClassLoad>>;
  /** GPU utilisation and KV cache per running sequence (%), capped at 100. */
  utilPerSeqPct: number;
  kvPerSeqPct: number;
  holdBudgetMs?: number;
  seed?: number;
}

/** mulberry32, seedable and the same on every machine: the demo's own (one PRNG in the tree). */
export const rng = createPrng;

interface Running {
  cls: TrafficClass;
  endsAt: number;
  queueMs: number;
}

interface Waiting {
  cls: TrafficClass;
  arrivedAt: number;
}

export class PoolTrace {
  readonly clock = new FakeClock(1_800_000_000_000);
  readonly advisor: AdvisorService;
  caps: PoolCaps;
  spec: TraceSpec;
  /** Every answer's queue wait per class, for measuring what an applied advice changed. */
  readonly waits: { at: number; cls: TrafficClass; queueMs: number }[] = [];
  readonly setCapsCalls: { upstream: string; caps: PoolCaps; caller: string }[] = [];
  private readonly random: () => number;
  private running: Running[] = [];
  private queues: Record<TrafficClass, Waiting[]> = { interactive: [], system: [], batch: [] };
  /** Closed-loop clients: when each sends next (Infinity while its request is out). */
  private clientsNext: Record<TrafficClass, number[]> = { interactive: [], system: [], batch: [] };
  private answerListeners: ((r: { upstream: string | null; class: TrafficClass | null; queueMs: number }) => void)[] = [];
  private roundListeners: ((s: AdvisorFleetState) => void)[] = [];
  private lastRoundAt: number;

  constructor(spec: TraceSpec, store: Store, options: Partial<AdvisorSettings> = {}) {
    this.spec = spec;
    this.caps = { ...spec.caps };
    this.random = rng(spec.seed ?? 1);
    this.lastRoundAt = this.clock.now();
    this.resetClients();
    this.advisor = new AdvisorService({
      proxy: {
        snapshot: () => this.snapshot(),
        setCaps: (upstream, caps, caller) => {
          this.setCapsCalls.push({ upstream, caps, caller });
          this.caps = { ...caps };
          return { ...caps };
        },
        onDidAnswer: (l) => this.listen(this.answerListeners, l),
      },
      fleet: { onDidRound: (l) => this.listen(this.roundListeners, l) },
      settings: store.settings,
      audit: store.audit,
      emit: null,
      clock: this.clock,
      logger: silentLogger,
      options,
    });
  }

  /** Changes the traffic from now on (same pool, same queues). */
  setLoad(load: TraceSpec['load']): void {
    this.spec = { ...this.spec, load };
    this.resetClients();
  }

  /** Runs the trace for `ms` of simulated time. */
  run(ms: number): void {
    const end = this.clock.now() + ms;
    while (this.clock.now() < end) {
      this.clock.advance(STEP_MS);
      this.step(this.clock.now());
    }
  }

  /** p95 queue wait of `cls` over answers since `since`. */
  waitP95(cls: TrafficClass, since: number): number | null {
    const xs = this.waits.filter((w) => w.cls === cls && w.at >= since).map((w) => w.queueMs).sort((a, b) => a - b);
    return xs.length === 0 ? null : xs[Math.min(xs.length - 1, Math.ceil(0.95 * xs.length) - 1)]!;
  }

  private listen<T>(list: T[], l: T): Disposable {
    list.push(l);
    return toDisposable(() => {
      list.splice(list.indexOf(l), 1);
    });
  }

  private resetClients(): void {
    for (const c of CLASSES) this.clientsNext[c] = Array.from({ length: this.spec.load[c]?.clients ?? 0 }, () => this.clock.now() + this.random() * 1000);
  }

  private exp(meanS: number): number {
    return -Math.log(1 - this.random()) * meanS * 1000;
  }

  private step(now: number): void {
    for (const r of this.running.filter((x) => x.endsAt <= now)) this.answer(r.cls, r.queueMs, now);
    this.running = this.running.filter((x) => x.endsAt > now);
    this.arrive(now);
    this.expire(now);
    this.admit(now);
    if (now - this.lastRoundAt >= ROUND_MS) {
      this.lastRoundAt = now;
      const state = this.fleetState();
      for (const l of [...this.roundListeners]) l(state);
    }
  }

  private arrive(now: number): void {
    for (const cls of CLASSES) {
      const load = this.spec.load[cls];
      if (!load) continue;
      if (load.ratePerS && this.random() < load.ratePerS * (STEP_MS / 1000)) this.queues[cls].push({ cls, arrivedAt: now });
      const next = this.clientsNext[cls];
      for (let i = 0; i < next.length; i++) {
        if (next[i]! <= now) {
          next[i] = Infinity;
          this.queues[cls].push({ cls, arrivedAt: now });
        }
      }
    }
  }

  private expire(now: number): void {
    const budget = this.spec.holdBudgetMs ?? 45_000;
    for (const cls of CLASSES) {
      const kept: Waiting[] = [];
      for (const w of this.queues[cls]) {
        if (now - w.arrivedAt >= budget) this.answer(cls, budget, now);
        else kept.push(w);
      }
      this.queues[cls] = kept;
    }
  }

  private inFlight(cls: TrafficClass): number {
    return this.running.filter((r) => r.cls === cls).length;
  }

  /** The proxy's pool rule (pool.ts freeSlots): slots, the class cap, and for system/batch the interactive reserve. */
  private admissible(cls: TrafficClass): boolean {
    const total = this.running.length;
    if (total >= this.spec.slots || this.inFlight(cls) >= this.caps[cls]) return false;
    return cls === 'interactive' || total - this.inFlight('interactive') < this.spec.slots - this.caps.reservedInteractive;
  }

  private admit(now: number): void {
    for (const cls of CLASSES) {
      while (this.queues[cls].length > 0 && this.admissible(cls)) {
        const w = this.queues[cls].shift()!;
        this.running.push({ cls, endsAt: now + Math.max(STEP_MS, this.exp(this.spec.load[cls]?.serviceS ?? 1)), queueMs: now - w.arrivedAt });
      }
    }
  }

  private answer(cls: TrafficClass, queueMs: number, now: number): void {
    this.waits.push({ at: now, cls, queueMs });
    for (const l of [...this.answerListeners]) l({ upstream: UPSTREAM, class: cls, queueMs });
    const load = this.spec.load[cls];
    const next = this.clientsNext[cls];
    const free = next.indexOf(Infinity);
    if (free >= 0) next[free] = now + (load?.thinkS ? this.exp(load.thinkS) : 0);
  }

  private snapshot(): ProxyStats {
    const classes = CLASSES.map((c) => ({ class: c, inFlight: this.inFlight(c), queued: this.queues[c].length, waitP50Ms: null, waitP95Ms: null, ttftP50Ms: null, ttftP95Ms: null, requestsPerS: 0, tokensOutPerS: 0, completed: 0, rejected: 0 }));
    const up = upstreamFigures(UPSTREAM, 'Qwen', { slots: this.spec.slots, caps: { ...this.caps }, classes, inFlight: this.running.length, queued: classes.reduce((a, c) => a + c.queued, 0) });
    return { at: this.clock.now(), url: null, answered: this.waits.length, inFlight: up.inFlight, queued: up.queued, upstreams: [up] };
  }

  private fleetState(): AdvisorFleetState {
    const n = this.running.length;
    const jitter = () => (this.random() - 0.5) * 4;
    const util = Math.max(0, Math.min(100, n * this.spec.utilPerSeqPct + (n > 0 ? jitter() : 0)));
    const kv = Math.max(0, Math.min(100, n * this.spec.kvPerSeqPct));
    return {
      hosts: [
        {
          label: 'gpu-a',
          session: { state: 'connected' },
          gpus: { readings: [{ index: 0, utilizationPct: Math.round(util), memoryUsedMiB: 70_000, memoryTotalMiB: 81_559 }], stale: null },
          gpuProcesses: null,
          services: [{ id: 'qwen', figures: { kvCachePct: Math.round(kv * 10) / 10 }, stale: null, reading: { slotsReported: null } }],
        },
      ],
    };
  }
}
