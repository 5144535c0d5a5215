// The slots of one simulated llama-server process: the shared Engine does the
// timing (at most `parallel` requests, the rest deferred FIFO, prefill then
// one token per interval, slower per slot as more slots decode together);
// this adds what llama.cpp shows of it — which slot runs which task, its
// live progress for /slots, the prompt cache, and the server_metrics.

import type { Clock, Disposable } from '../core/base/index.js';
import { Engine, type EngineSnapshot } from './engine.js';
import type { FinishReason } from './engine-metrics.js';
import { LlamaMetrics } from './llama-metrics.js';
import { slotContext, type SamplingParams, type SlotTaskView } from './llama-shapes.js';
import type { LlamaServiceProfile } from './profiles.js';
import { hashString } from './text-gen.js';

/** llama.cpp's default logical batch (-b): a prompt is evaluated in calls of at most this many tokens. */
const N_BATCH = 2048;
const PROMPT_CACHE_ENTRIES = 256;

export interface LlamaRequestSpec {
  /** Identifies the prompt for the prompt cache. */
  promptKey: string;
  promptTokens: number;
  outputTokens: number;
  doneReason: 'stop' | 'length';
  /** The task's generation limit as /slots counts n_remain down (-1: none). */
  limit: number;
  params: SamplingParams;
  onToken?(index: number): void;
  onFinish?(result: LlamaResult): void;
}

/** What the server reports of a finished task (`usage` and `timings`). */
export interface LlamaResult {
  reason: FinishReason;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  promptMs: number;
  predictedMs: number;
}

interface Task {
  idTask: number;
  spec: LlamaRequestSpec;
  cachedTokens: number;
  arrivalMs: number;
  slot: number | null;
  scheduledMs: number;
  prefillEndMs: number;
  firstTokenMs: number | null;
  decoded: number;
}

/** A task that left its slot, as the server's log reports it. */
export interface FinishedTask extends LlamaResult {
  idTask: number;
  slot: number;
}

export interface LlamaEngineOptions {
  profile: LlamaServiceProfile;
  clock: Clock;
  /** Multiplies decode and prefill rates. */
  speedFactor: number;
  /** id_task of the first task (the real server counts tasks from its start, metrics and slot reads included). */
  firstTaskId?: number;
  /** After every finished or cancelled task (the simulator's idle countdown starts here). */
  onDidFinishTask?(task: FinishedTask): void;
}

export class LlamaEngine implements Disposable {
  readonly metrics = new LlamaMetrics();
  readonly nCtx: number;
  private readonly engine: Engine;
  private readonly slots: (Task | null)[];
  private readonly prefixCache = new Map<number, true>();
  private readonly perTokenMs: number;
  private nextTaskId: number;

  constructor(private readonly options: LlamaEngineOptions) {
    const p = options.profile;
    const f = options.speedFactor;
    this.nCtx = slotContext(p);
    this.slots = Array.from({ length: p.parallel }, () => null);
    this.perTokenMs = 1000 / (p.decodeTokPerSec * f);
    this.nextTaskId = options.firstTaskId ?? 0;
    this.engine = new Engine(
      {
        slots: p.parallel,
        decodeTokPerSec: p.decodeTokPerSec * f,
        prefillTokPerSec: p.prefillTokPerSec * f,
        prefillOverheadMs: p.prefillOverheadMs / f,
        // Each slot has its own n_ctx; requests are checked against it before they get here.
        numGpuBlocks: p.ctxSize,
        blockSize: 1,
        batchSlowdown: p.batchSlowdown,
      },
      options.clock,
    );
  }

  /** A task id for a request that is not a completion (the server numbers every task). */
  takeTaskId(): number {
    return this.nextTaskId++;
  }

  snapshot(): EngineSnapshot {
    return this.engine.snapshot();
  }

  /** Busy slots right now. */
  get processing(): number {
    return this.slots.filter((s) => s !== null).length;
  }

  /** Tokens the busy slots hold in their KV cache (prompt + generated). */
  tokensInUse(): number {
    let n = 0;
    for (const t of this.slots) if (t) n += t.spec.promptTokens + t.decoded;
    return n;
  }

  submit(spec: LlamaRequestSpec): { abort(): void } {
    const clock = this.options.clock;
    const task: Task = {
      idTask: this.nextTaskId++,
      spec,
      cachedTokens: this.cachedTokens(spec.promptKey, spec.promptTokens),
      arrivalMs: clock.now(),
      slot: null,
      scheduledMs: 0,
      prefillEndMs: 0,
      firstTokenMs: null,
      decoded: 0,
    };
    const handle = this.engine.submit({
      promptTokens: spec.promptTokens,
      outputTokens: spec.outputTokens,
      doneReason: spec.doneReason,
      cachedPromptTokens: task.cachedTokens,
      onSchedule: ({ atMs, prefillEndMs }) => {
        const free = this.slots.indexOf(null);
        task.slot = free;
        if (free >= 0) this.slots[free] = task;
        task.scheduledMs = atMs;
        task.prefillEndMs = prefillEndMs;
      },
      onToken: (index) => {
        const m = this.metrics;
        if (index === 0) {
          task.firstTokenMs = clock.now();
          const evaluated = spec.promptTokens - task.cachedTokens;
          m.onPromptEval(evaluated, task.cachedTokens, task.prefillEndMs - task.scheduledMs, spec.promptTokens);
          m.onDecode(this.processing, Math.max(1, Math.ceil(evaluated / N_BATCH)));
        }
        task.decoded = index + 1;
        // One llama_decode() gives every busy slot one token.
        m.onToken(Math.max(1, this.processing));
        spec.onToken?.(index);
      },
      onFinish: (reason, stats) => {
        if (task.slot !== null && task.slot >= 0 && this.slots[task.slot] === task) this.slots[task.slot] = null;
        const finishMs = task.arrivalMs + stats.e2eMs;
        const predictedMs = task.firstTokenMs === null ? 0 : finishMs - task.firstTokenMs + this.perTokenMs;
        if (reason !== 'abort') this.metrics.onPrediction(stats.completionTokens, predictedMs);
        const result: LlamaResult = {
          reason,
          promptTokens: spec.promptTokens,
          cachedTokens: task.cachedTokens,
          completionTokens: stats.completionTokens,
          promptMs: task.firstTokenMs === null ? 0 : task.prefillEndMs - task.scheduledMs,
          predictedMs,
        };
        spec.onFinish?.(result);
        this.options.onDidFinishTask?.({ ...result, idTask: task.idTask, slot: Math.max(0, task.slot ?? 0) });
      },
    });
    return handle;
  }

  /** The /slots view: for each slot its running task, null when idle. */
  slotViews(): (SlotTaskView | null)[] {
    const now = this.options.clock.now();
    return this.slots.map((t) => {
      if (!t) return null;
      const evaluated = t.spec.promptTokens - t.cachedTokens;
      const span = t.prefillEndMs - t.scheduledMs;
      const processed = now >= t.prefillEndMs || span <= 0 ? evaluated : Math.floor((evaluated * (now - t.scheduledMs)) / span);
      return {
        idTask: t.idTask,
        // n_prompt_tokens is the slot's sequence, prompt and generated tokens (b10573's prompt.tokens.size())
        promptTokens: t.spec.promptTokens + t.decoded,
        promptTokensProcessed: processed,
        cachedTokens: t.cachedTokens,
        params: t.spec.params,
        remaining: t.spec.limit < 0 ? -1 : Math.max(0, t.spec.limit - t.decoded),
        decoded: t.decoded,
      };
    });
  }

  dispose(): void {
    this.engine.dispose();
    this.slots.fill(null);
  }

  /** llama.cpp reuses the longest common prefix of a slot's last prompt; a repeated prompt re-evaluates only its last token. */
  private cachedTokens(key: string, promptTokens: number): number {
    const h = hashString(key);
    const hit = this.prefixCache.has(h);
    this.prefixCache.delete(h);
    this.prefixCache.set(h, true);
    if (this.prefixCache.size > PROMPT_CACHE_ENTRIES) this.prefixCache.delete(this.prefixCache.keys().next().value!);
    return hit ? Math.max(0, promptTokens - 1) : 0;
  }
}
