// The bench capability as the console runs it: saved scenarios and runs, a
// run's target resolved against the fleet (a tunnel) or the proxy (a model at
// a class that never takes interactive slots), evaluations of runs and of
// proxy traffic, GuideLLM imports and baselines, each operator change audited.
// A run through the proxy gets its own token of the scenario's class, revoked
// when the run ends, so the proxy's accounting shows it under that client.
import { randomBytes } from 'node:crypto';
import type { BaselineLevel, BenchRun, BenchScenario, Evaluation } from '../../../src-preload/contract/index.js';
import { AppError, DisposableStore, operatorActor, toAppError, type Clock, type Disposable, type Logger } from '../base/index.js';
import type { EventSink } from '../channel.js';
import type { ConfigService } from '../config/index.js';
import { evaluate, evaluateColumns, type EvalSample } from '../eval/index.js';
import { serviceStateOf, type FleetService } from '../fleet/index.js';
import { requestWindows, type RequestWindows } from '../proxy/index.js';
import type { Store } from '../store/index.js';
import { UpstreamClient, upstreamKey } from '../upstream/index.js';
import { BenchErrorCode } from './errors.js';
import { importGuidellm } from './guidellm.js';
import { NO_PEAKS, peakReadingOf } from './peaks.js';
import { BenchRepository } from './repository.js';
import { BenchService, type Prepared, type ResolvedTarget } from './service.js';

/** What bench needs from the proxy (ProxyService satisfies it). */
export interface BenchProxyPort {
  url(): string | null;
  createToken(name: string, maxClass: 'interactive' | 'system' | 'batch', caller: string): { token: string };
  revokeToken(name: string, caller: string): unknown;
}

/** Where a run's steady figure becomes the model's baseline (TelemetryService satisfies it). */
export interface BaselineSink {
  setBaseline(model: string, tokPerS: number, source: 'manual' | 'benchmark', actor: string, opts?: { levels?: readonly BaselineLevel[] }): unknown;
}

/** Per-sequence speed by concurrency from a run's complete levels; the stability loop wins over a sweep level at the same concurrency. */
export function perSequenceLevels(run: Pick<BenchRun, 'levels' | 'scenario'>): BaselineLevel[] {
  const byConcurrency = new Map<number, BaselineLevel>();
  const closed = (run.scenario?.mode ?? 'closed') === 'closed';
  for (const l of run.levels) {
    if (l.partial || l.outputTokPerS === null || !(l.outputTokPerS > 0)) continue;
    const concurrency = l.phase === 'stability' ? (run.scenario?.stability?.concurrency ?? (closed ? l.level : null)) : closed ? l.level : null;
    if (concurrency === null || !(concurrency >= 1)) continue;
    if (l.phase !== 'stability' && byConcurrency.has(concurrency)) continue;
    byConcurrency.set(concurrency, { concurrency, perSeqTokPerS: l.outputTokPerS / concurrency });
  }
  return [...byConcurrency.values()].sort((a, b) => a.concurrency - b.concurrency);
}

export interface ConsoleBenchDeps {
  store: Store;
  config: ConfigService;
  fleet: FleetService;
  proxy: BenchProxyPort | null;
  baselines: BaselineSink;
  emit: EventSink;
  clock: Clock;
  logger: Logger;
}

export class ConsoleBench implements Disposable {
  readonly repo: BenchRepository;
  readonly service: BenchService;
  private readonly disposables = new DisposableStore();
  /** The proxy's request log, read through the proxy's own queries (its table). */
  private readonly requests: RequestWindows;

  constructor(private readonly deps: ConsoleBenchDeps) {
    const { store, clock, fleet } = deps;
    this.repo = new BenchRepository(store.db, clock);
    this.repo.markInterrupted();
    this.service = this.disposables.add(
      new BenchService({
        repo: this.repo,
        clock,
        logger: deps.logger,
        emitProgress: (p) => deps.emit('bench.progress', p),
        audit: (type, target, payload) => store.audit.append({ type, actor: 'system', target, payload }),
        watchPeaks: (host, serviceId, onReading) =>
          fleet.onDidRound((state) => {
            const h = state.hosts.find((x) => x.label === host);
            const reading = h ? peakReadingOf(h, serviceId) : null;
            if (reading) onReading(reading);
          }),
      }),
    );
    this.requests = requestWindows(store.db);
  }

  /** Checks a scenario (target, prompts, JSON Schema, pre-flight) without running it. */
  prepare(scenario: BenchScenario, caller: string): Promise<Prepared> {
    return this.service.prepare(scenario, (s) => this.resolve(s, caller));
  }

  /** Prepares and starts a run in the background; its id at once. */
  async start(scenario: BenchScenario, caller: string): Promise<string> {
    const prepared = await this.prepare(scenario, caller);
    return this.service.start(prepared, caller === 'cli' ? 'cli' : 'console');
  }

  evaluateRun(runId: string): Evaluation {
    const run = this.repo.getRun(runId);
    const reqs = this.repo.requests(runId).filter((r) => r.phase !== 'warmup' && r.errorCode !== 'cancelled');
    const samples: EvalSample[] = reqs.map((r) => ({
      startMs: run.startedAt + r.startMs,
      totalMs: r.totalMs,
      queueMs: r.queueMs,
      ttftMs: r.ttftMs,
      failed: r.errorCode !== null,
      completionTokens: r.completionTokens,
      jsonOk: r.jsonOk,
      schemaOk: r.schemaOk,
      host: run.host,
    }));
    const first = samples.length ? Math.min(...samples.map((s) => s.startMs)) : run.startedAt;
    const last = samples.length ? Math.max(...samples.map((s) => s.startMs + (s.totalMs ?? 0))) : (run.finishedAt ?? run.startedAt);
    return evaluate({ source: `run ${run.name} (${run.id})`, fromMs: first, toMs: last, samples, priceOf: (h) => this.priceOf(h) });
  }

  /** The evaluation figures of the proxy's own traffic in a window (its request rows). */
  evaluateWindow(fromMs: number, toMs: number, model?: string): Evaluation {
    const columns = this.requests.completionColumns(fromMs, toMs, model);
    return evaluateColumns({ source: `proxy traffic${model ? ` for ${model}` : ''}`, fromMs, toMs, columns, priceOf: (h) => this.priceOf(h) });
  }

  importGuidellm(text: string, name: string | undefined, caller: string): { runId: string; levels: number; notes: string[] } {
    const { clock, store } = this.deps;
    const imported = importGuidellm(text);
    // Time for order, random bits so two imports in one millisecond do not collide.
    const id = `gl${Math.floor(clock.now()).toString(36)}${randomBytes(3).toString('hex')}`;
    const run: BenchRun = {
      id,
      name: name ?? `GuideLLM import${imported.model ? ` (${imported.model})` : ''}`,
      state: 'imported',
      source: 'guidellm',
      scenario: null,
      upstream: null,
      host: null,
      model: imported.model,
      slots: null,
      startedAt: clock.now(),
      finishedAt: clock.now(),
      levels: imported.levels,
      peaks: { ...NO_PEAKS },
      baseline: false,
      error: null,
      note: imported.notes.join('; '),
    };
    this.repo.insertRun(run);
    store.audit.append({ type: 'bench.run.imported', actor: operatorActor(caller), target: id, payload: { levels: run.levels.length } });
    return { runId: id, levels: run.levels.length, notes: imported.notes };
  }

  /** Deletes a run, a damaged one too (it cannot be read, so what it was is audited from its row's id and the damage). */
  deleteRun(runId: string, caller: string): void {
    const read = this.repo.readRun(runId);
    this.repo.deleteRun(runId);
    const payload = read.ok ? { runId, name: read.run.name } : { runId, damaged: read.damaged.problem };
    this.deps.store.audit.append({ type: 'bench.run.deleted', actor: operatorActor(caller), target: runId, payload });
  }

  /**
   * Marks the run as the baseline of its model (and host). The degradation rule compares
   * per-sequence speed at a comparable load, so every complete closed-loop level gives one
   * (its output tok/s ÷ its concurrency), the stability loop its own; the aggregate shown is
   * the stability loop's, else the best level's. An open-loop run's levels are arrival rates,
   * not loads: only its stability loop (a concurrency) counts.
   */
  setBaseline(runId: string, caller: string): { runId: string; model: string; host: string | null; tokPerS: number; level: number } {
    const run = this.repo.getRun(runId);
    const complete = run.levels.filter((l) => !l.partial && l.outputTokPerS !== null && l.outputTokPerS > 0);
    const steady = complete.find((l) => l.phase === 'stability');
    const best = [...complete].sort((x, y) => y.outputTokPerS! - x.outputTokPerS!)[0];
    const pick = steady ?? best;
    const levels = perSequenceLevels(run);
    if (!pick || !run.model || levels.length === 0) {
      throw new AppError(BenchErrorCode.NO_BASELINE_FIGURE, 'this run has no complete level with a throughput figure at a known concurrency, or no known model');
    }
    this.repo.markBaseline(run);
    this.deps.baselines.setBaseline(run.model, pick.outputTokPerS!, 'benchmark', operatorActor(caller), { levels });
    return { runId, model: run.model, host: run.host, tokPerS: pick.outputTokPerS!, level: pick.level };
  }

  dispose(): Promise<void> {
    return this.disposables.dispose();
  }

  private priceOf(host: string): number | null {
    return this.deps.config.current.hosts.find((h) => h.label === host)?.pricePerHourUsd ?? null;
  }

  private findService(model: string) {
    const m = model.toLowerCase();
    for (const h of this.deps.config.current.hosts) {
      for (const s of h.services) {
        if (s.model.toLowerCase() === m || s.aliases.some((a) => a.toLowerCase() === m)) return { host: h, service: s };
      }
    }
    return null;
  }

  private refuseIfAsleep(host: string, serviceId: string): void {
    const svc = serviceStateOf(this.deps.fleet.state(), host, serviceId)?.service;
    if (svc && (svc.sleepLevel === 1 || svc.sleepLevel === 2)) {
      throw new AppError(BenchErrorCode.TARGET_ASLEEP, `${upstreamKey(host, serviceId)} is asleep (${svc.sleep}); wake it (with approval) before benchmarking`, {
        details: { upstream: upstreamKey(host, serviceId), sleep: svc.sleep },
      });
    }
  }

  private async resolve(s: BenchScenario, caller: string): Promise<ResolvedTarget> {
    const { config, fleet } = this.deps;
    const t = s.target;
    const noop = () => undefined;
    if (t.kind === 'url') {
      // A URL gets no credential of the console's: a token reaches only the console's own proxy, and
      // only one minted for this run (a caller-chosen loopback listener must not receive one).
      const headers: Record<string, string> = {};
      if (t.class) headers['x-priority'] = t.class;
      let revoke: () => void = noop;
      if (this.isOwnProxy(t.baseUrl)) {
        const minted = this.mintRunToken(t.class ?? 'batch', caller);
        headers.authorization = `Bearer ${minted.token}`;
        revoke = minted.release;
      }
      const own = runClient(t.baseUrl);
      const release = () => {
        revoke();
        own.release();
      };
      return { endpoint: { client: own.client, path: own.path, headers, model: t.model }, upstream: null, host: null, serviceId: null, model: t.model, slots: null, release };
    }
    if (t.kind === 'tunnel') {
      const host = config.current.hosts.find((h) => h.label === t.host);
      const svc = host?.services.find((x) => x.id === t.serviceId);
      if (!host || !svc) throw new AppError(BenchErrorCode.TARGET_UNKNOWN, `no service ${t.host}/${t.serviceId} in the inventory`, { details: { target: t } });
      this.refuseIfAsleep(host.label, svc.id);
      const key = upstreamKey(host.label, svc.id);
      let client: UpstreamClient;
      try {
        // The service's own client: the run shares its keep-alive connections with the proxy and telemetry.
        client = fleet.upstream(key);
      } catch (err) {
        throw new AppError(BenchErrorCode.TARGET_UNREACHABLE, `the tunnel to ${key} is not up: ${toAppError(err).message}`, { retryable: true, cause: err });
      }
      const model = t.model ?? svc.model;
      return { endpoint: { client, path: '/v1/chat/completions', headers: {}, model }, upstream: key, host: host.label, serviceId: svc.id, model: svc.model, slots: svc.slots, release: noop };
    }
    const found = this.findService(t.model);
    if (!found) throw new AppError(BenchErrorCode.TARGET_UNKNOWN, `no service serves the model "${t.model}"`, { details: { model: t.model } });
    this.refuseIfAsleep(found.host.label, found.service.id);
    const proxy = this.deps.proxy;
    const base = proxy?.url() ?? null;
    if (!proxy || !base) throw new AppError(BenchErrorCode.TARGET_UNREACHABLE, 'the proxy is not running');
    const minted = this.mintRunToken(t.class, caller);
    const key = upstreamKey(found.host.label, found.service.id);
    const slots = config.current.proxy.upstreams?.[key]?.slots ?? found.service.slots;
    const own = runClient(base);
    return {
      endpoint: { client: own.client, path: own.path, headers: { authorization: `Bearer ${minted.token}`, 'x-priority': t.class }, model: t.model },
      upstream: key,
      host: found.host.label,
      serviceId: found.service.id,
      model: found.service.model,
      slots,
      release: () => {
        minted.release();
        own.release();
      },
    };
  }

  /** True when `baseUrl` is the console's own proxy (same origin), the only URL a run token may go to. */
  private isOwnProxy(baseUrl: string): boolean {
    const own = this.deps.proxy?.url() ?? null;
    if (own === null) return false;
    try {
      return new URL(baseUrl).origin === new URL(own).origin;
    } catch {
      return false;
    }
  }

  /** A proxy token for one run, revoked when the run ends. */
  private mintRunToken(cls: 'system' | 'batch', caller: string): { token: string; release: () => void } {
    const { clock, logger } = this.deps;
    const proxy = this.deps.proxy!;
    const tokenName = `bench-${Math.floor(clock.now()).toString(36)}`;
    const { token } = proxy.createToken(tokenName, cls, caller);
    return {
      token,
      release: () => {
        try {
          proxy.revokeToken(tokenName, caller);
        } catch (err) {
          logger.warn('could not revoke the run token', { error: toAppError(err).message });
        }
      },
    };
  }
}

/**
 * A client of its own for a run's URL (a local server, or the console's own proxy), closed when the run
 * ends, and the chat path on it. The contract takes loopback URLs only (LoopbackHttpUrl), so it is on
 * this machine before it gets here.
 */
function runClient(base: string): { client: UpstreamClient; path: string; release: () => void } {
  const b = base.replace(/\/+$/, '');
  const client = UpstreamClient.forUrl(b, { onPrem: null, purpose: 'probe' });
  return {
    client,
    path: /\/v1$/.test(b) ? '/chat/completions' : '/v1/chat/completions',
    release: () => void client.destroy(),
  };
}
