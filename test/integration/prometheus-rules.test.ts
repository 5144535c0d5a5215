import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEFAULT_ALERT_THRESHOLDS, DEFAULT_HOST_ALERT_SETTINGS, DEFAULT_RULE_SETTINGS } from '../../src-main/core/alerts/index.js';
import { CLASS_ORDER } from '../../src-main/core/proxy/classes.js';
import { renderProxyMetrics } from '../../src-main/core/proxy/metrics-text.js';
import { renderFleetExposition } from '../../src-main/core/telemetry/index.js';

// The console's alert rules as Prometheus alerting rules (resources/prometheus/):
// Prometheus's own tool accepts them (`promtool check rules`) and their unit
// tests pass (`promtool test rules`: a firing and a quiet case per rule), and
// every series they — and their tests — read is one the console's /metrics
// writes, so renaming a family fails here rather than in someone's pager.

const DIR = join(import.meta.dirname, '../../resources/prometheus');
const RULES = 'gpu-console-alerts.rules.yml';
const TESTS = 'gpu-console-alerts.test.yml';
const BASELINES = 'gpu-console-baselines.example.rules.yml';

const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const havePromtool = promtool.status === 0;
if (!havePromtool) console.warn('prometheus-rules: promtool not found (Debian package `prometheus`, installed by .ci/run): the check and test of the rules are SKIPPED, not passed');

function promtoolRun(args: string[]): { status: number | null; output: string } {
  const r = spawnSync('promtool', args, { cwd: DIR, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/**
 * Every family name /metrics can write: the `# TYPE` lines of the proxy's and the fleet's
 * expositions, which name each family even when it has no sample.
 */
function exportedFamilies(): Set<string> {
  const holdBudgetMs = Object.fromEntries(CLASS_ORDER.map((c) => [c, 1000])) as Record<(typeof CLASS_ORDER)[number], number>;
  const text =
    renderProxyMetrics({ at: 0, url: null, answered: 0, inFlight: 0, queued: 0, upstreams: [] }, new Map(), new Map(), {}, { holdBudgetMs, inFlight: new Map() }) +
    renderFleetExposition({ at: 0, hosts: [] });
  return new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
}

interface RuleFile {
  groups: { name: string; rules: { alert?: string; record?: string; expr: string; labels?: Record<string, string>; annotations?: Record<string, string>; for?: string }[] }[];
}

const rules = parse(readFileSync(join(DIR, RULES), 'utf8')) as RuleFile;
const allRules = rules.groups.flatMap((g) => g.rules);
/** Series names in a PromQL expression: the console's (gpu_console_…), recorded ones (gpu_console:…) and Prometheus's `up`. */
const seriesIn = (expr: string): string[] => [...expr.matchAll(/\b(gpu_console[a-z0-9_:]*|up)\b(?=\s*[{[)\s]|$)/g)].map((m) => m[1]!);
/** Recorded series the team provides (documented in the rules file and the baselines example). */
const PROVIDED = new Set(['gpu_console:baseline_per_sequence_tokens_per_second']);

describe('Prometheus alerting rules (resources/prometheus)', () => {
  it.skipIf(!havePromtool)('pass `promtool check rules` (the rules and the baselines example)', () => {
    const r = promtoolRun(['check', 'rules', RULES, BASELINES]);
    console.info(`promtool check rules: exit ${r.status}: ${r.output.trim().replace(/\n/g, ' | ')}`);
    expect(r.output).toContain('SUCCESS');
    expect(r.output).not.toMatch(/FAILED|warning/i);
    expect(r.status).toBe(0);
  });

  it.skipIf(!havePromtool)('pass their unit tests: `promtool test rules`', () => {
    const r = promtoolRun(['test', 'rules', TESTS]);
    expect(r.output.trim()).toBe(`Unit Testing:  ${TESTS}\n  SUCCESS`);
    expect(r.status).toBe(0);
  });

  it('read only series the console exports (or the ones they record, or the baseline the team records)', () => {
    const exported = exportedFamilies();
    const recorded = new Set(allRules.flatMap((r) => (r.record ? [r.record] : [])));
    const unknown = new Set<string>();
    for (const r of allRules) {
      for (const name of seriesIn(r.expr)) {
        if (name === 'up' || exported.has(name) || recorded.has(name) || PROVIDED.has(name)) continue;
        unknown.add(`${r.alert ?? r.record}: ${name}`);
      }
    }
    expect([...unknown]).toEqual([]);
    // The names the rules rely on most are really among them (a broken regex above would pass everything).
    for (const name of ['gpu_console_proxy_requests_total', 'gpu_console_proxy_request_silence_seconds', 'gpu_console_service_health', 'gpu_console_host_disk_low']) expect(exported).toContain(name);
    expect(seriesIn(allRules.find((r) => r.alert === 'GpuConsoleHangingRequests')!.expr)).toEqual([
      'gpu_console_proxy_request_silence_seconds',
      'gpu_console_proxy_silent_request_age_seconds',
    ]);
  });

  it("feed their tests only series the console exports, so a test never passes on a name /metrics lacks", () => {
    const exported = exportedFamilies();
    const tests = parse(readFileSync(join(DIR, TESTS), 'utf8')) as { tests: { input_series: { series: string }[] }[] };
    const names = new Set(tests.tests.flatMap((t) => t.input_series.map((s) => /^[^{]+/.exec(s.series)![0])));
    expect([...names].filter((n) => n !== 'up' && !exported.has(n) && !PROVIDED.has(n))).toEqual([]);
  });

  it('give every alert a severity, a summary and description, a sustain where the console has one, and a console route', () => {
    const alerts = allRules.filter((r) => r.alert);
    expect(alerts.map((a) => a.alert).sort()).toEqual(
      [
        'GpuConsoleDiskLow',
        'GpuConsoleErrorRate',
        'GpuConsoleErrorRateCritical',
        'GpuConsoleGpuHot',
        'GpuConsoleGpuHotCritical',
        'GpuConsoleGpuThrottled',
        'GpuConsoleGpuProcessUnknown',
        'GpuConsoleGpuRetirementPending',
        'GpuConsoleGpuEccErrors',
        'GpuConsoleHostRebooted',
        'GpuConsoleHangingRequests',
        'GpuConsoleHostStale',
        'GpuConsoleKvCacheFull',
        'GpuConsoleMetricsDown',
        'GpuConsoleQueueWait',
        'GpuConsoleServiceDown',
        'GpuConsoleThroughputDegraded',
        'GpuConsoleThroughputDegradedCritical',
        'GpuConsoleTtftSlow',
        'GpuConsoleTunnelFlapping',
        'GpuConsoleWaitingGrowing',
      ].sort(),
    );
    for (const a of alerts) {
      expect(['warning', 'critical'], a.alert).toContain(a.labels?.severity);
      expect(a.annotations?.summary, a.alert).toBeTruthy();
      expect(a.annotations?.description, a.alert).toBeTruthy();
      expect(a.annotations?.console_route, a.alert).toMatch(/^hosts(\/|$)/);
    }
  });

  it("keep the console's default thresholds and sustain times (alerts/rule-settings.ts): a changed default fails here", () => {
    const d = DEFAULT_RULE_SETTINGS;
    const h = DEFAULT_HOST_ALERT_SETTINGS;
    const frac = (pct: number) => String(Math.round((1 - pct / 100) * 100) / 100);
    const min = (ms: number) => `${ms / 60_000}m`;
    // Per alert: its `for:` (ms) and the pieces of its expression that carry the console's figures.
    const expected: Record<string, { forMs: number; expr: string[] }> = {
      GpuConsoleServiceDown: { forMs: d.service_down.sustainMs, expr: [] },
      GpuConsoleKvCacheFull: { forMs: d.kv_cache.sustainMs, expr: [`> ${d.kv_cache.thresholdPct / 100}`] },
      GpuConsoleWaitingGrowing: { forMs: d.waiting_growing.sustainMs, expr: [`offset ${min(d.waiting_growing.windowMs)}`, `[${min(d.waiting_growing.windowMs)}]`] },
      GpuConsoleThroughputDegraded: { forMs: d.throughput.sustainMs, expr: [`${frac(d.throughput.warnBelowPct)} * gpu_console:baseline`, `${frac(d.throughput.criticalBelowPct)} * gpu_console:baseline`] },
      GpuConsoleThroughputDegradedCritical: { forMs: d.throughput.sustainMs, expr: [`${frac(d.throughput.criticalBelowPct)} * gpu_console:baseline`] },
      GpuConsoleErrorRate: { forMs: d.error_rate.sustainMs, expr: [`>= ${d.error_rate.thresholdPct} < ${d.error_rate.criticalPct}`, `[${min(300_000)}])) >= ${d.error_rate.minAnswers}`] },
      GpuConsoleErrorRateCritical: { forMs: d.error_rate.sustainMs, expr: [`>= ${d.error_rate.criticalPct}\n`, `>= ${d.error_rate.minAnswers}`] },
      GpuConsoleHangingRequests: { forMs: d.hanging_requests.sustainMs, expr: [`silence_seconds >= ${d.hanging_requests.silentMs / 1000}`, `silent_request_age_seconds >= ${d.hanging_requests.inFlightMs / 1000}`] },
      GpuConsoleTtftSlow: { forMs: d.ttft_slow.sustainMs, expr: [`class="interactive"} > ${d.ttft_slow.targetsMs.interactive! / 1000}`, `>= ${d.ttft_slow.minRequests}`] },
      GpuConsoleQueueWait: { forMs: d.queue_wait.sustainMs, expr: [`${d.queue_wait.sharePct / 100} * gpu_console_proxy_hold_budget_seconds`, `>= ${d.queue_wait.minRequests}`] },
      GpuConsoleGpuHot: { forMs: d.gpu_hot.sustainMs, expr: [`>= ${d.gpu_hot.warnC}`] },
      GpuConsoleGpuHotCritical: { forMs: d.gpu_hot.sustainMs, expr: [] },
      GpuConsoleTunnelFlapping: { forMs: d.tunnel_flapping.sustainMs, expr: [`[${min(d.tunnel_flapping.windowMs)}]) >= ${d.tunnel_flapping.reconnects}`] },
      GpuConsoleHostStale: { forMs: d.host_stale.sustainMs, expr: [] },
      GpuConsoleGpuThrottled: { forMs: h.throttleAfterMs, expr: [] },
      GpuConsoleDiskLow: { forMs: DEFAULT_ALERT_THRESHOLDS.healthSustainMs, expr: [] },
      GpuConsoleGpuProcessUnknown: { forMs: DEFAULT_ALERT_THRESHOLDS.healthSustainMs, expr: [] },
      GpuConsoleGpuEccErrors: { forMs: 0, expr: [`[${min(h.eventHoldMs)}]`] },
      GpuConsoleHostRebooted: { forMs: 0, expr: [`[${min(h.eventHoldMs)}]`] },
    };
    const forMs = (f: string | undefined): number => {
      if (f === undefined) return 0;
      const m = /^(\d+)(s|m)$/.exec(f);
      expect(m, `for: ${f}`).not.toBeNull();
      return Number(m![1]) * (m![2] === 'm' ? 60_000 : 1000);
    };
    for (const [alert, want] of Object.entries(expected)) {
      const rule = allRules.find((r) => r.alert === alert);
      expect(rule, alert).toBeDefined();
      expect(forMs(rule!.for), `${alert} for:`).toBe(want.forMs);
      for (const piece of want.expr) expect(rule!.expr, alert).toContain(piece);
    }
  });
});
