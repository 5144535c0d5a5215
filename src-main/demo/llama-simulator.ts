// One simulated llama-server process (llama.cpp b10573, fixtures under
// test/fixtures/llama-server/): a real HTTP listener on 127.0.0.1:0 (clients
// come through the demo host's SSH forward to its remotePort), its slots, its
// life (down → bound and loading → serving; optional idle sleep) and what it
// holds on the GPU or in an APU's GTT.
//
// The HTTP library's habits are reproduced, because clients trip over them:
// an idle keep-alive connection is closed after 5 s and every connection
// after its 100th request (that answer says `Connection: close`; a client that
// reuses the socket anyway sees it closed before any byte of an answer).
//
// Lifecycle knob for tests: ghostOnNextRestart() makes the next restart leave
// the old process (same pid) on the port, still answering, while the new one
// fails to bind ("address in use") and exits — what a console that compares
// the listener's pid before and after a restart must detect as a ghost. The
// ghost squats the port until it is killed (`kill <pid>` on the host, or
// kill()): every restart before that fails the same way.
//
// Simplifications (deliberate): a sleeping server wakes in `wakeSec` and
// /health stays 200 meanwhile; the KV cache counts against memory as the
// slots fill (the real server reserves it at start), so GTT use moves with load.

import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { AppError, Emitter, type Clock, type Disposable, type Logger } from '../core/base/index.js';
import { DemoErrorCode } from './errors.js';
import type { GpuShare, GpuShareSource } from './gpu-model.js';
import { handleLlamaChat, handleLlamaCompletion, LlamaHttpError, llamaFail, sendLlamaJson, type LlamaApiContext } from './llama-api.js';
import { LlamaEngine, type FinishedTask } from './llama-engine.js';
import { INVALID_API_KEY_BODY, LOADING_BODY, LOADING_HTML, MODEL_PATHS, PUBLIC_PATHS, llamaAuthorized, llamaError, modelsBody, processStartMark, propsBody, slotBody, slotContext } from './llama-shapes.js';
import type { LlamaServiceProfile } from './profiles.js';
import { hashString } from './text-gen.js';

export type LlamaProcessState = 'down' | 'loading' | 'up';

export interface LlamaSimulatorState {
  process: LlamaProcessState;
  /** /props is_sleeping: the model is unloaded after sleepIdleSeconds idle (true until it is loaded again). */
  isSleeping: boolean;
  /** The process holding the port (null while down). */
  pid: number | null;
  /** The process on the port survived a restart (ghostOnNextRestart) and squats it until killed. */
  ghost: boolean;
  /** The pid of the last process that failed to bind (a ghost held the port), if any. */
  lastFailedPid: number | null;
  /** Why the last start failed (the process stays down until the next restart); null when it did not. */
  failure: 'cuda-oom' | null;
}

export interface LlamaSimulatorOptions {
  profile: LlamaServiceProfile;
  clock: Clock;
  logger: Logger;
  timeScale: number;
  decodeSpeedFactor: number;
  allocatePid(): number;
}

export interface LlamaRestartHandle {
  /** The new process was started (what `systemctl restart` waits for). */
  initiated: Promise<void>;
  /** The new process serves (never, when it found the port taken). */
  ready: Promise<void>;
  /** How it went: serving again, or the new process found the port taken and exited. */
  outcome: Promise<'serving' | 'address-in-use'>;
}

/** cpp-httplib: CPPHTTPLIB_KEEPALIVE_TIMEOUT_SECOND and CPPHTTPLIB_KEEPALIVE_MAX_COUNT. */
export const KEEPALIVE_TIMEOUT_MS = 5_000;
export const KEEPALIVE_MAX_REQUESTS = 100;
/** cpp-httplib listens with a backlog of 5 (ss shows it as the listener's Send-Q). */
export const LLAMA_LISTEN_BACKLOG = 5;
/** Where in its load an OOM start dies: allocating the weights' buffer. */
export const LLAMA_OOM_AT_LOAD_FRACTION = 0.3;


export class LlamaSimulator implements GpuShareSource, Disposable {
  readonly serviceId: string;
  readonly profile: LlamaServiceProfile;
  /** Fires whenever the process, sleep or ghost state changes. */
  readonly onDidChangeState = new Emitter<LlamaSimulatorState>();
  /** A task left its slot (the server logs its timings). */
  readonly onDidFinishTask = new Emitter<FinishedTask>();
  private readonly server: Server;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private current: LlamaEngine;
  private processState: LlamaProcessState = 'up';
  private pid: number | null;
  private processStartMs: number;
  private loadingSinceMs = 0;
  private sleeping = false;
  private waking: Promise<void> | null = null;
  private ghost = false;
  private ghostArmed = false;
  private lastFailedPid: number | null = null;
  private oomOnRestart = false;
  private failure: LlamaSimulatorState['failure'] = null;
  private mediaMarker = '';
  private seedCounter = 0;
  /** Bumped per process; timers of an older process become no-ops. */
  private generation = 0;
  private readonly timers = new Set<Disposable>();
  private idleTimer: Disposable | undefined;
  private readonly requestsOn = new WeakMap<Socket, number>();
  private disposed = false;

  private constructor(private readonly options: LlamaSimulatorOptions) {
    this.profile = options.profile;
    this.serviceId = options.profile.id;
    this.clock = options.clock;
    this.logger = options.logger.child(options.profile.id);
    this.current = this.newEngine();
    this.pid = options.allocatePid();
    this.processStartMs = this.clock.now();
    this.newMediaMarker();
    this.server = createServer((req, res) => this.route(req, res));
    this.server.keepAliveTimeout = KEEPALIVE_TIMEOUT_MS;
    // Counted here (Node's maxRequestsPerSocket answers 503 past the limit instead of closing).
    this.server.maxRequestsPerSocket = 0;
  }

  static async start(options: LlamaSimulatorOptions): Promise<LlamaSimulator> {
    const sim = new LlamaSimulator(options);
    await new Promise<void>((resolve, reject) => {
      sim.server.once('error', reject);
      sim.server.listen(0, '127.0.0.1', () => {
        sim.server.off('error', reject);
        resolve();
      });
    });
    sim.armIdle();
    return sim;
  }

  /** The real (private) loopback port of the HTTP listener. */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get listening(): boolean {
    return this.server.listening;
  }

  /** Whether a new TCP connection would be accepted: from the moment the process binds (loading too) until it stops. */
  get acceptsConnections(): boolean {
    return !this.disposed && this.processState !== 'down';
  }

  get engine(): LlamaEngine {
    return this.current;
  }

  state(): LlamaSimulatorState {
    return {
      process: this.processState,
      isSleeping: this.sleeping,
      pid: this.processState === 'down' ? null : this.pid,
      ghost: this.ghost,
      lastFailedPid: this.lastFailedPid,
      failure: this.failure,
    };
  }

  /** Busy slots and deferred requests. */
  snapshot(): { processing: number; deferred: number } {
    const snap = this.current.snapshot();
    return { processing: this.current.processing, deferred: snap.waiting };
  }

  /** The /metrics body (starts a new throughput window, as a scrape does). */
  metricsText(): string {
    return this.current.metrics.render(this.snapshot());
  }

  // ---- lifecycle -------------------------------------------------------

  /**
   * The next restart() leaves the old process (same pid) holding the port and
   * answering, while the new process fails to bind and exits; so does every
   * restart after it until that process is killed.
   */
  ghostOnNextRestart(): void {
    this.ghostArmed = true;
  }

  /** Fault knob: while on, every restart's model load fails to allocate its buffer and the process exits (down until the next restart). */
  setOomOnRestart(on: boolean): void {
    this.oomOnRestart = on;
  }

  /**
   * `kill <pid>` of the process on the port (the way out of a ghost): it goes
   * away and the service stays down until the next restart. False when `pid`
   * is not this service's process.
   */
  kill(pid: number): boolean {
    if (this.disposed || this.processState === 'down' || pid !== this.pid) return false;
    this.stopProcess('process killed', { pid });
    return true;
  }

  /** Fault knob: the server stops (killed, or `systemctl stop`): down, refusing, until the next restart. False when already down. */
  stop(): boolean {
    return this.pid !== null && this.kill(this.pid);
  }

  /** The process goes away: timers, engine (requests), connections; a new generation, nothing bound. */
  private stopProcess(message: string, details: Record<string, unknown> = {}): void {
    this.generation += 1;
    this.clearTimers();
    this.current.dispose();
    this.current = this.newEngine();
    this.processState = 'down';
    this.pid = null;
    this.ghost = false;
    this.sleeping = false;
    this.waking = null;
    this.server.closeAllConnections();
    this.logger.info(message, details);
    this.fireState();
  }

  /** `systemctl restart`: stop, down (refused) for restartDownSec, bound and loading (503) for loadSec, then serving; counters start from zero. */
  restart(): LlamaRestartHandle {
    if (this.disposed) throw new AppError(DemoErrorCode.DISPOSED, 'the demo simulator is disposed');
    if (this.ghostArmed || this.ghost) {
      this.ghostArmed = false;
      this.ghost = true;
      this.lastFailedPid = this.options.allocatePid();
      this.logger.warn('new llama-server could not bind: address already in use; the old process keeps the port', {
        port: this.profile.remotePort,
        pid: this.pid,
        failedPid: this.lastFailedPid,
      });
      this.fireState();
      return { initiated: Promise.resolve(), ready: new Promise<void>(() => undefined), outcome: Promise.resolve('address-in-use') };
    }
    this.stopProcess('process stopped for restart');
    const gen = this.generation;
    let resolveInitiated!: () => void;
    let resolveOutcome!: (o: 'serving') => void;
    const initiated = new Promise<void>((r) => (resolveInitiated = r));
    const outcome = new Promise<'serving' | 'address-in-use'>((r) => (resolveOutcome = r));
    const ready = outcome.then(() => undefined);
    this.after(this.profile.restartDownSec, () => {
      if (gen !== this.generation) return;
      this.processState = 'loading';
      this.loadingSinceMs = this.clock.now();
      this.pid = this.options.allocatePid();
      this.processStartMs = this.clock.now();
      this.newMediaMarker();
      this.failure = null;
      this.fireState();
      resolveInitiated();
      if (this.oomOnRestart) {
        this.after(this.profile.loadSec * LLAMA_OOM_AT_LOAD_FRACTION, () => {
          if (gen !== this.generation) return;
          this.failure = 'cuda-oom';
          this.stopProcess('model load failed: out of memory');
        });
        return;
      }
      this.after(this.profile.loadSec, () => {
        if (gen !== this.generation) return;
        this.processState = 'up';
        this.logger.info('model loaded, serving');
        this.fireState();
        this.armIdle();
        resolveOutcome('serving');
      });
    });
    return { initiated, ready, outcome };
  }

  // ---- GPU share -------------------------------------------------------

  gpuShare(gpuIndex: number): GpuShare {
    const rank = this.profile.gpuIndices.indexOf(gpuIndex);
    if (rank < 0 || this.processState === 'down' || this.disposed || this.pid === null) return { process: null, busy: 0, resident: false };
    const m = this.profile.memory;
    const split = this.profile.gpuIndices.length;
    const process = (usedMiB: number) => ({ pid: this.pid!, processName: 'llama-server', usedMemoryMiB: Math.round(usedMiB / split) });
    if (this.processState === 'loading') {
      const loadMs = this.scaledMs(this.profile.loadSec);
      const frac = loadMs > 0 ? Math.min(1, (this.clock.now() - this.loadingSinceMs) / loadMs) : 1;
      return { process: process(m.overheadMiB * frac + m.weightsMiB * frac), busy: 0, resident: false };
    }
    if (this.sleeping) return { process: process(m.asleepMiB), busy: 0, resident: false };
    const kvMiB = (this.current.tokensInUse() * m.kvBytesPerToken) / 1048576;
    const busySlots = this.current.processing;
    const busy = busySlots > 0 ? Math.min(1, 0.85 + (0.15 * busySlots) / this.profile.parallel) : 0;
    return { process: process(m.weightsMiB + m.overheadMiB + kvMiB), busy, resident: true };
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.generation += 1;
    this.clearTimers();
    this.current.dispose();
    this.onDidChangeState.dispose();
    this.onDidFinishTask.dispose();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  // ---- internals -------------------------------------------------------

  private newEngine(): LlamaEngine {
    return new LlamaEngine({
      profile: this.profile,
      clock: this.clock,
      speedFactor: this.options.decodeSpeedFactor,
      onDidFinishTask: (task) => {
        this.onDidFinishTask.fire(task);
        this.armIdle();
      },
    });
  }

  private newMediaMarker(): void {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    this.mediaMarker = `<__media_${[...randomBytes(32)].map((b) => alphabet[b % alphabet.length]).join('')}__>`;
  }

  private scaledMs(sec: number): number {
    return (sec * 1000) / this.options.timeScale;
  }

  private after(sec: number, fn: () => void): Disposable {
    const timer = this.clock.setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, this.scaledMs(sec));
    this.timers.add(timer);
    return timer;
  }

  private clearTimers(): void {
    for (const t of this.timers) void t.dispose();
    this.timers.clear();
    this.idleTimer = undefined;
  }

  private fireState(): void {
    this.onDidChangeState.fire(this.state());
  }

  /** Starts the idle countdown when nothing runs or waits (only with sleepIdleSeconds). */
  private armIdle(): void {
    const idleSec = this.profile.sleepIdleSeconds ?? 0;
    if (idleSec <= 0 || this.disposed || this.processState !== 'up' || this.sleeping) return;
    const snap = this.current.snapshot();
    if (snap.running > 0 || snap.waiting > 0) return;
    this.disarmIdle();
    const gen = this.generation;
    this.idleTimer = this.after(idleSec, () => {
      this.idleTimer = undefined;
      const now = this.current.snapshot();
      if (gen !== this.generation || this.sleeping || now.running > 0 || now.waiting > 0) return;
      this.sleeping = true;
      this.logger.info('idle: model unloaded (sleeping)', { idleSec });
      this.fireState();
    });
  }

  private disarmIdle(): void {
    if (!this.idleTimer) return;
    this.timers.delete(this.idleTimer);
    void this.idleTimer.dispose();
    this.idleTimer = undefined;
  }

  /** A completion request: it resets the idle timer and wakes a sleeping server (it waits for the model). */
  private wake(): Promise<void> {
    this.disarmIdle();
    if (!this.sleeping) return Promise.resolve();
    if (this.waking) return this.waking;
    const gen = this.generation;
    this.logger.info('request while asleep: loading the model again');
    this.waking = new Promise<void>((resolve, reject) => {
      this.after(this.profile.wakeSec, () => {
        if (gen !== this.generation) {
          reject(llamaFail(503, 'Loading model', 'unavailable_error'));
          return;
        }
        this.sleeping = false;
        this.waking = null;
        this.fireState();
        resolve();
      });
    });
    return this.waking;
  }

  private apiContext(): LlamaApiContext {
    const engine = this.current;
    return {
      profile: this.profile,
      nowMs: () => this.clock.now(),
      engine: () => engine,
      wake: () => this.wake(),
      nextSeed: () => hashString(`${this.serviceId}/${this.generation}/${++this.seedCounter}`),
    };
  }

  private route(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    if (this.processState === 'down') {
      // No process has the port: behave like a refused/reset connection.
      socket.destroy();
      return;
    }
    const count = (this.requestsOn.get(socket) ?? 0) + 1;
    this.requestsOn.set(socket, count);
    if (count > KEEPALIVE_MAX_REQUESTS) {
      socket.destroy();
      return;
    }
    res.setHeader('Server', 'llama.cpp');
    res.setHeader('Access-Control-Allow-Origin', req.headers.origin ?? '');
    if (count === KEEPALIVE_MAX_REQUESTS) res.setHeader('Connection', 'close');
    else res.setHeader('Keep-Alive', `timeout=${KEEPALIVE_TIMEOUT_MS / 1000}, max=${KEEPALIVE_MAX_REQUESTS}`);
    this.handle(req, res).catch((err: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (err instanceof LlamaHttpError) sendLlamaJson(res, err.status, err.body);
      else {
        this.logger.error('simulator request failed', { error: err instanceof Error ? err.message : String(err) });
        sendLlamaJson(res, 500, llamaError(500, 'unknown error', 'server_error'));
      }
      // Drain what the client still sends so the connection stays usable.
      req.resume();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    if (method !== 'OPTIONS' && !PUBLIC_PATHS.has(path) && !llamaAuthorized(this.profile, req.headers)) return sendLlamaJson(res, 401, INVALID_API_KEY_BODY);
    if (this.processState === 'loading' && !MODEL_PATHS.has(path)) {
      if (path === '/' || path.endsWith('.html')) {
        res.writeHead(503, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': Buffer.byteLength(LOADING_HTML) });
        res.end(LOADING_HTML);
        return;
      }
      return sendLlamaJson(res, 503, LOADING_BODY);
    }
    const ctx = this.apiContext();
    switch (`${method} ${path}`) {
      case 'GET /health':
      case 'GET /v1/health':
        return sendLlamaJson(res, 200, { status: 'ok' });
      case 'GET /metrics': {
        this.current.takeTaskId();
        const text = this.metricsText();
        res.writeHead(200, {
          'Process-Start-Time-Unix': String(processStartMark(this.serviceId, this.pid)),
          'Content-Type': 'text/plain; version=0.0.4',
          'Content-Length': Buffer.byteLength(text),
        });
        res.end(text);
        return;
      }
      case 'GET /slots': {
        this.current.takeTaskId();
        const views = this.current.slotViews();
        if (url.searchParams.get('fail_on_no_slot') === '1' && views.every((v) => v !== null)) {
          return sendLlamaJson(res, 503, llamaError(503, 'no slot available', 'unavailable_error'));
        }
        const nCtx = slotContext(this.profile);
        return sendLlamaJson(res, 200, views.map((v, id) => slotBody(id, nCtx, v)));
      }
      case 'GET /props':
        return sendLlamaJson(res, 200, propsBody(this.profile, { isSleeping: this.sleeping, mediaMarker: this.mediaMarker }));
      case 'POST /props':
        return sendLlamaJson(res, 501, llamaError(501, 'This server does not support changing global properties. Start it with `--props`', 'not_supported_error'));
      case 'GET /models':
      case 'GET /v1/models':
      case 'GET /api/tags':
        return sendLlamaJson(res, 200, modelsBody(this.profile, { loaded: this.processState === 'up', nowSec: Math.floor(this.clock.now() / 1000) }));
      case 'POST /v1/chat/completions':
      case 'POST /chat/completions':
        return handleLlamaChat(ctx, req, res);
      case 'POST /v1/completions':
      case 'POST /completions':
        return handleLlamaCompletion(ctx, req, res);
      default:
        req.resume();
        return sendLlamaJson(res, 404, llamaError(404, 'File Not Found', 'not_found_error'));
    }
  }
}
