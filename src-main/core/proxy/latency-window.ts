// The latency of the generation requests the proxy relayed, per upstream, over
// the same minute as the per-class figures (stats.ts), all classes together:
// what the console measures itself for a server that keeps no latency
// histograms (llama-server). Fed from the answered requests' rows.
import type { ProxyLatency } from '../../../src-preload/contract/index.js';
import { ENDPOINT_PATH } from './exchange.js';
import type { RequestRecord } from './request-log.js';
import { SampleRing, WINDOW_MS, percentile } from './stats.js';

const GENERATION = new Set<string>([ENDPOINT_PATH.chat, ENDPOINT_PATH.completions]);

interface Window {
  ttft: SampleRing;
  e2e: SampleRing;
}

const round1 = (x: number | null): number | null => (x === null ? null : Math.round(x * 10) / 10);

export class UpstreamLatency {
  private readonly windows = new Map<string, Window>();

  /**
   * One answered request. Counted: a chat or completion answered by its upstream (not an
   * error, not an idempotent replay). TTFT only for a streamed answer: the first byte of a
   * whole JSON answer is its end, not its first token.
   */
  record(r: RequestRecord): void {
    if (r.upstream === null || r.status >= 400 || r.replayed || !GENERATION.has(r.endpoint)) return;
    let w = this.windows.get(r.upstream);
    if (w === undefined) this.windows.set(r.upstream, (w = { ttft: new SampleRing(), e2e: new SampleRing() }));
    const endedAt = r.ts + r.totalMs;
    w.e2e.push(endedAt, r.totalMs);
    if (r.stream && r.ttftMs !== null) w.ttft.push(endedAt, r.ttftMs);
  }

  /** The window ending `now`; null figures (and 0 counts) where nothing was answered in it. */
  figures(upstream: string, now: number): ProxyLatency {
    const w = this.windows.get(upstream);
    const since = now - WINDOW_MS;
    const ttft = w ? w.ttft.valuesSince(since).sort((a, b) => a - b) : [];
    const e2e = w ? w.e2e.valuesSince(since).sort((a, b) => a - b) : [];
    return {
      ttftP50Ms: round1(percentile(ttft, 50)),
      ttftP95Ms: round1(percentile(ttft, 95)),
      e2eP50Ms: round1(percentile(e2e, 50)),
      e2eP95Ms: round1(percentile(e2e, 95)),
      requests: e2e.length,
      streamed: ttft.length,
    };
  }
}
