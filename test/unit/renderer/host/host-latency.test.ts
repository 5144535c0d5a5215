import { describe, expect, it } from 'vitest';
import { HOST_PANELS, emptyReason, seriesLabel, type Point } from '../../../../src-renderer/src/features/host/host-panels.js';
import { latencyPanelView } from '../../../../src-renderer/src/features/host/host-latency.js';
import { legendEntries } from '../../../../src-renderer/src/features/host/panel-option.js';

// Issue #27 finding 8 in the host view's latency chart: a llama-server host
// said "No data yet — no request has finished on this host since the console
// started" after dozens had, because llama-server keeps no histograms. Per
// service the chart draws the server's lines, else the proxy's (labelled
// "measured at the proxy"), else says why there are none.

const latency = HOST_PANELS.find((p) => p.id === 'latency')!;
const T = 1_700_000_000_000;
const palette = ['#a00', '#0a0', '#00a'];
const line = (...values: (number | null)[]): Point[] => values.map((v, i) => [T + i * 1_000, v]);
const nulls = () => line(null, null, null);

/** What telemetry records for a llama-server `coder` with proxy traffic: null server lines, known proxy lines. */
function llamaLines(proxyKnown: boolean): Map<string, Point[]> {
  const m = new Map<string, Point[]>();
  for (const k of ['ttft_p50_s', 'ttft_p95_s', 'e2e_p50_s', 'e2e_p95_s']) m.set(`svc.coder.${k}`, nulls());
  for (const [k, v] of [['proxy_ttft_p50_s', 0.21], ['proxy_ttft_p95_s', 0.5], ['proxy_e2e_p50_s', 2.4], ['proxy_e2e_p95_s', 5.2]] as const) {
    m.set(`svc.coder.${k}`, proxyKnown ? line(null, v, v) : nulls());
  }
  return m;
}

describe('the latency chart of a host', () => {
  it("takes the proxy's series, which it did not before", () => {
    expect(latency.match('svc.coder.proxy_ttft_p95_s')).toBe(true);
    expect(latency.match('svc.coder.proxy_e2e_p50_s')).toBe(true);
    // the per-class queue figures stay in their own panel
    expect(latency.match('svc.coder.proxy_interactive_ttft_p95_s')).toBe(false);
    expect(seriesLabel('svc.coder.proxy_ttft_p95_s')).toBe('coder TTFT p95 (measured at the proxy)');
    expect(seriesLabel('svc.coder.proxy_e2e_p50_s')).toBe('coder E2E p50 (measured at the proxy)');
  });

  it('llama-server with proxy traffic: draws the proxy lines, labelled, and says so', () => {
    const v = latencyPanelView(llamaLines(true), { coder: 'llama-server' });
    expect(v.reason).toBeNull();
    expect(v.notes).toEqual(['coder: measured at the proxy']);
    expect(legendEntries(latency, v.lines, palette).map((e) => e.name)).toEqual([
      'coder E2E p50 (measured at the proxy)',
      'coder E2E p95 (measured at the proxy)',
      'coder TTFT p50 (measured at the proxy)',
      'coder TTFT p95 (measured at the proxy)',
    ]);
    // the server's (empty) lines stay as series with no points, so the chart's series ids do not move
    expect(v.lines.get('svc.coder.ttft_p95_s')).toEqual([]);
    expect(emptyReason(latency, v.lines)).toBeNull();
  });

  it('neither: the real reason, not "no request has finished"', () => {
    const v = latencyPanelView(llamaLines(false), { coder: 'llama-server' });
    expect(v.reason).toBe("No data — llama-server has no latency histograms, and no request went through the console's proxy in this range.");
    const two = latencyPanelView(new Map([...llamaLines(false), ['svc.qwen.ttft_p95_s', nulls()]]), { coder: 'llama-server', qwen: 'vllm' });
    expect(two.reason).toBe(
      "No data — coder: llama-server has no latency histograms, and no request went through the console's proxy in this range; qwen: no request finished on vLLM in this range, and no request went through the console's proxy in this range.",
    );
  });

  it("vLLM with its own histograms: the server's lines, the proxy's left out", () => {
    const lines = new Map<string, Point[]>([
      ['svc.qwen.ttft_p95_s', line(0.3, 0.4, null)],
      ['svc.qwen.proxy_ttft_p95_s', line(0.5, 0.6, 0.7)],
    ]);
    const v = latencyPanelView(lines, { qwen: 'vllm' });
    expect(v.notes).toEqual([]);
    expect(legendEntries(latency, v.lines, palette).map((e) => e.name)).toEqual(['qwen TTFT p95 (≤ bucket bound, interpolated)']);
  });
});
