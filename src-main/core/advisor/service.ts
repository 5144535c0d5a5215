// The advisor as the console runs it: it listens to the proxy's answers and
// samples each fleet round (slot use, caps, GPU and KV-cache figures), judges
// every upstream over its window, and keeps the recommendations it issued.
// apply() is the one way advice becomes a caps change: the proxy's own audited
// setCaps (as by hand) plus an advisor.applied row. Nothing here calls it.
import { createHash } from 'node:crypto';
import type { AdvisorList, PoolCaps, ProxyStats, Recommendation, TrafficClass, UpstreamAdvice, UpstreamFigures } from '../../../src-preload/contract/index.js';
import { AppError, DisposableStore, operatorActor, toAppError, type Clock, type Disposable, type Logger } from '../base/index.js';
import type { EventSink } from '../channel.js';
import type { AuditLog, SettingsRepository } from '../store/index.js';
import { AdvisorErrorCode } from './errors.js';
import { Rejections } from './rejections.js';
import { DEFAULT_ADVISOR_SETTINGS, judge, type AdvisorSettings } from './rules.js';
import { AdvisorWindow, type RoundSample, type WindowFigures } from './window.js';

/** What the advisor needs of the proxy (ProxyService satisfies it). */
export interface AdvisorProxy {
  snapshot(): ProxyStats;
  setCaps(upstream: string, caps: PoolCaps, caller: string): PoolCaps;
  onDidAnswer(listener: (record: { upstream: string | null; class: TrafficClass | null; queueMs: number }) => void): Disposable;
}

/** What it reads of one fleet state (FleetState satisfies it). */
export interface AdvisorFleetState {
  readonly hosts: readonly {
    readonly label: string;
    readonly session: { readonly state: string };
    readonly gpus: {
      readonly readings: readonly { readonly index: number; readonly utilizationPct: number | null; readonly memoryUsedMiB: number | null; readonly memoryTotalMiB: number | null }[];
      readonly stale: unknown;
    };
    readonly gpuProcesses: { readonly processes: readonly { readonly gpuIndex: number; readonly serviceId: string | null }[] } | null;
    readonly services: readonly {
      readonly id: string;
      readonly figures: { readonly kvCachePct: number | null } | null;
      readonly stale: unknown;
      readonly reading: { readonly slotsReported: number | null } | null;
    }[];
  }[];
}

export interface AdvisorFleet {
  /** The fleet's state at the end of each poll round. */
  onDidRound(listener: (state: AdvisorFleetState) => void): Disposable;
}

export interface AdvisorServiceDeps {
  proxy: AdvisorProxy;
  fleet: AdvisorFleet;
  settings: SettingsRepository;
  audit: Pick<AuditLog, 'append'>;
  /** Where `advisor.changed` goes; null: nowhere (tests). */
  emit: EventSink | null;
  clock: Clock;
  logger: Logger;
  /** Overrides of the rules' thresholds and window (tests). */
  options?: Partial<AdvisorSettings>;
}

/** Recommendations issued and still answerable by id (the newest computations'). */
const MAX_ISSUED = 256;

export class AdvisorService implements Disposable {
  private readonly disposables = new DisposableStore();
  readonly settings: AdvisorSettings;
  private readonly window: AdvisorWindow;
  private readonly rejections: Rejections;
  private readonly issued = new Map<string, Recommendation>();
  private lastEvaluatedAt = -Infinity;
  private lastDigest = '';

  constructor(private readonly deps: AdvisorServiceDeps) {
    this.settings = { ...DEFAULT_ADVISOR_SETTINGS, ...deps.options };
    this.window = new AdvisorWindow(() => this.settings.windowMs);
    this.rejections = new Rejections(deps.settings, deps.logger);
    this.disposables.add(
      deps.proxy.onDidAnswer((r) => {
        if (r.upstream !== null && r.class !== null) this.window.recordAnswer(r.upstream, r.class, r.queueMs, deps.clock.now());
      }),
    );
    this.disposables.add(deps.fleet.onDidRound((state) => this.onRound(state)));
  }

  /** Every upstream judged now, with the recommendations that are not rejected. */
  list(): AdvisorList {
    const now = this.deps.clock.now();
    this.window.prune(now);
    const stats = this.deps.proxy.snapshot();
    const recommendations: Recommendation[] = [];
    const upstreams: UpstreamAdvice[] = [];
    for (const u of stats.upstreams) {
      const f = this.window.figuresOf(u.upstream, now);
      if (f === null) {
        upstreams.push({ upstream: u.upstream, verdict: 'insufficient_traffic', because: ['no fleet round of this upstream in the window yet'] });
        continue;
      }
      if (f.slots !== u.slots || !sameCaps(f.caps, u.caps)) {
        upstreams.push({ upstream: u.upstream, verdict: 'insufficient_traffic', because: ['the caps just changed: the advisor judges them from the next fleet round on'] });
        continue;
      }
      const advice = this.adviceFor(u, f, now);
      upstreams.push(advice.upstream);
      if (advice.recommendation) recommendations.push(advice.recommendation);
    }
    return { recommendations, upstreams, windowMs: this.settings.windowMs, at: now };
  }

  /**
   * Turns a recommendation into the caps change it proposes, through the proxy's setCaps (audited as a
   * change by hand, with the caller) and an advisor.applied row. Refused ADVISOR_STALE when the caps or
   * slots are no longer those it was computed for.
   */
  apply(id: string, caller: string): { upstream: string; caps: PoolCaps } {
    const rec = this.issuedOrThrow(id);
    const now = this.deps.proxy.snapshot().upstreams.find((u) => u.upstream === rec.upstream);
    if (!now || now.slots !== rec.slots || !sameCaps(now.caps, rec.current)) {
      this.issued.delete(id);
      this.publish();
      throw new AppError(AdvisorErrorCode.STALE, `the caps of ${rec.upstream} changed since this advice was computed; it was dropped — look at the new advice`, {
        details: { id, upstream: rec.upstream, computedFor: rec.current, current: now?.caps ?? null },
      });
    }
    const after = this.deps.proxy.setCaps(rec.upstream, rec.proposed, caller);
    this.deps.audit.append({
      type: 'advisor.applied',
      actor: operatorActor(caller),
      target: rec.upstream,
      payload: { id, kind: rec.kind, title: rec.title, before: rec.current, after, because: rec.because, figures: rec.figures, windowMs: rec.windowMs, computedAt: rec.at },
    });
    this.issued.delete(id);
    this.publish();
    return { upstream: rec.upstream, caps: after };
  }

  /** Rejects a recommendation: audited, and not shown again until its figures change materially. */
  reject(id: string, reason: string | undefined, caller: string): { id: string } {
    const rec = this.issuedOrThrow(id);
    const actor = operatorActor(caller);
    const deciding = decidingOf(rec);
    const now = this.deps.clock.now();
    this.rejections.add({ id, upstream: rec.upstream, kind: rec.kind, current: rec.current, proposed: rec.proposed, deciding, at: now, actor, ...(reason ? { reason } : {}) }, now);
    this.deps.audit.append({
      type: 'advisor.rejected',
      actor,
      target: rec.upstream,
      payload: { id, kind: rec.kind, title: rec.title, current: rec.current, proposed: rec.proposed, because: rec.because, ...(reason ? { reason } : {}) },
    });
    this.issued.delete(id);
    this.publish();
    return { id };
  }

  dispose(): Promise<void> {
    return this.disposables.dispose();
  }

  private issuedOrThrow(id: string): Recommendation {
    const rec = this.issued.get(id);
    if (!rec) {
      throw new AppError(AdvisorErrorCode.UNKNOWN_RECOMMENDATION, `no recommendation ${id}: it was applied, rejected or replaced by newer advice — list the advice again`, {
        details: { id },
      });
    }
    return rec;
  }

  private adviceFor(u: UpstreamFigures, f: WindowFigures, now: number): { upstream: UpstreamAdvice; recommendation: Recommendation | null } {
    const j = judge(f, this.settings, u.state === 'ready');
    if (!j.proposal) return { upstream: { upstream: u.upstream, verdict: j.verdict, because: j.because }, recommendation: null };
    const { kind, title, proposed, deciding } = j.proposal;
    const rec: Recommendation = {
      id: recommendationId(u.upstream, kind, f.caps, proposed, deciding),
      upstream: u.upstream,
      kind,
      title,
      because: j.because,
      figures: contractFigures(f),
      current: f.caps,
      proposed,
      slots: f.slots,
      windowMs: this.settings.windowMs,
      at: now,
    };
    const held = this.rejections.holding(rec, deciding);
    if (held) {
      const why = held.reason ? ` (“${held.reason}”)` : '';
      return {
        upstream: { upstream: u.upstream, verdict: 'rejected', because: [`“${title}” was rejected by ${held.actor}${why}; it comes back when its figures move 20 % or the advice changes`, ...j.because] },
        recommendation: null,
      };
    }
    this.remember(rec);
    return { upstream: { upstream: u.upstream, verdict: 'recommendation', because: j.because }, recommendation: rec };
  }

  private remember(rec: Recommendation): void {
    this.issued.delete(rec.id);
    this.issued.set(rec.id, rec);
    while (this.issued.size > MAX_ISSUED) this.issued.delete(this.issued.keys().next().value!);
  }

  private onRound(state: AdvisorFleetState): void {
    const now = this.deps.clock.now();
    let stats: ProxyStats;
    try {
      stats = this.deps.proxy.snapshot();
    } catch (err) {
      this.deps.logger.warn('advisor could not read the proxy figures', { error: toAppError(err).message });
      return;
    }
    for (const u of stats.upstreams) this.window.recordRound(u.upstream, roundSampleOf(u, state, now));
    if (now - this.lastEvaluatedAt >= this.settings.evaluateEveryMs) this.publish();
  }

  /** Judges again and pushes `advisor.changed` when what an operator sees changed. */
  private publish(): void {
    this.lastEvaluatedAt = this.deps.clock.now();
    const list = this.list();
    const digest = JSON.stringify([list.recommendations.map((r) => r.id), list.upstreams.map((u) => [u.upstream, u.verdict])]);
    if (digest === this.lastDigest) return;
    this.lastDigest = digest;
    this.deps.emit?.('advisor.changed', list);
  }
}

/** One round of one upstream: the proxy's slot use now, and the GPU / KV-cache figures the fleet read. */
export function roundSampleOf(u: UpstreamFigures, state: AdvisorFleetState, at: number): RoundSample {
  const per = (key: 'inFlight' | 'queued') => {
    const out = { interactive: 0, system: 0, batch: 0 };
    for (const c of u.classes) out[c.class] = c[key];
    return out;
  };
  const host = state.hosts.find((h) => h.label === u.label);
  const service = host?.services.find((s) => s.id === u.serviceId);
  let gpuUtilPct: number | null = null;
  let gpuMemoryPct: number | null = null;
  if (host && host.session.state === 'connected' && host.gpus.stale === null) {
    // The GPUs the service's processes run on, where the process list says; else every GPU of the host.
    const mine = new Set((host.gpuProcesses?.processes ?? []).filter((p) => p.serviceId === u.serviceId).map((p) => p.gpuIndex));
    const gpus = host.gpus.readings.filter((g) => mine.size === 0 || mine.has(g.index));
    gpuUtilPct = maxKnown(gpus.map((g) => g.utilizationPct));
    gpuMemoryPct = maxKnown(gpus.map((g) => (g.memoryUsedMiB !== null && g.memoryTotalMiB ? (g.memoryUsedMiB / g.memoryTotalMiB) * 100 : null)));
  }
  const fresh = service && service.stale === null ? service : null;
  return {
    at,
    slots: u.slots,
    caps: { ...u.caps },
    inFlight: per('inFlight'),
    queued: per('queued'),
    gpuUtilPct,
    gpuMemoryPct,
    kvCachePct: fresh?.figures?.kvCachePct ?? null,
    serverSlots: service?.reading?.slotsReported ?? null,
  };
}

function maxKnown(xs: readonly (number | null)[]): number | null {
  const k = xs.filter((x): x is number => x !== null && Number.isFinite(x));
  return k.length === 0 ? null : Math.max(...k);
}

function contractFigures(f: WindowFigures): Recommendation['figures'] {
  const { samples, requests, waitP95Ms, batchQueuedPct, interactiveQueuedPct, idleReserveP50, gpuUtilP95Pct, gpuMemoryP95Pct, kvCacheP95Pct, slotLimit } = f;
  return { samples, requests, waitP95Ms, batchQueuedPct, interactiveQueuedPct, idleReserveP50, gpuUtilP95Pct, gpuMemoryP95Pct, kvCacheP95Pct, slotLimit };
}

/** The figure a kind of advice turns on: the queue wait of the class it helps. */
function decidingOf(rec: Recommendation): number {
  return (rec.kind === 'raise_reserve' ? rec.figures.waitP95Ms.interactive : rec.figures.waitP95Ms.batch) ?? 0;
}

/** The deciding figure's bucket: steps of 20 %, so the id holds while the figures stay alike. */
function bucketOf(x: number): number {
  return Math.floor(Math.log(Math.max(1, x)) / Math.log(1.2));
}

export function recommendationId(upstream: string, kind: string, current: PoolCaps, proposed: PoolCaps, deciding: number): string {
  const key = JSON.stringify([upstream, kind, capsKey(current), capsKey(proposed), bucketOf(deciding)]);
  return `adv_${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
}

const capsKey = (c: PoolCaps): number[] => [c.reservedInteractive, c.interactive, c.system, c.batch];
const sameCaps = (a: PoolCaps, b: PoolCaps): boolean => capsKey(a).join() === capsKey(b).join();
