// The load generator. Closed loop: `level` workers, each sends its next request
// when the previous one ends. Open loop: requests leave at `level` per second
// whatever the server does (in flight bounded by MAX_OPEN_IN_FLIGHT). Phases:
// warm-up (not measured), each level, then the optional stability loop. A
// cancel aborts what is in flight and returns what was measured, marked partial.
import type { BenchScenario, LevelResult } from '../../../src-preload/contract/index.js';
import type { UpstreamClient } from '../upstream/index.js';
import { levelResult, type RecordedRequest } from './aggregate.js';
import { runRequest, type RequestOutcome } from './http-request.js';
import type { BenchPrompt } from './prompts.js';
import type { CompiledSchema } from './schema-check.js';

const MAX_OPEN_IN_FLIGHT = 1024;

export interface Endpoint {
  /** The target's client: a service's (its tunnel's), or one made for the run's URL or the proxy. */
  client: UpstreamClient;
  /** The chat completions path on it. */
  path: string;
  headers: Record<string, string>;
  model: string;
}

/** The endpoint as audit rows and messages name it: `http://127.0.0.1:8000/v1/chat/completions`, `gpu-a/qwen (SSH tunnel)/v1/chat/completions`. */
export function endpointText(e: Pick<Endpoint, 'client' | 'path'>): string {
  return `${e.client.target}${e.path}`;
}

export interface RunnerProgress {
  phase: RecordedRequest['phase'];
  level: number | null;
  levelIndex: number;
  levelCount: number;
  done: number;
  total: number;
  errors: number;
  elapsedMs: number;
  etaMs: number | null;
}

export interface RunnerOptions {
  scenario: BenchScenario;
  prompts: readonly BenchPrompt[];
  endpoint: Endpoint;
  schema: CompiledSchema | null;
  signal: AbortSignal;
  now: () => number;
  onProgress?(p: RunnerProgress): void;
}

export interface RunnerResult {
  levels: LevelResult[];
  requests: RecordedRequest[];
  cancelled: boolean;
  wallMs: number;
}

export function buildBody(scenario: BenchScenario, model: string, prompt: BenchPrompt): Record<string, unknown> {
  const body: Record<string, unknown> = {
    ...(scenario.extraBody ?? {}),
    model,
    messages: prompt.messages,
    max_tokens: scenario.maxTokens,
    stream: scenario.stream,
    chat_template_kwargs: { enable_thinking: scenario.thinking },
  };
  if (scenario.stream) body.stream_options = { include_usage: true };
  if (scenario.ignoreEos) body.ignore_eos = true;
  if (scenario.responseFormat) {
    body.response_format = { type: 'json_schema', json_schema: { name: 'bench', schema: scenario.responseFormat.schema, strict: true } };
  }
  return body;
}

export function plannedRequests(s: BenchScenario): number | null {
  const per = s.perLevel;
  if (per.kind === 'duration') return null;
  const levelRequests = s.levels.reduce((n, l) => n + (per.kind === 'requests' ? per.count : per.rounds * Math.ceil(l)), 0);
  return s.warmupRequests + levelRequests + (s.stability?.requests ?? 0);
}

export async function runBenchmark(o: RunnerOptions): Promise<RunnerResult> {
  const { scenario, signal, now } = o;
  const t0 = now();
  const requests: RecordedRequest[] = [];
  const levels: LevelResult[] = [];
  let seq = 0;
  let done = 0;
  let errors = 0;
  const total = plannedRequests(scenario) ?? 0;
  const durationTotalMs = scenario.perLevel.kind === 'duration' ? scenario.perLevel.seconds * 1000 * scenario.levels.length : 0;
  const levelCount = scenario.levels.length + (scenario.stability ? 1 : 0);
  let current: { phase: RecordedRequest['phase']; level: number | null; index: number; startedMs: number } = { phase: 'warmup', level: null, index: 0, startedMs: 0 };

  const progress = () => {
    const elapsedMs = now() - t0;
    let etaMs: number | null = null;
    if (total > 0 && done > 0) etaMs = Math.max(0, (elapsedMs / done) * (total - done));
    else if (durationTotalMs > 0 && current.phase === 'level') {
      const perLevel = durationTotalMs / scenario.levels.length;
      etaMs = Math.max(0, perLevel * (scenario.levels.length - current.index) - (now() - current.startedMs));
    }
    o.onProgress?.({ phase: current.phase, level: current.level, levelIndex: current.index, levelCount, done, total, errors, elapsedMs, etaMs });
  };

  const one = async (phase: RecordedRequest['phase'], level: number): Promise<RecordedRequest> => {
    const mySeq = seq++;
    const prompt = o.prompts[mySeq % o.prompts.length]!;
    const outcome = await runRequest({
      client: o.endpoint.client,
      path: o.endpoint.path,
      headers: o.endpoint.headers,
      body: buildBody(scenario, o.endpoint.model, prompt),
      stream: scenario.stream,
      timeoutMs: scenario.requestTimeoutMs,
      signal,
      now,
    });
    const rec = record(mySeq, phase, level, outcome, t0, o.schema, prompt.expected ?? scenario.responseFormat?.expected);
    requests.push(rec);
    if (!rec.cancelled) {
      done++;
      if (rec.errorCode !== null) errors++;
    }
    progress();
    return rec;
  };

  const runLevel = async (phase: 'level' | 'stability', level: number, stop: BenchScenario['perLevel'], open: boolean): Promise<void> => {
    const start = now();
    current = { ...current, phase, level, startedMs: start };
    progress();
    const mine: RecordedRequest[] = [];
    const deadline = stop.kind === 'duration' ? start + stop.seconds * 1000 : Infinity;
    const count = stop.kind === 'requests' ? stop.count : stop.kind === 'rounds' ? stop.rounds * Math.ceil(level) : Infinity;
    let issued = 0;
    const more = () => !signal.aborted && issued < count && now() < deadline;
    if (!open) {
      const worker = async () => {
        while (more()) {
          issued++;
          mine.push(await one(phase, level));
        }
      };
      await Promise.all(Array.from({ length: level }, worker));
    } else {
      const inFlight = new Set<Promise<void>>();
      const intervalMs = 1000 / level;
      while (more()) {
        const due = start + issued * intervalMs;
        const wait = due - now();
        if (wait > 0) await sleep(wait, signal);
        if (!more()) break;
        issued++;
        if (inFlight.size >= MAX_OPEN_IN_FLIGHT) await Promise.race(inFlight);
        const p: Promise<void> = one(phase, level).then((r) => {
          mine.push(r);
          inFlight.delete(p);
        });
        inFlight.add(p);
      }
      await Promise.all(inFlight);
    }
    const ends = mine.filter((r) => r.totalMs !== null).map((r) => r.startMs + r.totalMs!);
    const wallMs = ends.length > 0 ? Math.max(...ends) - (start - t0) : now() - start;
    levels.push(levelResult(phase, level, mine, wallMs, signal.aborted, o.schema !== null));
  };

  // Warm-up: sequential, not measured (fills caches, wakes lazy paths).
  for (let i = 0; i < scenario.warmupRequests && !signal.aborted; i++) await one('warmup', 1);
  const open = scenario.mode === 'open';
  for (const [i, level] of scenario.levels.entries()) {
    if (signal.aborted) break;
    current.index = i;
    await runLevel('level', level, scenario.perLevel, open);
  }
  if (scenario.stability && !signal.aborted) {
    current.index = scenario.levels.length;
    await runLevel('stability', scenario.stability.concurrency, { kind: 'requests', count: scenario.stability.requests }, false);
  }
  progress();
  return { levels, requests, cancelled: signal.aborted, wallMs: now() - t0 };
}

function record(
  seq: number,
  phase: RecordedRequest['phase'],
  level: number,
  r: RequestOutcome,
  t0: number,
  schema: CompiledSchema | null,
  expected: Record<string, unknown> | undefined,
): RecordedRequest {
  let jsonOk: boolean | null = null;
  let schemaOk: boolean | null = null;
  let schemaError: string | null = null;
  // Checked when an answer came back (first attempt: the runner never retries).
  if (schema && !r.cancelled && r.errorCode === null && r.text !== null) {
    const c = schema.check(r.text, expected);
    jsonOk = c.jsonOk;
    schemaOk = c.schemaOk;
    schemaError = c.error;
  }
  return {
    seq,
    phase,
    level,
    startMs: r.startMs - t0,
    queueMs: r.queueMs,
    ttftMs: r.ttftMs,
    totalMs: r.totalMs,
    itlMs: r.itlMs,
    promptTokens: r.promptTokens,
    completionTokens: r.completionTokens,
    finishReason: r.finishReason,
    status: r.status,
    errorCode: r.errorCode,
    cancelled: r.cancelled,
    jsonOk,
    schemaOk,
    schemaError,
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
