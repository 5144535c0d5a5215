// Writes a demo service's log as its simulator lives: the start-up lines
// spread over the load (on the demo clock, so a time-scaled restart logs at
// the scaled pace), the ready lines when it serves, a request's lines as it
// is answered, vLLM's stats line every 10 s while there is work, sleep and
// wake, the shutdown on a stop or restart, the OOM traceback when a start dies
// of it, and systemd's own lines about the unit for journal-managed services.
// A flood knob adds request lines at a fixed rate (benchmarks).
import type { Clock, Disposable } from '../core/base/index.js';
import { DisposableStore } from '../core/base/index.js';
import type { LlamaLogContext } from './llama-log-lines.js';
import { llamaBindFailedLines, llamaLoadLines, llamaOomLines, llamaReadyLines, llamaShutdownLines, llamaSleepLines, llamaTaskLines, llamaWakeLines } from './llama-log-lines.js';
import { LlamaSimulator } from './llama-simulator.js';
import type { LogPlaces } from './log-places.js';
import type { LogLineSpec, ServiceLog } from './service-log.js';
import type { VllmSimulator } from './vllm-simulator.js';
import { vllmAccessLine, vllmLoadLines, vllmOomLines, vllmReadyLines, vllmShutdownLines, vllmSleepLines, vllmStatsLine, vllmWakeLines, vllmWarmupLines, type TimedLine, type VllmLogContext } from './vllm-log-lines.js';

/** vLLM's VLLM_LOG_STATS_INTERVAL: real seconds, not scaled (it is not a lifecycle duration). */
export const VLLM_STATS_INTERVAL_MS = 10_000;

export interface ServiceLogWriterOptions {
  sim: VllmSimulator | LlamaSimulator;
  log: ServiceLog;
  clock: Clock;
  timeScale: number;
  places: LogPlaces;
  /** The GPU the service runs on, for the lines that name it. */
  gpu: { name: string; totalMiB: number };
}

interface Phase {
  process: 'down' | 'loading' | 'up';
  sleeping: boolean;
  /** llama-server: the last process that failed to bind (a ghost held the port). */
  failedPid: number | null;
}

export class ServiceLogWriter implements Disposable {
  private readonly store = new DisposableStore();
  private readonly pending = new Set<Disposable>();
  private phase: Phase;
  private floodTimer: Disposable | null = null;
  private stats = { metrics: null as object | null, prompt: 0, gen: 0, queries: 0, hits: 0 };

  constructor(private readonly o: ServiceLogWriterOptions) {
    const st = o.sim.state();
    this.phase = { process: st.process, sleeping: st.isSleeping, failedPid: 'lastFailedPid' in st ? st.lastFailedPid : null };
    this.backfill();
    this.store.add(o.sim.onDidChangeState.on(() => this.onState()));
    if (o.sim instanceof LlamaSimulator) {
      const sim = o.sim;
      this.store.add(sim.onDidFinishTask.on((t) => this.write(llamaTaskLines(this.llamaCtx(), { ...t, path: '/v1/chat/completions', status: 200 }, sim.snapshot().processing === 0))));
    } else {
      const sim = o.sim;
      this.store.add(sim.onDidServe.on((r) => this.write([vllmAccessLine(this.vllmCtx(), r.clientPort, r.method, r.path, r.status)])));
      this.store.add(o.clock.setInterval(() => this.vllmStats(sim), VLLM_STATS_INTERVAL_MS));
    }
  }

  /** Benchmark knob: `linesPerSec` extra request lines (0 stops them). */
  setFlood(linesPerSec: number): void {
    void this.floodTimer?.dispose();
    this.floodTimer = null;
    if (!(linesPerSec > 0)) return;
    const perTick = Math.max(1, Math.round(linesPerSec / 20));
    let n = 0;
    this.floodTimer = this.o.clock.setInterval(() => {
      const lines: LogLineSpec[] = [];
      for (let i = 0; i < perTick; i++, n++) lines.push(this.floodLine(n));
      this.write(lines);
    }, 50);
  }

  dispose(): void {
    this.setFlood(0);
    this.cancelPending();
    void this.store.dispose();
  }

  private floodLine(n: number): LogLineSpec {
    if (this.o.sim instanceof LlamaSimulator) return { text: `srv  log_server_r: request: GET /health 127.0.0.1 200 (flood ${n})` };
    return vllmAccessLine(this.vllmCtx(), 40000 + (n % 20000), 'GET', '/health', 200);
  }

  private get pid(): number {
    const sim = this.o.sim;
    if (sim instanceof LlamaSimulator) return sim.state().pid ?? sim.state().lastFailedPid ?? 1;
    return this.vllmCtx().apiPid;
  }

  private vllmCtx(): VllmLogContext {
    const sim = this.o.sim as VllmSimulator;
    const engine = sim.state().pids[0] ?? this.lastEnginePid;
    this.lastEnginePid = engine;
    // In a container the API server is pid 1 and the engine a small pid of its namespace.
    const inContainer = this.o.places.container !== null;
    return { profile: sim.profile, apiPid: inContainer ? 1 : engine - 3, enginePid: inContainer ? 100 + (engine % 300) : engine, gpuTotalMiB: this.o.gpu.totalMiB };
  }
  private lastEnginePid = 1000;

  private llamaCtx(): LlamaLogContext {
    const sim = this.o.sim as LlamaSimulator;
    return { profile: sim.profile, gpuName: this.o.gpu.name, freeMiB: this.o.gpu.totalMiB };
  }

  private write(lines: readonly LogLineSpec[], atMs?: number): void {
    if (lines.length > 0) this.o.log.append(lines, this.pid, atMs);
  }

  private systemd(text: string, priority: 3 | 6 = 6): LogLineSpec {
    return { text, writer: 'systemd', pid: 1, priority, stream: 'stdout' };
  }

  private unitName(): string {
    return this.o.sim instanceof LlamaSimulator ? 'llama.cpp server' : `vLLM ${this.o.sim.profile.servedModelName}`;
  }

  /** The demo starts with services already up: their start-up is in the log, as if it happened a minute before the loads took. */
  private backfill(): void {
    if (this.phase.process !== 'up') return;
    const loadSec = this.o.sim.profile.loadSec;
    const startMs = this.o.clock.now() - 60_000 - loadSec * 1000;
    if (this.o.places.unit) this.write([this.systemd(`Started ${this.o.places.unit} - ${this.unitName()}.`)], startMs);
    for (const t of this.startupLines()) this.write([t.line(startMs + t.at * loadSec * 1000)], startMs + t.at * loadSec * 1000);
    this.write(this.readyLines(startMs + loadSec * 1000), startMs + loadSec * 1000);
  }

  private startupLines(): TimedLine[] {
    const sim = this.o.sim;
    if (sim instanceof LlamaSimulator) return [...llamaLoadLines(this.llamaCtx()), ...llamaReadyLines(this.llamaCtx()).filter((l) => l.at < 1)];
    return [...vllmLoadLines(this.vllmCtx()), ...vllmWarmupLines(this.vllmCtx())];
  }

  private readyLines(nowMs: number): LogLineSpec[] {
    const sim = this.o.sim;
    if (sim instanceof LlamaSimulator) return llamaReadyLines(this.llamaCtx()).filter((l) => l.at >= 1).map((l) => l.line(nowMs));
    return vllmReadyLines(this.vllmCtx(), nowMs);
  }

  private onState(): void {
    const st = this.o.sim.state();
    const next: Phase = { process: st.process, sleeping: st.isSleeping, failedPid: 'lastFailedPid' in st ? st.lastFailedPid : null };
    const prev = this.phase;
    this.phase = next;
    const now = this.o.clock.now();
    if (next.failedPid !== null && next.failedPid !== prev.failedPid) this.onBindFailed(next.failedPid);
    if (prev.process !== 'down' && next.process === 'down') this.onDown(st.failure === 'cuda-oom', now);
    else if (prev.process === 'down' && next.process === 'loading') this.onLoading();
    else if (prev.process === 'loading' && next.process === 'up') {
      this.cancelPending();
      this.write(this.readyLines(now));
    }
    if (next.process === 'up' && prev.sleeping !== next.sleeping) this.write(next.sleeping ? this.sleepLines(now) : this.wakeLines(now));
  }

  private onDown(oom: boolean, now: number): void {
    this.cancelPending();
    const unit = this.o.places.unit;
    const llama = this.o.sim instanceof LlamaSimulator;
    if (oom) {
      this.write(llama ? llamaOomLines(this.llamaCtx()) : vllmOomLines(this.vllmCtx(), now));
      if (unit) this.write([this.systemd(`${unit}: Main process exited, code=exited, status=1/FAILURE`, 3), this.systemd(`${unit}: Failed with result 'exit-code'.`, 3)]);
      return;
    }
    if (unit) this.write([this.systemd(`Stopping ${unit} - ${this.unitName()}...`)]);
    this.write(llama ? llamaShutdownLines() : vllmShutdownLines(this.vllmCtx()));
    if (unit) this.write([this.systemd(`${unit}: Deactivated successfully.`), this.systemd(`Stopped ${unit} - ${this.unitName()}.`)]);
  }

  /** A restart whose new process found the port taken: it says so and exits; the old one keeps serving. */
  private onBindFailed(pid: number): void {
    const unit = this.o.places.unit;
    if (unit) this.write([this.systemd(`Stopping ${unit} - ${this.unitName()}...`), this.systemd(`${unit}: Deactivated successfully.`), this.systemd(`Started ${unit} - ${this.unitName()}.`)]);
    this.o.log.append(llamaBindFailedLines(this.llamaCtx()), pid);
    if (unit) this.write([this.systemd(`${unit}: Main process exited, code=exited, status=1/FAILURE`, 3), this.systemd(`${unit}: Failed with result 'exit-code'.`, 3)]);
  }

  private onLoading(): void {
    this.cancelPending();
    const unit = this.o.places.unit;
    if (unit) this.write([this.systemd(`Started ${unit} - ${this.unitName()}.`)]);
    const loadMs = (this.o.sim.profile.loadSec * 1000) / this.o.timeScale;
    for (const t of this.startupLines()) {
      if (t.at === 0) {
        this.write([t.line(this.o.clock.now())]);
        continue;
      }
      const timer = this.o.clock.setTimeout(() => {
        this.pending.delete(timer);
        this.write([t.line(this.o.clock.now())]);
      }, t.at * loadMs);
      this.pending.add(timer);
    }
  }

  private cancelPending(): void {
    for (const t of this.pending) void t.dispose();
    this.pending.clear();
  }

  private sleepLines(now: number): LogLineSpec[] {
    const sim = this.o.sim;
    if (sim instanceof LlamaSimulator) return llamaSleepLines(sim.profile.sleepIdleSeconds ?? 0);
    const level = sim.state().sleepState === 'discard_all' ? 2 : 1;
    const m = sim.profile.memory;
    const residue = level === 2 ? m.residueLevel2MiB : m.residueLevel1MiB;
    return vllmSleepLines(this.vllmCtx(), now, level, m.weightsMiB + m.kvCacheMiB + m.overheadMiB - residue, residue);
  }

  private wakeLines(now: number): LogLineSpec[] {
    return this.o.sim instanceof LlamaSimulator ? llamaWakeLines() : vllmWakeLines(this.vllmCtx(), now);
  }

  /** The stats line: token rates over the interval, the queue now; logged only when there was work (as vLLM does). */
  private vllmStats(sim: VllmSimulator): void {
    if (sim.state().process !== 'up') return;
    const m = sim.engine.metrics;
    const s = this.stats;
    if (s.metrics !== m) Object.assign(s, { metrics: m, prompt: 0, gen: 0, queries: 0, hits: 0 });
    const snap = sim.snapshot();
    const sec = VLLM_STATS_INTERVAL_MS / 1000;
    const prompt = (m.promptTokens - s.prompt) / sec;
    const gen = (m.generationTokens - s.gen) / sec;
    const queries = m.prefixCacheQueries - s.queries;
    const hitRate = queries > 0 ? (m.prefixCacheHits - s.hits) / queries : 0;
    Object.assign(s, { prompt: m.promptTokens, gen: m.generationTokens, queries: m.prefixCacheQueries, hits: m.prefixCacheHits });
    if (prompt === 0 && gen === 0 && snap.running === 0 && snap.waiting === 0) return;
    this.write([vllmStatsLine(this.vllmCtx(), this.o.clock.now(), { promptTps: prompt, genTps: gen, running: snap.running, waiting: snap.waiting, kvUsage: snap.kvCacheUsage, prefixHitRate: hitRate })]);
  }
}
