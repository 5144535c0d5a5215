// How long a request may be held (for a recovery or in a queue): its class's
// hold budget, less what it was held already, and never past the client's own
// timeout where the client states it (field notes §3: a hold never outlasts
// the client's timeout). A stated timeout can only shorten the hold.
import type { IncomingHttpHeaders } from 'node:http';
import type { HoldReason } from '../resolver.js';

/**
 * Headers that state the client's timeout, in seconds: openai-node sends X-Stainless-Timeout
 * (whole seconds, 0 under one), openai-python X-Stainless-Read-Timeout (a decimal), and
 * X-Request-Timeout is the convention for anything else. When several are sent, the shortest counts.
 */
export const CLIENT_TIMEOUT_HEADERS = ['x-stainless-timeout', 'x-stainless-read-timeout', 'x-request-timeout'] as const;

/** The hold ends this long before the client's deadline, so the refusal reaches it before it gives up. */
export const CLIENT_TIMEOUT_MARGIN_MS = 1_000;

/** Plain decimal seconds: no sign, exponent, unit or list; anything else is ignored, never guessed at. */
const SECONDS = /^\d{1,9}(?:\.\d{1,6})?$/;

/** A timeout header's seconds as ms; null when absent or not plain decimal seconds (a repeated header arrives joined, and is ignored). */
export function parseTimeoutSeconds(value: string | string[] | undefined): number | null {
  if (typeof value !== 'string' || !SECONDS.test(value)) return null;
  return Number(value) * 1000;
}

/** The shortest timeout the client states (ms); null when it states none that parses. */
export function clientTimeoutMs(headers: IncomingHttpHeaders): number | null {
  let shortest: number | null = null;
  for (const name of CLIENT_TIMEOUT_HEADERS) {
    const ms = parseTimeoutSeconds(headers[name]);
    if (ms !== null && (shortest === null || ms < shortest)) shortest = ms;
  }
  return shortest;
}

/** How much longer this request may be held: the class budget and the client's timeout (less the margin), less what it was held. */
export function holdLeftMs(classBudgetMs: number, headers: IncomingHttpHeaders, heldMs: number): number {
  const client = clientTimeoutMs(headers);
  const limit = client === null ? classBudgetMs : Math.min(classBudgetMs, Math.max(0, client - CLIENT_TIMEOUT_MARGIN_MS));
  return Math.max(0, limit - heldMs);
}

type Recovery = { reason: HoldReason; expectedMs: number };

/**
 * Whether to hold for a recovery: only one expected by itself (null: a person must act, or the
 * link's last failure does not pass by itself) and back within what is left of the hold.
 */
export function worthHolding(recovery: Recovery | null | undefined, leftMs: number): recovery is Recovery {
  return recovery != null && recovery.expectedMs <= leftMs;
}
