// The answers one upstream gave the proxy's clients over the last five minutes,
// and how many of them failed on the upstream's side: the figure the error-rate
// rule reads (contract UpstreamFigures.errors). Per-second buckets in a ring, so
// recording is O(1) with no allocation on the request path, and the memory is
// fixed (~5 KB per upstream) however busy it is.

export const ANSWER_WINDOW_MS = 300_000;
const BUCKET_MS = 1_000;
const BUCKETS = ANSWER_WINDOW_MS / BUCKET_MS;

/**
 * What the proxy answers for a state a person chose (an approved drain, restart or sleep, the proxy
 * shutting down): a 503 the client sees, but not a failure of the server, so a model asleep on purpose
 * with clients still calling it does not raise the error rate.
 */
const PLANNED_REFUSALS: ReadonlySet<string> = new Set(['upstream_draining', 'model_sleeping', 'model_waking', 'model_restarting', 'proxy_shutting_down']);

/**
 * Whether an answer counts as a failure of the upstream: any 5xx the client got — the server's own,
 * or the proxy's for that upstream (unreachable 502, reset 502, deadline 504, tunnel down 503) —
 * except the refusals of a planned state (above). Client errors (4xx) and the proxy's queue refusals
 * (429 queue_full, hold_timeout: the queue_wait rule's business) are not; nor is a client that left
 * (499). Prometheus's rule draws `status=~"5.."` over gpu_console_proxy_requests_total, which has no
 * error-code label: there a planned sleep's 503s count (README, "What differs").
 */
export function isUpstreamFailure(status: number, errorCode: string | null = null): boolean {
  return status >= 500 && status <= 599 && (errorCode === null || !PLANNED_REFUSALS.has(errorCode));
}

export interface AnswerFigures {
  windowMs: number;
  answered: number;
  failed: number;
}

export class AnswerWindow {
  /** The epoch second each bucket counts (-Infinity: never used). */
  private readonly second = new Float64Array(BUCKETS).fill(-Infinity);
  private readonly answered = new Uint32Array(BUCKETS);
  private readonly failed = new Uint32Array(BUCKETS);

  /** One answer at `atMs` (epoch ms). */
  record(atMs: number, failed: boolean): void {
    const s = Math.floor(atMs / BUCKET_MS);
    const i = ((s % BUCKETS) + BUCKETS) % BUCKETS;
    if (this.second[i] !== s) {
      this.second[i] = s;
      this.answered[i] = 0;
      this.failed[i] = 0;
    }
    this.answered[i]!++;
    if (failed) this.failed[i]!++;
  }

  /** The answers of the seconds (now − 5 min, now]; a bucket from an older lap of the ring is skipped. */
  figures(nowMs: number): AnswerFigures {
    const now = Math.floor(nowMs / BUCKET_MS);
    let answered = 0;
    let failed = 0;
    for (let i = 0; i < BUCKETS; i++) {
      const s = this.second[i]!;
      if (s > now - BUCKETS && s <= now) {
        answered += this.answered[i]!;
        failed += this.failed[i]!;
      }
    }
    return { windowMs: ANSWER_WINDOW_MS, answered, failed };
  }
}
