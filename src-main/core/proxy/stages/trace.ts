// Stage: trace. The client's X-Request-Id (or, without one, its W3C traceparent's
// trace-id) becomes the request's trace: kept on its row, forwarded upstream and
// returned. A malformed one is refused (400, coded, naming the header) rather
// than replaced: an application that thinks it is traced but is not finds out
// at its first request, not when someone follows a trace that goes nowhere.
import type { IncomingHttpHeaders } from 'node:http';
import { wire, type Exchange } from '../exchange.js';
import { fail, PASS, type StageResult } from './stage.js';

/** The longest X-Request-Id kept (a UUID is 36, a W3C trace-id 32). */
export const MAX_REQUEST_ID_LENGTH = 128;
/** Printable ASCII (space to tilde): what a log line, a header and the Proxy view show as sent. */
const PRINTABLE = /^[\x20-\x7e]+$/;
/** W3C Trace Context §3.2: version-traceid-parentid-flags, lower-case hex; later versions may append fields. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_PARENT = '0'.repeat(16);
/** W3C Trace Context §3.3: at most 32 members of up to 256 characters; 512 is what a vendor must pass on. */
const MAX_TRACESTATE = 512;

function one(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(', ') : v;
}

/** Why an X-Request-Id is not kept, or null when it is. */
export function requestIdProblem(value: string): string | null {
  if (value.length > MAX_REQUEST_ID_LENGTH) return `is ${value.length} characters; at most ${MAX_REQUEST_ID_LENGTH} are kept`;
  if (!PRINTABLE.test(value)) return 'may hold printable ASCII only (no control characters, no bytes above 0x7e)';
  return null;
}

/** The trace-id of a valid traceparent, or why it is not valid. */
export function parseTraceparent(value: string): { traceId: string } | { problem: string } {
  const m = TRACEPARENT.exec(value);
  if (!m) return { problem: 'is not version-traceid-parentid-flags in lower-case hex (W3C Trace Context)' };
  const [, version, traceId, parentId] = m;
  if (version === 'ff') return { problem: 'has version ff, which W3C Trace Context forbids' };
  if (version === '00' && m[5] !== undefined) return { problem: 'has fields after the flags, which version 00 does not allow' };
  if (traceId === ZERO_TRACE) return { problem: 'has an all-zero trace-id' };
  if (parentId === ZERO_PARENT) return { problem: 'has an all-zero parent-id' };
  return { traceId: traceId! };
}

/** Records the client's trace on `ex`; 400 invalid_request_id or invalid_traceparent. */
export function readTrace(ex: Exchange, headers: IncomingHttpHeaders): StageResult<void> {
  const rid = one(headers['x-request-id']);
  const tp = one(headers['traceparent']);
  if (rid === undefined && tp === undefined) return PASS;
  if (tp !== undefined) {
    const parsed = parseTraceparent(tp);
    if ('problem' in parsed) {
      return fail(wire(400, 'invalid_traceparent', `the traceparent header ${parsed.problem}; send a valid one or none`, { param: 'traceparent' }));
    }
    ex.traceparent = tp;
    ex.traceId = parsed.traceId;
    const ts = one(headers['tracestate']);
    // An unusable tracestate is dropped (W3C: a vendor may discard it), the traceparent still holds.
    if (ts !== undefined && ts.length <= MAX_TRACESTATE && PRINTABLE.test(ts)) ex.tracestate = ts;
  }
  if (rid !== undefined && rid !== '') {
    const problem = requestIdProblem(rid);
    if (problem) return fail(wire(400, 'invalid_request_id', `the X-Request-Id header ${problem}; send a shorter printable one or none`, { param: 'x-request-id' }));
    ex.traceId = rid;
  }
  return PASS;
}
