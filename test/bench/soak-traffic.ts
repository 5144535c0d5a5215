// The soak's clients: chat completions through the console's proxy at two
// classes (an interactive token, non-streaming; a batch token, streaming),
// each stating its timeout as openai-node does (X-Stainless-Timeout, seconds).
// Every request ends as one outcome: served, refused with Retry-After, failed
// without one (with why), cut after its answer had begun, or refused while the
// soak itself had the console stopped (connection refused: nothing could answer).
import { Agent, request } from 'undici';
import { HOLD_BUDGET_MS } from './soak-world.js';

export type Cls = 'interactive' | 'batch';

export interface Outcome {
  cls: Cls;
  model: string;
  startMs: number;
  /** Until the response's headers (null: none came). */
  headersMs: number | null;
  /**
   * Until the answer itself began: the headers of a JSON answer, the first content or error event of a
   * stream (a held stream gets its 200 and keep-alive comments long before). What the budget is held to.
   */
  answerMs: number | null;
  endMs: number;
  status: number;
  /** cut: the answer had begun (200 sent, content under way) when a fault broke it; no header can say anything then. */
  kind: 'served' | 'refused-ra' | 'failed' | 'cut' | 'console-down';
  /** For a failure: what went wrong (status and code, in-stream error, network error). */
  why: string | null;
  /** min(class hold budget, the client's stated timeout): what "held past budget" is measured against. */
  budgetMs: number;
}

/** The clients' stated timeouts (s): interactive below its class budget (so the client's own limit governs), batch above. */
export const CLIENT_TIMEOUT_S: Record<Cls, number> = { interactive: 30, batch: 300 };
/** Time to headers past the budget that still counts as on time: the answer itself (a few tokens) after the hold. */
export const BUDGET_GRACE_MS = 5_000;

export function budgetOf(cls: Cls): number {
  return Math.min(HOLD_BUDGET_MS[cls], CLIENT_TIMEOUT_S[cls] * 1000);
}

export interface TrafficOptions {
  proxyUrl: () => string;
  token: (cls: Cls) => string;
  /** A model for the next request. */
  pickModel: () => string;
  /** Whether the soak had the console stopped at this moment (its own SIGTERM fault). */
  consoleDownAt: (ms: number) => boolean;
  clients: Record<Cls, number>;
  /** Pause between one client's requests (ms). */
  pauseMs: number;
}

const agent = new Agent({ keepAliveTimeout: 4_000, connections: 64 });

function errorCode(text: string): string | null {
  return /"code":"([A-Za-z_]+)"/.exec(text)?.[1] ?? null;
}

/** One request, classified. */
export async function oneRequest(o: TrafficOptions, cls: Cls, model: string): Promise<Outcome> {
  const stream = cls === 'batch';
  const budgetMs = budgetOf(cls);
  const startMs = performance.now();
  let headersMs: number | null = null;
  let answerMs: number | null = null;
  let status = 0;
  const done = (kind: Outcome['kind'], why: string | null): Outcome => ({ cls, model, startMs, headersMs, answerMs, endMs: performance.now(), status, kind, why, budgetMs });
  try {
    const res = await request(`${o.proxyUrl()}/v1/chat/completions`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${o.token(cls)}`, 'x-stainless-timeout': String(CLIENT_TIMEOUT_S[cls]) },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'soak: say OK' }], max_tokens: stream ? 16 : 8, stream }),
      // The client gives up a little after its stated timeout, as the SDK would: past that the outcome is a failure.
      headersTimeout: CLIENT_TIMEOUT_S[cls] * 1000 + BUDGET_GRACE_MS,
      bodyTimeout: 60_000,
    });
    headersMs = performance.now() - startMs;
    status = res.statusCode;
    const sse = String(res.headers['content-type']).startsWith('text/event-stream');
    if (!sse) answerMs = headersMs;
    let text = '';
    for await (const chunk of res.body) {
      text += String(chunk);
      if (answerMs === null && /"delta"|data: \{"error"/.test(text)) answerMs = performance.now() - startMs;
    }
    if (status >= 400) {
      if (res.headers['retry-after'] !== undefined) return done('refused-ra', null);
      return done('failed', `${status} ${errorCode(text) ?? ''} without Retry-After`.trim());
    }
    // The netns model server answers a streaming request with one JSON body: served all the same.
    if (!stream || String(res.headers['content-type']).startsWith('application/json')) {
      return /"choices"/.test(text) ? done('served', null) : done('failed', `200 without choices: ${text.slice(0, 80)}`);
    }
    const content = text.includes('"delta"');
    if (text.includes('data: {"error"')) {
      // A held stream already got its 200: the refusal's retry time travels in the error event (`retry_after_s`), as a header cannot.
      if (!content && /"retry_after_s":\s*\d/.test(text)) return done('refused-ra', null);
      return done(content ? 'cut' : 'failed', `${content ? 'stream cut after content' : 'in-stream error before content'}: ${errorCode(text) ?? '?'}`);
    }
    return text.includes('data: [DONE]') ? done('served', null) : done(content ? 'cut' : 'failed', 'stream ended without [DONE]');
  } catch (err) {
    const code = (err as { code?: string }).code ?? (err as Error).name;
    // Refused while the soak had stopped the console on purpose: no process could answer, with or without a header.
    if (code === 'ECONNREFUSED' && o.consoleDownAt(startMs)) return done('console-down', code);
    // A 200 whose body broke off: the answer had begun, no header can follow it.
    return done(status === 200 ? 'cut' : 'failed', `network${status === 200 ? ' after 200' : ''}: ${code}`);
  }
}

/** Runs the clients until `until` (monotonic ms); every outcome goes to `sink`. */
export async function runClients(o: TrafficOptions, until: () => boolean, sink: (x: Outcome) => void): Promise<void> {
  const loop = async (cls: Cls) => {
    while (!until()) {
      const x = await oneRequest(o, cls, o.pickModel());
      sink(x);
      // Jittered, so the clients do not march in step.
      await new Promise((r) => setTimeout(r, o.pauseMs * (0.5 + Math.random())));
    }
  };
  const loops: Array<Promise<void>> = [];
  for (const cls of ['interactive', 'batch'] as const) for (let i = 0; i < o.clients[cls]; i++) loops.push(loop(cls));
  await Promise.all(loops);
}

export async function closeTraffic(): Promise<void> {
  await agent.close();
}
