// The scheduling core of one simulated vLLM engine: at most `slots` sequences
// run (prefill, then one token per 1/decodeRate seconds each); the rest wait
// FIFO. Event-driven on the injected Clock: one timer, set for the next due
// token or prefill end. Text is not its business: callers get token indices.

import type { Clock, Disposable } from '../core/base/index.js';
import { EngineMetrics, type FinishReason } from './engine-metrics.js';

export interface EngineConfig {
  slots: number;
  /** Per-sequence decode rate (tokens/s). */
  decodeTokPerSec: number;
  prefillTokPerSec: number;
  prefillOverheadMs: number;
  numGpuBlocks: number;
  blockSize: number;
  /** Timer floor so a fast decode rate does not spin the event loop; due tokens are emitted in catch-up. */
  minTickMs?: number;
  /**
   * How much each further running sequence slows every sequence's decode: the
   * interval is multiplied by 1 + batchSlowdown × (running − 1). 0 (default)
   * keeps the per-sequence rate fixed; a bandwidth-bound llama.cpp box shares it.
   */
  batchSlowdown?: number;
}

export interface SequenceSpec {
  promptTokens: number;
  /** Tokens to generate (0 for pooling/embedding requests). */
  outputTokens: number;
  /** Reason reported when all outputTokens were produced. */
  doneReason: 'stop' | 'length';
  /** Prompt tokens already in the prefix cache (counted as hits). */
  cachedPromptTokens?: number;
  /** The sequence got a slot: prefill runs from atMs until prefillEndMs. */
  onSchedule?(info: { atMs: number; prefillEndMs: number }): void;
  onToken?(index: number): void;
  onFinish?(reason: FinishReason, stats: SequenceStats): void;
}

export interface SequenceStats {
  promptTokens: number;
  completionTokens: number;
  queueMs: number;
  ttftMs: number | null;
  e2eMs: number;
}

export interface SequenceHandle {
  readonly id: number;
  abort(): void;
}

export interface EngineSnapshot {
  running: number;
  waiting: number;
  /** Sequences past prefill, producing tokens. */
  decoding: number;
  usedBlocks: number;
  kvCacheUsage: number;
}

interface Sequence {
  id: number;
  spec: SequenceSpec;
  arrivalMs: number;
  scheduledMs: number | null;
  prefillEndMs: number;
  generated: number;
  nextTokenMs: number;
  firstTokenMs: number | null;
  done: boolean;
}

export class Engine implements Disposable {
  readonly metrics: EngineMetrics;
  private readonly waiting: Sequence[] = [];
  private readonly running: Sequence[] = [];
  private timer: Disposable | undefined;
  private timerAt = Infinity;
  private nextId = 1;
  private disposed = false;

  constructor(
    private readonly config: EngineConfig,
    private readonly clock: Clock,
  ) {
    this.metrics = new EngineMetrics(clock.now());
  }

  submit(spec: SequenceSpec): SequenceHandle {
    const seq: Sequence = {
      id: this.nextId++,
      spec,
      arrivalMs: this.clock.now(),
      scheduledMs: null,
      prefillEndMs: Infinity,
      generated: 0,
      nextTokenMs: Infinity,
      firstTokenMs: null,
      done: false,
    };
    if (this.disposed) {
      seq.done = true;
      return { id: seq.id, abort: () => undefined };
    }
    this.waiting.push(seq);
    // Admission happens on the next step, never inside submit(), so callers
    // are not re-entered before submit returns.
    this.armAt(this.clock.now());
    return { id: seq.id, abort: () => this.abort(seq) };
  }

  /** Aborts every sequence (sleep with mode=abort). */
  abortAll(): void {
    for (const seq of [...this.running, ...this.waiting]) this.abort(seq);
  }

  snapshot(): EngineSnapshot {
    const usedBlocks = this.usedBlocks();
    return {
      running: this.running.length,
      waiting: this.waiting.length,
      decoding: this.running.filter((s) => s.firstTokenMs !== null || this.clock.now() >= s.prefillEndMs).length,
      usedBlocks,
      kvCacheUsage: this.config.numGpuBlocks > 0 ? usedBlocks / this.config.numGpuBlocks : 0,
    };
  }

  /** Ends the process: pending sequences are dropped without callbacks. */
  dispose(): void {
    this.disposed = true;
    void this.timer?.dispose();
    this.timer = undefined;
    for (const seq of [...this.running, ...this.waiting]) seq.done = true;
    this.running.length = 0;
    this.waiting.length = 0;
  }

  private blocksFor(tokens: number): number {
    return Math.ceil(tokens / this.config.blockSize);
  }

  private usedBlocks(): number {
    let blocks = 0;
    for (const s of this.running) blocks += this.blocksFor(s.spec.promptTokens + s.generated);
    return blocks;
  }

  private abort(seq: Sequence): void {
    if (seq.done) return;
    const wi = this.waiting.indexOf(seq);
    if (wi >= 0) this.waiting.splice(wi, 1);
    const ri = this.running.indexOf(seq);
    if (ri >= 0) this.running.splice(ri, 1);
    this.finish(seq, 'abort', this.clock.now());
    this.armAt(this.clock.now());
  }

  private finish(seq: Sequence, reason: FinishReason, atMs: number): void {
    seq.done = true;
    const m = this.metrics;
    m.requestSuccess[reason] += 1;
    const e2eMs = atMs - seq.arrivalMs;
    if (seq.scheduledMs !== null) m.e2eLatency.observe(e2eMs / 1000);
    seq.spec.onFinish?.(reason, {
      promptTokens: seq.spec.promptTokens,
      completionTokens: seq.generated,
      queueMs: (seq.scheduledMs ?? atMs) - seq.arrivalMs,
      ttftMs: seq.firstTokenMs === null ? null : seq.firstTokenMs - seq.arrivalMs,
      e2eMs,
    });
  }

  private armAt(atMs: number): void {
    if (this.disposed) return;
    const now = this.clock.now();
    const target = Math.max(atMs, now);
    if (this.timer && this.timerAt <= target) return;
    void this.timer?.dispose();
    this.timerAt = target;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Infinity;
      this.step();
    }, target - now);
  }

  private step(): void {
    if (this.disposed) return;
    const now = this.clock.now();
    this.admit(now);
    const slowdown = 1 + (this.config.batchSlowdown ?? 0) * Math.max(0, this.running.length - 1);
    const intervalMs = this.config.decodeTokPerSec > 0 ? (1000 / this.config.decodeTokPerSec) * slowdown : Infinity;
    for (const seq of [...this.running]) {
      if (seq.done) continue;
      if (now < seq.prefillEndMs) continue;
      if (seq.spec.outputTokens === 0) {
        this.removeRunning(seq);
        this.finish(seq, seq.spec.doneReason, seq.prefillEndMs);
        continue;
      }
      if (seq.generated === 0 && seq.firstTokenMs === null) seq.nextTokenMs = seq.prefillEndMs;
      while (!seq.done && seq.generated < seq.spec.outputTokens && seq.nextTokenMs <= now) {
        const at = seq.nextTokenMs;
        if (seq.firstTokenMs === null) {
          seq.firstTokenMs = at;
          this.metrics.ttft.observe((at - seq.arrivalMs) / 1000);
        } else {
          this.metrics.interTokenLatency.observe(intervalMs / 1000);
        }
        const index = seq.generated;
        seq.generated += 1;
        this.metrics.generationTokens += 1;
        seq.nextTokenMs = at + intervalMs;
        seq.spec.onToken?.(index);
      }
      if (!seq.done && seq.generated >= seq.spec.outputTokens) {
        this.removeRunning(seq);
        this.finish(seq, seq.spec.doneReason, seq.nextTokenMs - intervalMs);
      }
    }
    // Freed slots admit waiting sequences at once.
    this.admit(this.clock.now());
    this.armNext();
  }

  private removeRunning(seq: Sequence): void {
    const i = this.running.indexOf(seq);
    if (i >= 0) this.running.splice(i, 1);
  }

  private admit(now: number): void {
    while (this.running.length < this.config.slots && this.waiting.length > 0) {
      const seq = this.waiting[0]!;
      const need = this.blocksFor(seq.spec.promptTokens);
      // Without free KV blocks the head waits (unless nothing runs: then it must go, as vLLM would).
      if (this.running.length > 0 && this.usedBlocks() + need > this.config.numGpuBlocks) break;
      this.waiting.shift();
      seq.scheduledMs = now;
      const cached = Math.min(seq.spec.cachedPromptTokens ?? 0, seq.spec.promptTokens);
      const computeTokens = seq.spec.promptTokens - cached;
      seq.prefillEndMs = now + this.config.prefillOverheadMs + (computeTokens / this.config.prefillTokPerSec) * 1000;
      this.running.push(seq);
      const m = this.metrics;
      m.promptTokens += seq.spec.promptTokens;
      m.prefixCacheQueries += seq.spec.promptTokens;
      m.prefixCacheHits += cached;
      m.queueTime.observe((now - seq.arrivalMs) / 1000);
      seq.spec.onSchedule?.({ atMs: now, prefillEndMs: seq.prefillEndMs });
    }
  }

  private armNext(): void {
    let next = Infinity;
    for (const seq of this.running) {
      next = Math.min(next, seq.generated === 0 ? seq.prefillEndMs : seq.nextTokenMs);
    }
    if (next === Infinity) return;
    const floor = this.clock.now() + (this.config.minTickMs ?? 5);
    this.armAt(Math.max(next, floor));
  }
}
