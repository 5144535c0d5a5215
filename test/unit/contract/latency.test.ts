import { describe, expect, it } from 'vitest';
import { chooseLatency, latencySeries, NO_LATENCY, PROXY_LATENCY_LABEL } from '../../../src-preload/contract/latency.js';

// Issue #27 finding 8: llama-server keeps no latency histograms, so its host
// view said "No data yet — no request has finished on this host" after dozens
// had. One function decides which latency a service shows: the server's, else
// the proxy's (labelled), else none with the real reason.

const server = { ttftP50S: 0.12, ttftP95S: 0.4, e2eP50S: 2.1, e2eP95S: 4.5 };
const proxy = { ttftP50S: 0.2, ttftP95S: 0.55, e2eP50S: 2.4, e2eP95S: 5.1 };

describe('chooseLatency', () => {
  it("the server's histograms when it has any figure", () => {
    expect(chooseLatency('vllm', server, proxy)).toMatchObject({ ...server, basis: 'server', label: 'vLLM histograms' });
    // one known figure is enough: the others stay unknown, never the proxy's mixed in
    expect(chooseLatency('vllm', { ...NO_LATENCY, e2eP95S: 3 }, proxy)).toMatchObject({ ...NO_LATENCY, e2eP95S: 3, basis: 'server' });
  });

  it('llama-server: the proxy\'s figures, labelled "measured at the proxy", saying why and how', () => {
    const c = chooseLatency('llama-server', NO_LATENCY, proxy);
    expect(c).toMatchObject({ ...proxy, basis: 'proxy', label: PROXY_LATENCY_LABEL });
    expect(PROXY_LATENCY_LABEL).toBe('measured at the proxy');
    expect(c.detail).toBe("llama-server keeps no latency histograms: measured at the console's proxy in the last minute, from each request's arrival (queue wait included); TTFT from streamed answers only");
  });

  it('neither: every figure unknown (never 0) and the real reason, in the span asked for', () => {
    expect(chooseLatency('llama-server', NO_LATENCY, NO_LATENCY, 'in this range')).toEqual({
      ...NO_LATENCY,
      basis: null,
      label: null,
      detail: "llama-server has no latency histograms, and no request went through the console's proxy in this range",
    });
    expect(chooseLatency('vllm', NO_LATENCY, NO_LATENCY).detail).toBe("no request finished on vLLM in the last minute, and no request went through the console's proxy in the last minute");
    expect(chooseLatency(null, NO_LATENCY, proxy).detail).toMatch(/^the server reported no latency/);
  });

  it('kind openai: the proxy figures, saying the server exports none; SGLang and TEI named when they report nothing', () => {
    expect(chooseLatency('openai', NO_LATENCY, proxy)).toMatchObject({
      ...proxy,
      basis: 'proxy',
      label: 'measured at the proxy',
      detail: expect.stringMatching(/^an OpenAI-compatible server \(kind openai\) exports no figures the console reads: measured at the console's proxy/),
    });
    expect(chooseLatency('openai', NO_LATENCY, NO_LATENCY).detail).toBe(
      "an OpenAI-compatible server (kind openai) exports no figures the console reads, and no request went through the console's proxy in the last minute",
    );
    expect(chooseLatency('sglang', server, proxy)).toMatchObject({ basis: 'server', label: 'SGLang histograms' });
    expect(chooseLatency('tei', NO_LATENCY, NO_LATENCY).detail).toMatch(/^no request finished on TEI in the last minute/);
  });

  it('names the series each side is read from', () => {
    expect(latencySeries('coder')).toEqual({
      server: { ttftP50S: 'svc.coder.ttft_p50_s', ttftP95S: 'svc.coder.ttft_p95_s', e2eP50S: 'svc.coder.e2e_p50_s', e2eP95S: 'svc.coder.e2e_p95_s' },
      proxy: { ttftP50S: 'svc.coder.proxy_ttft_p50_s', ttftP95S: 'svc.coder.proxy_ttft_p95_s', e2eP50S: 'svc.coder.proxy_e2e_p50_s', e2eP95S: 'svc.coder.proxy_e2e_p95_s' },
    });
  });
});
