// One simulated vLLM server process: a real HTTP listener on 127.0.0.1:0 (its
// port is private; clients come through the demo host's SSH forward), an
// Engine, the sleep/wake API, restart, and what the process puts on its GPUs.
//
// Simplifications (documented, deliberate):
// - a generation request to a sleeping engine gets 503 with the vLLM error
//   shape (real vLLM may hang or crash, vllm#15483) so clients see a clear state;
// - while down or loading the SSH forward refuses the channel (the real socket
//   is bound but not listening), and open connections are cut at restart.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError, Emitter, type Clock, type Disposable, type Logger } from '../core/base/index.js';
import { Engine, type EngineSnapshot } from './engine.js';
import { DemoErrorCode } from './errors.js';
import type { GpuShare, GpuShareSource } from './gpu-model.js';
import { badRequest, errorBody, HttpError, notFound, readJson, sendEmpty, sendError, sendJson } from './http-util.js';
import { serveDialect } from './engine-dialects.js';
import { renderMetrics, type SleepState } from './metrics-text.js';
import { handleChat, handleCompletion, handleEmbeddings, type ApiContext } from './openai-api.js';
import type { VllmServiceProfile } from './profiles.js';
import { createPrng, hashString } from './text-gen.js';
import { vllmModelList } from './vllm-shapes.js';

export const VLLM_VERSION = '0.11.2';

export type ProcessState = 'down' | 'loading' | 'up';
export type SleepTag = 'weights' | 'kv_cache';

export interface SimulatorState {
  process: ProcessState;
  sleepState: SleepState;
  isSleeping: boolean;
  weightsValid: boolean;
  pids: number[];
  /** Why the last start failed (the process stays down until the next restart); null when it did not. */
  failure: 'cuda-oom' | null;
}

/** A request the API server answered (uvicorn logs each one). */
export interface ServedRequest {
  method: string;
  path: string;
  status: number;
  clientPort: number;
}

export interface SimulatorOptions {
  profile: VllmServiceProfile;
  clock: Clock;
  logger: Logger;
  timeScale: number;
  decodeSpeedFactor: number;
  allocatePid(): number;
}

export interface RestartHandle {
  /** The old process is gone and the new one is loading (what `docker compose restart` waits for). */
  initiated: Promise<void>;
  /** The new process serves again. */
  ready: Promise<void>;
}

const PREFIX_CACHE_ENTRIES = 512;
/** Where in its load an OOM start dies: after the weights, while profiling memory for the KV cache. */
export const OOM_AT_LOAD_FRACTION = 0.55;

export class VllmSimulator implements GpuShareSource, Disposable {
  readonly serviceId: string;
  readonly profile: VllmServiceProfile;
  /** Fires whenever process or sleep state changes. */
  readonly onDidChangeState = new Emitter<SimulatorState>();
  readonly onDidServe = new Emitter<ServedRequest>();
  private readonly server: Server;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private current: Engine;
  private processState: ProcessState = 'up';
  private pids: number[] = [];
  private processStartMs: number;
  private loadingSinceMs = 0;
  private sleepLevel: 0 | 1 | 2 = 0;
  private readonly sleepingTags = new Set<SleepTag>();
  private pausing = false;
  private weightsOk = true;
  /** Bumped per process; lifecycle steps of an older process become no-ops. */
  private generation = 0;
  private opChain: Promise<void> = Promise.resolve();
  private readonly timers = new Set<Disposable>();
  private readonly prefixCache = new Map<number, true>();
  private idCounter = 0;
  private wakeCount = 0;
  private oomOnRestart = false;
  private failure: SimulatorState['failure'] = null;
  private disposed = false;

  private constructor(private readonly options: SimulatorOptions) {
    this.profile = options.profile;
    this.serviceId = options.profile.id;
    this.clock = options.clock;
    this.logger = options.logger.child(options.profile.id);
    this.current = this.newEngine();
    this.pids = this.newPids();
    this.processStartMs = this.clock.now();
    this.server = createServer((req, res) => this.route(req, res));
    this.server.keepAliveTimeout = 5_000;
  }

  static async start(options: SimulatorOptions): Promise<VllmSimulator> {
    const sim = new VllmSimulator(options);
    await new Promise<void>((resolve, reject) => {
      sim.server.once('error', reject);
      sim.server.listen(0, '127.0.0.1', () => {
        sim.server.off('error', reject);
        resolve();
      });
    });
    return sim;
  }

  /** The real (private) loopback port of the HTTP listener. */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get listening(): boolean {
    return this.server.listening;
  }

  /** Whether a new TCP connection would be accepted (false while down or loading). */
  get acceptsConnections(): boolean {
    return !this.disposed && this.processState === 'up';
  }

  get engine(): Engine {
    return this.current;
  }

  state(): SimulatorState {
    return {
      process: this.processState,
      sleepState: this.sleepState(),
      isSleeping: this.sleepingTags.size > 0,
      weightsValid: this.weightsOk,
      pids: this.processState === 'down' ? [] : [...this.pids],
      failure: this.failure,
    };
  }

  snapshot(): EngineSnapshot {
    return this.current.snapshot();
  }

  metricsText(): string {
    const { running, waiting, kvCacheUsage } = this.current.snapshot();
    const { servedModelName: modelName, blockSize, numGpuBlocks, gpuMemoryUtilization } = this.profile;
    const cacheConfig = { blockSize, numGpuBlocks, gpuMemoryUtilization };
    return renderMetrics({ modelName, metrics: this.current.metrics, running, waiting, kvCacheUsage, sleepState: this.sleepState(), cacheConfig });
  }

  // ---- lifecycle -------------------------------------------------------

  /** Fault knob: while on, every restart ends in CUDA OOM while the engine profiles memory, and the service stays down. */
  setOomOnRestart(on: boolean): void {
    this.oomOnRestart = on;
  }

  /** Kills the process and starts a new one: down, then loading, then up; counters start from zero. */
  restart(): RestartHandle {
    if (this.disposed) throw new AppError(DemoErrorCode.DISPOSED, 'the demo simulator is disposed');
    this.stopProcess('process stopped for restart');
    const gen = this.generation;
    let resolveInitiated!: () => void;
    let resolveReady!: () => void;
    const initiated = new Promise<void>((r) => (resolveInitiated = r));
    const ready = new Promise<void>((r) => (resolveReady = r));
    this.after(this.profile.restartDownSec, () => {
      if (gen !== this.generation) return;
      this.processState = 'loading';
      this.loadingSinceMs = this.clock.now();
      this.pids = this.newPids();
      this.failure = null;
      this.fireState();
      resolveInitiated();
      if (this.oomOnRestart) return this.after(this.profile.loadSec * OOM_AT_LOAD_FRACTION, () => this.dieOfOom(gen));
      this.after(this.profile.loadSec, () => {
        if (gen !== this.generation) return;
        this.current.dispose();
        this.current = this.newEngine();
        this.processStartMs = this.clock.now();
        this.processState = 'up';
        this.logger.info('process ready after restart');
        this.fireState();
        resolveReady();
      });
    });
    return { initiated, ready };
  }

  /** Fault knob: the server stops (killed, or `systemctl stop`): down, refusing, until the next restart. False when already down. */
  stop(): boolean {
    if (this.disposed || this.processState === 'down') return false;
    this.failure = null;
    this.stopProcess('process stopped');
    return true;
  }

  /** The process goes away: timers, engine (requests), connections, sleep state; a new generation. */
  private stopProcess(message: string): void {
    this.generation += 1;
    this.clearTimers();
    this.current.dispose();
    this.current = this.newEngine();
    this.processState = 'down';
    this.sleepingTags.clear();
    this.sleepLevel = 0;
    this.pausing = false;
    this.weightsOk = true;
    this.opChain = Promise.resolve();
    this.server.closeAllConnections();
    this.logger.info(message);
    this.fireState();
  }

  /** The loading process dies of CUDA OOM: down, no pids, until the next restart. */
  private dieOfOom(gen: number): void {
    if (gen !== this.generation) return;
    this.processState = 'down';
    this.failure = 'cuda-oom';
    this.logger.warn('engine core failed to start: CUDA out of memory');
    this.fireState();
  }

  /** POST /sleep?level=N: aborts in-flight requests, then offloads (1) or discards (2) the weights. */
  sleep(level: 1 | 2): Promise<void> {
    return this.enqueue(async (gen) => {
      if (this.sleepingTags.size > 0 && this.sleepLevel >= level) return;
      this.pausing = true;
      this.current.abortAll();
      await this.wait(level === 1 ? this.profile.sleepLevel1Sec : this.profile.sleepLevel2Sec, gen);
      this.pausing = false;
      this.sleepLevel = level;
      this.sleepingTags.add('weights');
      this.sleepingTags.add('kv_cache');
      if (level === 2) this.weightsOk = false;
      this.logger.info('engine asleep', { level });
      this.fireState();
    });
  }

  /** POST /wake_up[?tags=weights|kv_cache]: restores the tags asked for (all when none). */
  wakeUp(tags?: SleepTag[]): Promise<void> {
    return this.enqueue(async (gen) => {
      const wanted = tags && tags.length > 0 ? tags : (['weights', 'kv_cache'] as SleepTag[]);
      const p = this.profile;
      for (const tag of ['weights', 'kv_cache'] as const) {
        if (!wanted.includes(tag) || !this.sleepingTags.has(tag)) continue;
        let sec: number;
        if (this.sleepLevel === 2) sec = tag === 'weights' ? p.wakeWeightsAllocSec : p.wakeKvCacheSec;
        else {
          const next = createPrng(hashString(`${p.id}/wake/${this.wakeCount++}`));
          const total = p.wakeLevel1MinSec + next() * (p.wakeLevel1MaxSec - p.wakeLevel1MinSec);
          sec = tag === 'weights' ? total - 0.3 : 0.3;
        }
        await this.wait(sec, gen);
        this.sleepingTags.delete(tag);
        this.fireState();
      }
      if (this.sleepingTags.size === 0 && this.sleepLevel !== 0) {
        this.sleepLevel = 0;
        this.logger.info('engine awake', { weightsValid: this.weightsOk });
        this.fireState();
      }
    });
  }

  /** collective_rpc reload_weights: reads the weights from disk again (fixes level-2 gibberish). */
  reloadWeights(): Promise<void> {
    return this.enqueue(async (gen) => {
      if (this.sleepingTags.has('weights')) {
        throw new HttpError(500, 'InternalServerError', 'reload_weights failed: weights are not allocated; call /wake_up?tags=weights first');
      }
      await this.wait(this.profile.reloadWeightsSec, gen);
      this.weightsOk = true;
      this.fireState();
    });
  }

  // ---- GPU share -------------------------------------------------------

  gpuShare(gpuIndex: number): GpuShare {
    const rank = this.profile.gpuIndices.indexOf(gpuIndex);
    if (rank < 0 || this.processState === 'down' || this.disposed) return { process: null, busy: 0, resident: false };
    const m = this.profile.memory;
    const tp = this.profile.gpuIndices.length;
    const processName = tp > 1 ? `VLLM::Worker_TP${rank}` : 'VLLM::EngineCore';
    const pid = this.pids[rank] ?? 0;
    if (this.processState === 'loading') {
      const loadMs = this.scaledMs(this.profile.loadSec);
      const frac = loadMs > 0 ? Math.min(1, (this.clock.now() - this.loadingSinceMs) / loadMs) : 1;
      return { process: { pid, processName, usedMemoryMiB: Math.round(m.overheadMiB + m.weightsMiB * frac) }, busy: 0, resident: false };
    }
    const snap = this.current.snapshot();
    const load = Math.min(1, snap.running / this.profile.slots);
    let used: number;
    if (this.sleepingTags.size === 0) used = m.weightsMiB + m.kvCacheMiB + m.overheadMiB + m.activationMiB * load;
    else if (this.sleepingTags.size === 2) used = this.sleepLevel === 2 ? m.residueLevel2MiB : m.residueLevel1MiB;
    else used = m.overheadMiB + (this.sleepingTags.has('weights') ? m.kvCacheMiB : m.weightsMiB);
    const busy = this.sleepingTags.size === 0 && snap.running > 0 ? load : 0;
    return { process: { pid, processName, usedMemoryMiB: Math.round(used) }, busy, resident: this.sleepingTags.size === 0 };
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.generation += 1;
    this.clearTimers();
    this.current.dispose();
    this.onDidChangeState.dispose();
    this.onDidServe.dispose();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  // ---- internals -------------------------------------------------------

  private sleepState(): SleepState {
    if (this.sleepingTags.size === 0) return 'awake';
    return this.sleepLevel === 2 ? 'discard_all' : 'weights_offloaded';
  }

  private newEngine(): Engine {
    const p = this.profile;
    const f = this.options.decodeSpeedFactor;
    return new Engine(
      {
        slots: p.slots,
        decodeTokPerSec: p.decodeTokPerSec * f,
        prefillTokPerSec: p.prefillTokPerSec * f,
        prefillOverheadMs: p.prefillOverheadMs / f,
        numGpuBlocks: p.numGpuBlocks,
        blockSize: p.blockSize,
      },
      this.clock,
    );
  }

  private newPids(): number[] {
    return this.profile.gpuIndices.map(() => this.options.allocatePid());
  }

  private scaledMs(sec: number): number {
    return (sec * 1000) / this.options.timeScale;
  }

  private after(sec: number, fn: () => void): void {
    const timer = this.clock.setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, this.scaledMs(sec));
    this.timers.add(timer);
  }

  private wait(sec: number, gen: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.after(sec, () => {
        if (gen !== this.generation) reject(new HttpError(503, 'ServiceUnavailableError', 'the engine process was restarted'));
        else resolve();
      });
    });
  }

  private clearTimers(): void {
    for (const t of this.timers) void t.dispose();
    this.timers.clear();
  }

  /** Lifecycle operations run one at a time, in arrival order. */
  private enqueue(op: (gen: number) => Promise<void>): Promise<void> {
    if (this.processState !== 'up') return Promise.reject(new HttpError(503, 'ServiceUnavailableError', 'the engine is not running'));
    const gen = this.generation;
    const run = this.opChain.then(() => {
      if (gen !== this.generation) throw new HttpError(503, 'ServiceUnavailableError', 'the engine process was restarted');
      return op(gen);
    });
    this.opChain = run.catch(() => undefined);
    return run;
  }

  private fireState(): void {
    this.onDidChangeState.fire(this.state());
  }

  private apiContext(): ApiContext {
    return {
      profile: this.profile,
      nowMs: () => this.clock.now(),
      engine: () => this.current,
      weightsValid: () => this.weightsOk,
      assertServing: () => {
        if (this.pausing || this.sleepingTags.size > 0) {
          throw new HttpError(503, 'ServiceUnavailableError', `The engine is sleeping (${this.sleepState()}); wake it with POST /wake_up before sending requests.`);
        }
      },
      cachedTokens: (key, promptTokens) => {
        const h = hashString(key);
        const hit = this.prefixCache.has(h);
        this.prefixCache.delete(h);
        this.prefixCache.set(h, true);
        if (this.prefixCache.size > PREFIX_CACHE_ENTRIES) this.prefixCache.delete(this.prefixCache.keys().next().value!);
        return hit ? Math.floor(promptTokens / this.profile.blockSize) * this.profile.blockSize : 0;
      },
      nextId: (prefix) => `${prefix}${hashString(`${this.serviceId}/${this.generation}/${++this.idCounter}`).toString(16)}${this.idCounter.toString(16).padStart(8, '0')}`,
    };
  }

  private route(req: IncomingMessage, res: ServerResponse): void {
    if (this.processState !== 'up') {
      // The real socket is not listening yet: behave like a refused/reset connection.
      req.socket.destroy();
      return;
    }
    const path = (req.url ?? '/').split('?')[0]!;
    res.once('finish', () => this.onDidServe.fire({ method: req.method ?? 'GET', path, status: res.statusCode, clientPort: req.socket.remotePort ?? 0 }));
    this.handle(req, res).catch((err: unknown) => {
      if (err instanceof HttpError) sendError(res, err);
      else {
        this.logger.error('simulator request failed', { error: err instanceof Error ? err.message : String(err) });
        sendError(res, new HttpError(500, 'InternalServerError', 'internal error'));
      }
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const route = `${req.method ?? 'GET'} ${url.pathname}`;
    if (this.profile.dialect) return serveDialect(this.profile.dialect, { profile: this.profile, engine: this.current, processStartMs: this.processStartMs }, this.apiContext(), req, res);
    switch (route) {
      case 'GET /health':
      case 'GET /ping':
      case 'POST /ping':
        return sendEmpty(res);
      case 'GET /version':
        return sendJson(res, 200, { version: VLLM_VERSION });
      case 'GET /v1/models':
        return sendJson(res, 200, vllmModelList(this.profile, this.processStartMs));
      case 'GET /metrics': {
        const text = this.metricsText();
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': Buffer.byteLength(text) });
        res.end(text);
        return;
      }
      case 'POST /v1/chat/completions':
        return handleChat(this.apiContext(), req, res);
      case 'POST /v1/completions':
        return handleCompletion(this.apiContext(), req, res);
      case 'POST /v1/embeddings':
        return handleEmbeddings(this.apiContext(), req, res);
      case 'POST /sleep': {
        const level = url.searchParams.get('level') ?? '1';
        if (level !== '1' && level !== '2') throw badRequest(`Invalid sleep level: ${level}`);
        await this.sleep(level === '1' ? 1 : 2);
        return sendEmpty(res);
      }
      case 'POST /wake_up': {
        const tags = url.searchParams.getAll('tags');
        const bad = tags.find((t) => t !== 'weights' && t !== 'kv_cache');
        if (bad !== undefined) throw badRequest(`Invalid tag: ${bad}`);
        await this.wakeUp(tags as SleepTag[]);
        return sendEmpty(res);
      }
      case 'GET /is_sleeping':
        return sendJson(res, 200, { is_sleeping: this.sleepingTags.size > 0 || this.pausing });
      case 'POST /collective_rpc':
        return this.collectiveRpc(req, res);
      case 'POST /reset_prefix_cache':
        this.prefixCache.clear();
        return sendEmpty(res);
      default:
        throw notFound('Not Found');
    }
  }

  private async collectiveRpc(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJson(req);
    const method = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).method : undefined;
    if (typeof method !== 'string' || method.length === 0) throw badRequest('Missing \'method\' in request body');
    if (method !== 'reload_weights') {
      sendJson(res, 500, errorBody(500, 'InternalServerError', `Method ${method} is not supported by the demo engine`));
      return;
    }
    await this.reloadWeights();
    sendEmpty(res);
  }
}
