import type { LlamaSlot } from './llama-server-endpoints.js';

// Token totals of a llama-server that move while requests run, so a rate of
// them shows what is generated now (llama.cpp b10573, server-context.cpp):
//
// - tokens_predicted_total grows by a request's whole output when its slot is
//   released (metrics_on_prediction), so on its own a rate of it reads 0 while
//   long requests generate and jumps when they end. The output so far of the
//   requests still running is /slots next_token.n_decoded, and a released
//   slot shows is_processing false. Generated = the counter + Σ n_decoded of
//   the processing slots: a function of one reading, so an error in one
//   reading cannot pile up over the next ones. (It replaces a running credit
//   of per-task deltas plus "counter growth beyond what the slots had shown",
//   whose correction for a request seen both running and finished was lost
//   whenever it would have gone below zero, so the excess stayed for good.)
// - prompt_tokens_total (and _cached_total) grow while a prompt is evaluated
//   (per decode batch in b10573, at the first token before that), never at
//   the end of a request: they are live already and nothing is added to them.
//
// /slots and /metrics are two GETs the server answers at slightly different
// moments; a request that ends between them shows in both or in neither. The
// error is at most that request's output and lasts one reading. A total never
// goes back for it (it holds until the counters catch up); it goes back only
// when the server's own counter did (a restart), and a rate skips that interval.
//
// Without /metrics (a server started without --metrics) the running requests'
// progress is all there is: each reading credits what the processing slots
// did since the last one. What a request does after the last reading that
// saw it is lost, so that rate reads a little low.

interface SlotTask {
  task: number | null;
  decoded: number;
  prompt: number;
}

export interface LiveTotals {
  generated: number;
  /** Null when the server has no prompt counter. */
  prompt: number | null;
}

/** Σ n_decoded over the processing slots: the output of the running requests so far. */
export function runningDecoded(slots: readonly LlamaSlot[]): number {
  let n = 0;
  for (const s of slots) if (s.isProcessing) n += Math.max(0, s.decodedTokens ?? 0);
  return n;
}

export class LiveTokenCounter {
  private last: { finishedGen: number; generated: number } | null = null;
  private readonly slotsOnly = new SlotProgress();

  /** Forget everything (the server restarted or the link dropped). */
  reset(): void {
    this.last = null;
    this.slotsOnly.reset();
  }

  /**
   * One reading with both /slots and the server's counters (/metrics): the
   * finished-request output plus the running requests' progress; the prompt
   * counter as it is.
   */
  push(slots: readonly LlamaSlot[], finishedGen: number, finishedPrompt: number | null): LiveTotals {
    const raw = finishedGen + runningDecoded(slots);
    const prev = this.last;
    // A counter that went back: the server restarted, and the total may go back with it.
    const generated = prev !== null && finishedGen >= prev.finishedGen ? Math.max(prev.generated, raw) : raw;
    this.last = { finishedGen, generated };
    return { generated, prompt: finishedPrompt };
  }

  /** One reading of a server without /metrics: the running requests' progress, credited per task. */
  pushSlotsOnly(slots: readonly LlamaSlot[]): LiveTotals {
    return this.slotsOnly.push(slots);
  }
}

/** Progress of the running requests since the last reading, added up (what a server without counters allows). */
class SlotProgress {
  private tasks = new Map<number, SlotTask>();
  private totals = { generated: 0, prompt: 0 };

  reset(): void {
    this.tasks.clear();
    this.totals = { generated: 0, prompt: 0 };
  }

  push(slots: readonly LlamaSlot[]): LiveTotals {
    const next = new Map<number, SlotTask>();
    for (const s of slots) {
      if (!s.isProcessing) continue;
      const before = this.tasks.get(s.id);
      const decoded = Math.max(0, s.decodedTokens ?? 0);
      const prompt = Math.max(0, s.promptTokensProcessed ?? 0);
      const sameTask = before !== undefined && (s.taskId !== null ? before.task === s.taskId : decoded >= before.decoded);
      this.totals.generated += sameTask ? Math.max(0, decoded - before.decoded) : decoded;
      this.totals.prompt += sameTask ? Math.max(0, prompt - before.prompt) : prompt;
      next.set(s.id, { task: s.taskId, decoded, prompt });
    }
    this.tasks = next;
    return { ...this.totals };
  }
}
