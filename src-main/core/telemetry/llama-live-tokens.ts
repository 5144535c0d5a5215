import type { LlamaSlot } from './llama-server-endpoints.js';

// llama-server moves its token counters (tokens_predicted_total,
// prompt_tokens_total) only when a request finishes, so a rate of them reads
// 0 for as long as a long request generates. /slots shows the progress of the
// running ones (next_token.n_decoded, n_prompt_tokens_processed). This counter
// adds both: each scrape it credits what the processing slots did since the
// last one, plus what the finished counters grew beyond what the slots had
// already shown of the requests that finished meanwhile (their tails).
//
// The two endpoints are read at slightly different moments: a request that
// finishes between the two GETs may be credited twice in one interval and
// missed in the next, which the clamp at zero turns into a small overcount,
// never into a negative rate. Without /metrics the tails are lost (the rate
// undercounts by the last interval of each request); the rate still moves.

interface SlotTask {
  task: number | null;
  decoded: number;
  prompt: number;
}

export interface LiveTotals {
  generated: number;
  prompt: number;
}

export class LiveTokenCounter {
  private tasks = new Map<number, SlotTask>();
  private finished: { gen: number | null; prompt: number | null } | null = null;
  private totals: LiveTotals = { generated: 0, prompt: 0 };

  /** Forget everything (the server restarted or the link dropped). */
  reset(): void {
    this.tasks.clear();
    this.finished = null;
    this.totals = { generated: 0, prompt: 0 };
  }

  /**
   * One scrape: the slots (null when /slots could not be read this time) and
   * the finished-request counters (null when /metrics is off or failed).
   */
  push(slots: readonly LlamaSlot[] | null, finishedGen: number | null, finishedPrompt: number | null): LiveTotals {
    const prevFinished = this.finished;
    // A counter that went back: the server restarted; nothing before it carries over.
    if (prevFinished && ((finishedGen !== null && prevFinished.gen !== null && finishedGen < prevFinished.gen) || (finishedPrompt !== null && prevFinished.prompt !== null && finishedPrompt < prevFinished.prompt))) {
      this.tasks.clear();
    }
    // The first reading starts from the finished counters (so the total reads like the server's own).
    const dGen = prevFinished === null || prevFinished.gen === null ? finishedGen : delta(prevFinished.gen, finishedGen);
    const dPrompt = prevFinished === null || prevFinished.prompt === null ? finishedPrompt : delta(prevFinished.prompt, finishedPrompt);
    this.finished = { gen: finishedGen, prompt: finishedPrompt };

    if (slots === null) {
      // No progress this time: credit the finished counters whole and start the slots afresh.
      this.tasks.clear();
      this.totals.generated += dGen ?? 0;
      this.totals.prompt += dPrompt ?? 0;
      return { ...this.totals };
    }

    let liveGen = 0;
    let livePrompt = 0;
    let shownOfFinishedGen = 0;
    let shownOfFinishedPrompt = 0;
    const next = new Map<number, SlotTask>();
    for (const s of slots) {
      const before = this.tasks.get(s.id);
      if (!s.isProcessing) {
        if (before) {
          shownOfFinishedGen += before.decoded;
          shownOfFinishedPrompt += before.prompt;
        }
        continue;
      }
      const decoded = Math.max(0, s.decodedTokens ?? 0);
      const prompt = Math.max(0, s.promptTokensProcessed ?? (decoded > 0 ? (s.promptTokens ?? 0) : 0));
      const sameTask = before !== undefined && (s.taskId !== null ? before.task === s.taskId : decoded >= before.decoded);
      if (before && !sameTask) {
        shownOfFinishedGen += before.decoded;
        shownOfFinishedPrompt += before.prompt;
      }
      liveGen += sameTask ? Math.max(0, decoded - before.decoded) : decoded;
      livePrompt += sameTask ? Math.max(0, prompt - before.prompt) : prompt;
      next.set(s.id, { task: s.taskId, decoded, prompt });
    }
    // Slots that vanished from the list (a different answer size) count as finished.
    for (const [id, t] of this.tasks) {
      if (!slots.some((s) => s.id === id)) {
        shownOfFinishedGen += t.decoded;
        shownOfFinishedPrompt += t.prompt;
      }
    }
    this.tasks = next;
    this.totals.generated += liveGen + (dGen === null ? 0 : Math.max(0, dGen - shownOfFinishedGen));
    this.totals.prompt += livePrompt + (dPrompt === null ? 0 : Math.max(0, dPrompt - shownOfFinishedPrompt));
    return { ...this.totals };
  }
}

function delta(before: number | null, now: number | null): number | null {
  if (before === null || now === null) return null;
  return now >= before ? now - before : now;
}
