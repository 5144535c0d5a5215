// A request-log row for tests of the log and its queries: a plain answered
// non-streaming chat by client `c` through `h/s`, one token each way; `over`
// changes what a test is about.
import type { RequestRecord } from '../../src-main/core/proxy/index.js';

export function requestRecord(i: number, over: Partial<RequestRecord> = {}): RequestRecord {
  return {
    id: `r${i}`,
    ts: 1_700_000_000_000 + i,
    client: 'c',
    class: 'interactive',
    endpoint: '/v1/chat/completions',
    model: 'm',
    upstream: 'h/s',
    stream: false,
    status: 200,
    errorCode: null,
    queueMs: 0,
    ttftMs: null,
    totalMs: 1,
    tokensIn: 1,
    tokensOut: 1,
    bytesIn: 1,
    bytesOut: 1,
    replayed: false,
    ...over,
  };
}
