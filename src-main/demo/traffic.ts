// Background traffic for the demo fleet, so that a first-time user sees a
// living fleet (tokens/s, queues, KV cache, power) before sending anything.
// It plays the applications that would use these servers on a real host: a
// few clients per model with think times, and a load that swells and ebbs
// over minutes. Given the console's proxy (`via`), half of each model's
// clients send through it, as the operator's applications would (alternately
// interactive and batch, each class with its own client token), so the Proxy
// view shows real pools, queues and tokens; the other half go straight to the
// simulators on loopback, as an application on the GPU host would (the
// "direct tunnel clients" the engine counts). Every request has a deadline,
// and dispose stops the loops and aborts what is in flight.
import { setMaxListeners } from 'node:events';
import { request } from 'node:http';
import { DisposableStore, toDisposable, type Clock, type Disposable, type Logger } from '../core/base/index.js';
/** A simulated server the traffic posts to on its private loopback port. */
export interface TrafficServer {
  readonly port: number;
  readonly listening: boolean;
}

export interface TrafficTarget {
  simulator: TrafficServer;
  model: string;
  kind: 'generate' | 'embed';
  /** Most clients this model gets at the top of a swell. */
  maxClients: number;
}

/** The console's own OpenAI-compatible proxy, and a client token per class to send with. */
export interface TrafficVia {
  /** e.g. http://127.0.0.1:8300/v1 */
  baseUrl: string;
  tokens: { interactive: string; batch: string };
}

export interface DemoTrafficOptions {
  clock: Clock;
  /** Send half of the clients through the proxy; absent: all go straight to the simulators. */
  via?: TrafficVia | null;
  logger: Logger;
  random?: () => number;
  /** Length of one swell-and-ebb cycle of the load. Default 6 minutes. */
  cycleMs?: number;
}

const PROMPTS = [
  'Summarise the incident report for the on-call handover.',
  'Extract the invoice number, total and due date as JSON.',
  'Translate the release notes into German.',
  'Write a short reply to the customer about the delayed shipment.',
  'List three risks in this deployment plan and how to reduce them.',
  'Classify this support ticket: printer offline since Monday.',
];

interface Destination {
  port: number;
  /** Prefix before /v1/… ('' for a simulator). */
  base: string;
  headers: Record<string, string>;
}

function post(to: Destination, path: string, body: unknown, signal: AbortSignal, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const data = JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port: to.port,
        path: `${to.base}${path}`,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...to.headers },
        signal,
        timeout: timeoutMs,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve());
        res.on('error', () => resolve());
      },
    );
    // Failures (a sleeping or restarting server, a proxy refusal, an abort at dispose) are part
    // of what the demo shows; the client just tries again later.
    req.on('error', () => resolve());
    req.on('timeout', () => req.destroy());
    req.end(data);
  });
}

/** Where client `index` of a model sends: even ones through the proxy (interactive, batch, …), odd ones direct. */
export function destinationOf(target: TrafficTarget, index: number, via: TrafficVia | null | undefined): Destination & { cls: 'direct' | 'interactive' | 'batch' } {
  if (!via || index % 2 === 1) return { port: target.simulator.port, base: '', headers: {}, cls: 'direct' };
  const url = new URL(via.baseUrl);
  const cls = index % 4 === 0 ? 'interactive' : 'batch';
  return {
    port: Number(url.port),
    // The proxy's base ends in /v1; the paths below start with /v1.
    base: url.pathname.replace(/\/v1\/?$/, '').replace(/\/$/, ''),
    headers: { authorization: `Bearer ${via.tokens[cls]}`, 'x-priority': cls },
    cls,
  };
}

export function startDemoTraffic(targets: TrafficTarget[], options: DemoTrafficOptions): Disposable {
  const { clock } = options;
  const random = options.random ?? Math.random;
  const cycleMs = options.cycleMs ?? 6 * 60_000;
  const startedAt = clock.now();
  const store = new DisposableStore();
  const abort = new AbortController();
  store.add(toDisposable(() => abort.abort()));

  // One signal is shared by every client's pending sleep and request.
  const clients = targets.reduce((n, t) => n + t.maxClients, 0);
  setMaxListeners(Math.max(200, 2 * clients + 10), abort.signal);

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (abort.signal.aborted) return resolve();
      const onAbort = () => {
        void timer.dispose();
        resolve();
      };
      const timer = clock.setTimeout(() => {
        abort.signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      abort.signal.addEventListener('abort', onAbort, { once: true });
    });

  // 0..1: how busy the fleet is now; each target's phase differs so the models do not swell together.
  const intensity = (phase: number) => {
    const t = (clock.now() - startedAt) / cycleMs + phase;
    return 0.5 - 0.5 * Math.cos(2 * Math.PI * t);
  };

  const runClient = async (target: TrafficTarget, index: number, phase: number) => {
    const to = destinationOf(target, index, options.via);
    // Stagger the start so the first minute is not a thundering herd.
    await sleep(500 + random() * 4000);
    while (!abort.signal.aborted) {
      const active = index < Math.round(target.maxClients * (0.15 + 0.85 * intensity(phase)));
      if (!active || !target.simulator.listening) {
        await sleep(2000 + random() * 3000);
        continue;
      }
      if (target.kind === 'embed') {
        const input = Array.from({ length: 1 + Math.floor(random() * 8) }, (_, i) => `${PROMPTS[i % PROMPTS.length]} #${i}`);
        await post(to, '/v1/embeddings', { model: target.model, input }, abort.signal, 30_000);
        await sleep(1500 + random() * 4000);
      } else {
        const prompt = PROMPTS[Math.floor(random() * PROMPTS.length)]!;
        const maxTokens = 40 + Math.floor(random() * 220);
        await post(
          to,
          '/v1/chat/completions',
          { model: target.model, max_tokens: maxTokens, messages: [{ role: 'user', content: prompt.repeat(1 + Math.floor(random() * 6)) }] },
          abort.signal,
          120_000,
        );
        await sleep(1000 + random() * 6000);
      }
    }
  };

  targets.forEach((target, t) => {
    const phase = t * 0.23;
    for (let i = 0; i < target.maxClients; i++) {
      runClient(target, i, phase).catch((err: unknown) => options.logger.warn('demo traffic client stopped', { error: String(err) }));
    }
  });
  return store;
}
