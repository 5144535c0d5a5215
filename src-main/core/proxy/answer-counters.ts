// The proxy's counts of its answers, for /metrics: every answer by upstream,
// class and status; its own 429/503 refusals by code and whether the request
// was held for a recovery first; and the answers never stored as rows (no
// valid token, health and metrics scrapes) by endpoint and reason — counted
// here so no one on the machine can grow the database.
import type { Exchange } from './exchange.js';

const bump = (m: Map<string, number>, key: string): void => void m.set(key, (m.get(key) ?? 0) + 1);

export class AnswerCounters {
  total = 0;
  readonly answered = new Map<string, number>();
  readonly refusals = new Map<string, number>();
  readonly unstored = new Map<string, number>();

  count(ex: Exchange): void {
    this.total++;
    bump(this.answered, `${ex.upstream ?? 'none'}|${ex.cls ?? 'none'}|${ex.status}`);
    if ((ex.status === 503 || ex.status === 429) && ex.errorCode !== null && ex.errorCode !== 'upstream_error') {
      bump(this.refusals, `${ex.upstream ?? 'none'}|${ex.errorCode}|${ex.holdReason !== null}`);
    }
  }

  /** True (and counted) when the answer is not stored as a row: no valid token, or a scrape. */
  countUnstored(ex: Exchange): boolean {
    if (ex.client !== 'unauthenticated' && ex.client !== 'metrics') return false;
    bump(this.unstored, `${ex.endpoint}|${ex.errorCode ?? (ex.status < 400 ? 'ok' : String(ex.status))}`);
    return true;
  }
}
