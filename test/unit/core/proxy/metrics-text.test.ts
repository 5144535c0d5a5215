import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { ProxyStats } from '../../../../src-preload/contract/index.js';
import { createOffPremCounter } from '../../../../src-main/core/base/index.js';
import { renderProxyMetrics } from '../../../../src-main/core/proxy/metrics-text.js';
import { parsePrometheusText } from '../../../../src-main/core/telemetry/index.js';

// The off-prem family of the proxy's /metrics: always there, every purpose, 0 when none
// was refused; and the page still passes Prometheus's own linter (Debian package `prometheus`).

const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const havePromtool = promtool.status === 0;
if (!havePromtool) console.warn('metrics-text: promtool not found (apt-get install prometheus), skipping the promtool check');

const stats: ProxyStats = { at: 0, url: null, answered: 0, inFlight: 0, queued: 0, upstreams: [] };
/** One upstream with quantiles, as the proxy snapshots it (only the fields the exposition reads). */
const full: ProxyStats = {
  ...stats,
  upstreams: [
    {
      upstream: 'l20/vllm',
      slots: 4,
      classes: [{ class: 'interactive', inFlight: 1, queued: 2, waitP50Ms: 10, waitP95Ms: 40, ttftP50Ms: 120, ttftP95Ms: 300 }],
    } as unknown as ProxyStats['upstreams'][number],
  ],
};
const FAMILY = 'gpu_console_offprem_calls_total';

function offPremSamples(text: string): Record<string, number> {
  const parsed = parsePrometheusText(text);
  expect(parsed.errors).toBe(0);
  const family = parsed.families.find((f) => f.name === FAMILY);
  expect(family, FAMILY).toBeDefined();
  return Object.fromEntries(family!.samples.map((s) => [s.labels['purpose'], s.value]));
}

describe('renderProxyMetrics: gpu_console_offprem_calls_total', () => {
  it('is a counter with all three purposes at 0 when no counts are passed', () => {
    const text = renderProxyMetrics(stats, new Map());
    expect(text).toContain(`# TYPE ${FAMILY} counter`);
    expect(text).toContain(`# HELP ${FAMILY} `);
    expect(offPremSamples(text)).toEqual({ proxy: 0, lifecycle: 0, probe: 0 });
  });

  it("prints a counter's refusals per purpose", () => {
    const counter = createOffPremCounter();
    counter.check('http://10.0.0.1:8000/v1/chat/completions', 'proxy');
    counter.check('http://10.0.0.1:8000/v1/chat/completions', 'proxy');
    counter.check('http://router.example.com/admin', 'lifecycle');
    counter.check('http://127.0.0.1:41000/v1/models', 'probe');
    const text = renderProxyMetrics(stats, new Map(), new Map(), counter.counts());
    expect(text).toContain(`${FAMILY}{purpose="proxy"} 2\n`);
    expect(offPremSamples(text)).toEqual({ proxy: 2, lifecycle: 1, probe: 0 });
  });

  it('types the quantile families summary (a quantile label on a gauge fails the linter)', () => {
    const text = renderProxyMetrics(full, new Map());
    expect(text).toContain('# TYPE gpu_console_proxy_queue_wait_seconds summary');
    expect(text).toContain('# TYPE gpu_console_proxy_ttft_seconds summary');
    expect(text).toContain('gpu_console_proxy_ttft_seconds{upstream="l20/vllm",class="interactive",quantile="0.95"} 0.3');
  });

  it.skipIf(!havePromtool)('passes `promtool check metrics` with upstreams, quantiles, unstored answers and refusals', () => {
    const refusals = new Map([['l20/vllm|tunnel_down|false', 4], ['l20/vllm|tunnel_down|true', 1], ['l20/vllm|queue_full|false', 2]]);
    const text = renderProxyMetrics(full, new Map([['l20/vllm|interactive|200', 3]]), new Map([['chat|invalid_token', 1]]), { proxy: 1, lifecycle: 0, probe: 2 }, { refusals });
    expect(text).toContain('gpu_console_proxy_refusals_total{upstream="l20/vllm",code="tunnel_down",held="false"} 4');
    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(check.stdout + check.stderr).toBe('');
    expect(check.status).toBe(0);
  });
});
