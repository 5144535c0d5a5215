import { describe, expect, it } from 'vitest';
import { UpstreamLatency } from '../../../../src-main/core/proxy/latency-window.js';
import type { RequestRecord } from '../../../../src-main/core/proxy/request-log.js';
import { proxyValues } from '../../../../src-main/core/telemetry/index.js';
import type { ProxyStats, UpstreamFigures } from '../../../../src-preload/contract/index.js';

// The proxy's own TTFT and end-to-end percentiles per upstream (issue #27
// finding 8): what a llama-server's latency is read from.

const T = 1_700_000_000_000;

function row(over: Partial<RequestRecord>): RequestRecord {
  return {
    id: 'r', ts: T, client: 't', class: 'interactive', endpoint: '/v1/chat/completions', model: 'coder', upstream: 'strix/coder', stream: true,
    status: 200, errorCode: null, queueMs: 0, ttftMs: 100, totalMs: 1_000, tokensIn: 10, tokensOut: 20, bytesIn: 1, bytesOut: 1, replayed: false, ...over,
  };
}

describe('UpstreamLatency', () => {
  it('p50 / p95 of the answers relayed in the last minute; TTFT from streamed answers only', () => {
    const w = new UpstreamLatency();
    for (let i = 1; i <= 20; i++) w.record(row({ ts: T + i * 1_000, ttftMs: i * 10, totalMs: i * 100 }));
    // a whole JSON answer: its first byte is its end, so no TTFT from it
    w.record(row({ ts: T + 21_000, stream: false, ttftMs: 5_000, totalMs: 5_000 }));
    expect(w.figures('strix/coder', T + 30_000)).toEqual({ ttftP50Ms: 100, ttftP95Ms: 190, e2eP50Ms: 1_100, e2eP95Ms: 2_000, requests: 21, streamed: 20 });
  });

  it('leaves out errors, replays, embeddings and model lists; an empty window is unknown, not 0', () => {
    const w = new UpstreamLatency();
    w.record(row({ status: 503 }));
    w.record(row({ status: 499 }));
    w.record(row({ replayed: true }));
    w.record(row({ endpoint: '/v1/embeddings' }));
    w.record(row({ endpoint: '/v1/models' }));
    w.record(row({ upstream: null }));
    const none = { ttftP50Ms: null, ttftP95Ms: null, e2eP50Ms: null, e2eP95Ms: null, requests: 0, streamed: 0 };
    expect(w.figures('strix/coder', T + 2_000)).toEqual(none);
    w.record(row({ ts: T }));
    expect(w.figures('strix/coder', T + 2_000).requests).toBe(1);
    // a minute after it ended, it is out of the window
    expect(w.figures('strix/coder', T + 1_000 + 60_001)).toEqual(none);
    expect(w.figures('other/x', T)).toEqual(none);
  });

  it('telemetry carries them as svc.<id>.proxy_{ttft,e2e}_p{50,95}_s, in seconds', () => {
    const upstream = {
      upstream: 'strix/coder', label: 'strix', serviceId: 'coder', queued: 0, classes: [],
      latency: { ttftP50Ms: 100, ttftP95Ms: 190, e2eP50Ms: 1_100, e2eP95Ms: 2_000, requests: 21, streamed: 20 },
    } as unknown as UpstreamFigures;
    const values = proxyValues('strix', { upstreams: [upstream] } as unknown as ProxyStats);
    expect(values).toMatchObject({ 'svc.coder.proxy_ttft_p50_s': 0.1, 'svc.coder.proxy_ttft_p95_s': 0.19, 'svc.coder.proxy_e2e_p50_s': 1.1, 'svc.coder.proxy_e2e_p95_s': 2 });
    const without = proxyValues('strix', { upstreams: [{ ...upstream, latency: undefined }] } as unknown as ProxyStats);
    expect(without['svc.coder.proxy_e2e_p95_s']).toBeNull();
  });
});
