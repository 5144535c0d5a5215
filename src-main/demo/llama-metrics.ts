// What one simulated llama-server process has served, as its /metrics text:
// the llamacpp:* families of b10573 in its order (counters, then gauges), its
// HELP texts, no labels, numbers printed as a C++ stream prints a double.
//
// When figures move (server_metrics in llama.cpp): the prompt counters when a
// slot finishes its prompt (on_prompt_eval, at the first generated token), the
// predicted counters only when a request finishes (on_prediction); the two
// throughput gauges are averages over the window since the previous scrape,
// and every scrape starts a new window.

/** `std::ostream << double` with the default precision: %g, 6 significant digits. */
export function cppDouble(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (value === Infinity) return 'inf';
  if (value === -Infinity) return '-inf';
  if (value === 0) return '0';
  const [mantissa, exp] = value.toExponential(5).split('e') as [string, string];
  const e = Number(exp);
  const trim = (s: string) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
  if (e < -4 || e >= 6) return `${trim(mantissa)}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  return trim(value.toFixed(Math.max(0, 5 - e)));
}

interface Family {
  name: string;
  help: string;
  value: number;
}

export interface LlamaMetricsView {
  /** Slots processing a request right now. */
  processing: number;
  /** Requests waiting for a slot. */
  deferred: number;
}

export class LlamaMetrics {
  /** Prompt tokens evaluated, cached ones excluded. */
  promptTokensTotal = 0;
  promptTokensCachedTotal = 0;
  promptMsTotal = 0;
  tokensPredictedTotal = 0;
  predictMsTotal = 0;
  decodeCalls = 0;
  busySlotsTotal = 0;
  tokensMax = 0;
  private windowPromptTokens = 0;
  private windowPromptMs = 0;
  private windowPredicted = 0;
  private windowPredictMs = 0;

  /** A slot finished its prompt (the first token is out). */
  onPromptEval(evaluated: number, cached: number, promptMs: number, promptTokens: number): void {
    this.promptTokensTotal += evaluated;
    this.promptTokensCachedTotal += cached;
    this.promptMsTotal += promptMs;
    this.windowPromptTokens += evaluated;
    this.windowPromptMs += promptMs;
    this.tokensMax = Math.max(this.tokensMax, promptTokens);
  }

  /** A request finished normally (not cancelled). */
  onPrediction(decoded: number, predictMs: number): void {
    this.tokensPredictedTotal += decoded;
    this.predictMsTotal += predictMs;
    this.windowPredicted += decoded;
    this.windowPredictMs += predictMs;
  }

  /** `calls` llama_decode() calls over `busySlots` slots (a prompt is evaluated in batches). */
  onDecode(busySlots: number, calls = 1): void {
    this.decodeCalls += calls;
    this.busySlotsTotal += busySlots * calls;
  }

  /** One generated token: one decode gives each of the `busySlots` slots a token, so it is 1/busySlots of a call. */
  onToken(busySlots: number): void {
    this.decodeCalls += 1 / busySlots;
    this.busySlotsTotal += 1;
  }

  /** The /metrics body; starts a new throughput window, as each real scrape does. */
  render(view: LlamaMetricsView): string {
    const rate = (tokens: number, ms: number) => (tokens > 0 && ms > 0 ? (1000 / ms) * tokens : 0);
    const counters: Family[] = [
      { name: 'prompt_tokens_total', help: 'Number of prompt tokens processed, excluding cached tokens', value: this.promptTokensTotal },
      { name: 'prompt_tokens_cached_total', help: 'Number of prompt tokens reused from the cache', value: this.promptTokensCachedTotal },
      { name: 'prompt_seconds_total', help: 'Total time spent processing prompts', value: this.promptMsTotal / 1000 },
      { name: 'tokens_predicted_total', help: 'Number of generation tokens processed', value: this.tokensPredictedTotal },
      { name: 'tokens_predicted_seconds_total', help: 'Total time spent generating tokens', value: this.predictMsTotal / 1000 },
      {
        name: 'n_decode_total',
        help: 'Total number of llama_decode() calls, excluding speculative decoding and multimodal decoding',
        value: Math.floor(this.decodeCalls + 1e-9),
      },
      { name: 'n_tokens_max', help: 'Largest observed sequence length (prompt + generation)', value: this.tokensMax },
      { name: 'spec_decode_num_draft_tokens_total', help: 'Speculative: Total draft tokens generated', value: 0 },
      { name: 'spec_decode_num_accepted_tokens_total', help: 'Speculative: Total draft tokens accepted by the target model', value: 0 },
      { name: 'spec_decode_num_drafts_total', help: 'Speculative: Total speculative decoding verification steps', value: 0 },
    ];
    const gauges: Family[] = [
      { name: 'prompt_tokens_seconds', help: 'Average prompt throughput in tokens/s', value: rate(this.windowPromptTokens, this.windowPromptMs) },
      { name: 'predicted_tokens_seconds', help: 'Average generation throughput in tokens/s', value: rate(this.windowPredicted, this.windowPredictMs) },
      { name: 'requests_processing', help: 'Number of requests processing', value: view.processing },
      { name: 'requests_deferred', help: 'Number of requests deferred', value: view.deferred },
      {
        name: 'n_busy_slots_per_decode',
        help: 'Average number of busy slots per llama_decode() call',
        value: this.decodeCalls > 0 ? this.busySlotsTotal / this.decodeCalls : 0,
      },
    ];
    this.windowPromptTokens = 0;
    this.windowPromptMs = 0;
    this.windowPredicted = 0;
    this.windowPredictMs = 0;
    const lines: string[] = [];
    for (const [type, families] of [['counter', counters], ['gauge', gauges]] as const) {
      for (const f of families) {
        lines.push(`# HELP llamacpp:${f.name} ${f.help}`, `# TYPE llamacpp:${f.name} ${type}`, `llamacpp:${f.name} ${cppDouble(f.value)}`);
      }
    }
    return lines.join('\n') + '\n';
  }
}
