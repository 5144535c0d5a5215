// Runs benchmarks for the console: checks a scenario before anything is sent
// (prompts, JSON Schema, target awake and reachable), records the run as
// `running`, drives the runner, samples GPU/KV peaks while it runs, emits
// throttled progress, and stores the outcome — completed, or cancelled/failed
// with whatever was measured, marked partial.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { BenchProgress, BenchRun, BenchScenario, Peaks } from '../../../src-preload/contract/index.js';
import { AppError, DisposableStore, fireAndForget, toAppError, type Clock, type Disposable, type Logger } from '../base/index.js';
import type { AuditEventType } from '../store/index.js';
import { BenchErrorCode } from './errors.js';
import { NO_PEAKS, raisePeaks, type PeakReading } from './peaks.js';
import { loadPrompts, type BenchPrompt } from './prompts.js';
import type { BenchRepository } from './repository.js';
import { endpointText, plannedRequests, runBenchmark, type Endpoint } from './runner.js';
import { compileSchema, type CompiledSchema } from './schema-check.js';

export interface ResolvedTarget {
  endpoint: Endpoint;
  /** `label/serviceId` when the target is a console service. */
  upstream: string | null;
  host: string | null;
  serviceId: string | null;
  model: string;
  slots: number | null;
  /** Undo what resolving did (a per-run proxy token is revoked, a client made for the run closed). */
  release(): void;
}

export interface BenchServiceOptions {
  repo: BenchRepository;
  clock: Clock;
  logger: Logger;
  /** Monotonic ms for request timing (default performance.now). */
  now?: () => number;
  emitProgress(p: BenchProgress): void;
  /** Subscribe to telemetry readings of a host/service while a run lasts. */
  watchPeaks?(host: string, serviceId: string | null, onReading: (r: PeakReading) => void): Disposable;
  audit(type: AuditEventType, target: string | null, payload: Record<string, unknown>): void;
  /** Deadline of the reachability check before a run (ms). */
  preflightTimeoutMs?: number;
}

export interface Prepared {
  scenario: BenchScenario;
  prompts: BenchPrompt[];
  schema: CompiledSchema | null;
  target: ResolvedTarget;
}

const PROGRESS_EVERY_MS = 250;

export class BenchService implements Disposable {
  private readonly active = new Map<string, { controller: AbortController; finished: Promise<void> }>();
  private readonly disposables = new DisposableStore();
  private readonly now: () => number;

  constructor(private readonly o: BenchServiceOptions) {
    this.now = o.now ?? (() => performance.now());
  }

  /** Everything that can be known wrong before the first request; throws coded errors. */
  async prepare(scenario: BenchScenario, resolve: (s: BenchScenario) => Promise<ResolvedTarget>): Promise<Prepared> {
    const schema = scenario.responseFormat ? compileSchema(scenario.responseFormat.schema) : null;
    // The target first: an unknown or sleeping one is refused before any prompt is built.
    const target = await resolve(scenario);
    try {
      const prompts = await loadPrompts(scenario.prompts, plannedRequests(scenario) ?? 64);
      await this.preflight(target);
      return { scenario, prompts, schema, target };
    } catch (err) {
      target.release();
      throw err;
    }
  }

  /** Starts a prepared run in the background; returns its id at once. */
  start(p: Prepared, source: BenchRun['source']): string {
    const id = randomUUID().replaceAll('-', '').slice(0, 16);
    const run: BenchRun = {
      id,
      name: p.scenario.name,
      state: 'running',
      source,
      scenario: p.scenario,
      upstream: p.target.upstream,
      host: p.target.host,
      model: p.target.model,
      slots: p.target.slots,
      startedAt: this.o.clock.now(),
      finishedAt: null,
      levels: [],
      peaks: { ...NO_PEAKS },
      baseline: false,
      error: null,
      note: null,
    };
    this.o.repo.insertRun(run);
    this.o.audit('bench.run.started', p.target.upstream ?? endpointText(p.target.endpoint), { runId: id, name: run.name, levels: p.scenario.levels, mode: p.scenario.mode });
    const controller = new AbortController();
    const finished = this.execute(run, p, controller);
    this.active.set(id, { controller, finished });
    fireAndForget(finished, this.o.logger, `bench run ${id}`);
    return id;
  }

  cancel(runId: string): boolean {
    const a = this.active.get(runId);
    if (!a) {
      this.o.repo.getRun(runId); // RUN_NOT_FOUND when unknown
      return false;
    }
    a.controller.abort();
    return true;
  }

  /** Resolves when the run is stored (tests, CLI). */
  async whenFinished(runId: string): Promise<BenchRun> {
    await this.active.get(runId)?.finished;
    return this.o.repo.getRun(runId);
  }

  isRunning(runId: string): boolean {
    return this.active.has(runId);
  }

  private async execute(run: BenchRun, p: Prepared, controller: AbortController): Promise<void> {
    const peaks: Peaks = { ...run.peaks };
    const watch = p.target.host && this.o.watchPeaks ? this.o.watchPeaks(p.target.host, p.target.serviceId, (r) => raisePeaks(peaks, r)) : null;
    let lastEmit = -Infinity;
    const emit = (state: BenchRun['state'], pr: Omit<BenchProgress, 'runId' | 'name' | 'state' | 'message'>, message: string | null, force: boolean) => {
      const t = this.now();
      if (!force && t - lastEmit < PROGRESS_EVERY_MS) return;
      lastEmit = t;
      this.o.emitProgress({ runId: run.id, name: run.name, state, message, ...pr });
    };
    let lastProgress: Omit<BenchProgress, 'runId' | 'name' | 'state' | 'message'> = {
      phase: 'warmup',
      level: null,
      levelIndex: 0,
      levelCount: p.scenario.levels.length + (p.scenario.stability ? 1 : 0),
      done: 0,
      total: plannedRequests(p.scenario) ?? 0,
      errors: 0,
      elapsedMs: 0,
      etaMs: null,
    };
    emit('running', lastProgress, null, true);
    let final: BenchRun = run;
    try {
      const result = await runBenchmark({
        scenario: p.scenario,
        prompts: p.prompts,
        endpoint: p.target.endpoint,
        schema: p.schema,
        signal: controller.signal,
        now: this.now,
        onProgress: (pr) => {
          lastProgress = pr;
          emit('running', pr, null, false);
        },
      });
      final = {
        ...run,
        state: result.cancelled ? 'cancelled' : 'completed',
        finishedAt: this.o.clock.now(),
        levels: result.levels,
        peaks,
        note: result.cancelled ? 'cancelled by the operator: partial run, the last level is incomplete' : null,
      };
      this.o.repo.finishRun(final, result.requests);
    } catch (err) {
      const e = toAppError(err);
      final = { ...run, state: 'failed', finishedAt: this.o.clock.now(), peaks, error: { code: e.code, message: e.message } };
      this.o.repo.finishRun(final, []);
    } finally {
      void watch?.dispose();
      p.target.release();
      this.active.delete(run.id);
    }
    // by now `final` is completed, cancelled or failed (it starts as `run`, still running)
    this.o.audit(`bench.run.${final.state as Exclude<BenchRun['state'], 'running'>}`, run.upstream ?? endpointText(p.target.endpoint), { runId: run.id, levels: final.levels.length });
    emit(final.state, lastProgress, final.error?.message ?? final.note, true);
  }

  /** GET /models on the run's own client (keep-alive, as clients of a model server are; the run reuses the connection). */
  private async preflight(target: ResolvedTarget): Promise<void> {
    const { client, headers } = target.endpoint;
    const path = target.endpoint.path.replace(/\/chat\/completions$/, '/models');
    const url = endpointText({ client, path });
    let res: { status: number; text: string };
    try {
      res = await client.request({ path, headers, deadlineMs: this.o.preflightTimeoutMs ?? 5_000, maxBodyBytes: 1024 * 1024, overflow: 'truncate' });
    } catch (err) {
      const e = toAppError(err);
      throw new AppError(BenchErrorCode.TARGET_UNREACHABLE, `${url} is not reachable: ${e.message}`, { retryable: true, details: { url }, cause: err });
    }
    if (res.status >= 400) {
      const sleeping = /model_sleeping|asleep/i.test(res.text);
      throw new AppError(sleeping ? BenchErrorCode.TARGET_ASLEEP : BenchErrorCode.TARGET_UNREACHABLE, `${url} answered ${res.status}${openAiErrorMessage(res.text)}`, {
        details: { url, status: res.status },
      });
    }
  }

  async dispose(): Promise<void> {
    for (const a of this.active.values()) a.controller.abort();
    await Promise.allSettled([...this.active.values()].map((a) => a.finished));
    await this.disposables.dispose();
  }
}

/**
 * The `error.message` of an OpenAI-shaped error body, for the operator; any other body is not echoed
 * (the target may be any local HTTP service, and its pages are not ours to repeat).
 */
function openAiErrorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown; code?: unknown } | string };
    const err = body.error;
    const message = typeof err === 'string' ? err : typeof err?.message === 'string' ? err.message : null;
    // eslint-disable-next-line no-control-regex -- control characters are what is removed
    return message ? `: ${message.replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, 200)}` : '';
  } catch {
    return '';
  }
}
