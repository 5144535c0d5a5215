// Rules judged per service, each from one tick: what hurts the users of a
// model server. Every rule reads only its own figure; a figure the tick does
// not have (the proxy has no error window yet, the server has no KV gauge, the
// host is not connected) is 'unknown' — it raises nothing and clears nothing.
import type { AlertSeverity } from '../../../../src-preload/contract/index.js';
import type { HostAlertTick, ProxyClassTick, ServiceTick } from '../alert-tick.js';
import type { RuleSettings } from '../rule-settings.js';
import type { Subject, RuleVerdict } from '../tracks.js';

/** One rule's verdict on one subject, and the point of its figure for the alert's series. */
export interface Finding {
  subject: Subject;
  verdict: RuleVerdict;
  sustainMs: number;
  clearMs: number;
  windowMs: number | null;
  point?: { unit: string; value: number | null };
}

const fmt = (x: number, digits = 1): string => x.toFixed(digits);

export function kvCacheFinding(subject: Subject, s: ServiceTick, r: RuleSettings['kv_cache']): Finding {
  const base = { subject, sustainMs: r.sustainMs, clearMs: r.clearMs, windowMs: null, point: { unit: '% KV cache', value: s.kvCachePct } };
  if (!r.enabled) return { ...base, verdict: null };
  if (s.kvCachePct === null) return { ...base, verdict: 'unknown' };
  if (s.kvCachePct <= r.thresholdPct) return { ...base, verdict: null };
  return {
    ...base,
    verdict: { severity: 'warning', model: s.model, value: s.kvCachePct, threshold: r.thresholdPct, message: `KV cache ${fmt(s.kvCachePct)}% full (above ${r.thresholdPct}%)` },
  };
}

/** Waiting requests of one service over its window: growing, never drained to 0 in between. */
export class WaitingHistory {
  private readonly points: { at: number; waiting: number }[] = [];

  finding(subject: Subject, s: ServiceTick, now: number, r: RuleSettings['waiting_growing']): Finding {
    const base = { subject, sustainMs: r.sustainMs, clearMs: r.clearMs, windowMs: r.windowMs, point: { unit: 'requests waiting', value: s.waiting } };
    if (s.waiting === null) return { ...base, verdict: 'unknown' };
    const hist = this.points;
    hist.push({ at: now, waiting: s.waiting });
    while (hist.length > 2 && hist[1]!.at <= now - r.windowMs) hist.shift();
    if (!r.enabled) return { ...base, verdict: null };
    const first = hist[0]!;
    if (now - first.at < r.windowMs) return { ...base, verdict: null };
    if (hist.some((p) => p.waiting <= 0) || s.waiting <= first.waiting) return { ...base, verdict: null };
    return {
      ...base,
      verdict: {
        severity: 'warning',
        model: s.model,
        value: s.waiting,
        threshold: first.waiting,
        message: `waiting requests grew from ${first.waiting} to ${s.waiting} over ${Math.round((now - first.at) / 1000)} s`,
      },
    };
  }
}

/**
 * The server's health fails while its host's SSH session is up (a host that is down is host_stale's).
 * Not raised while a lifecycle action drains it (the engine holds what a drain does; alert-engine.ts):
 * a restart that fails ends its drain, and then the server down pages.
 */
export function serviceDownFinding(subject: Subject, host: HostAlertTick, s: ServiceTick, r: RuleSettings['service_down']): Finding {
  const base = { subject, sustainMs: r.sustainMs, clearMs: r.clearMs, windowMs: null };
  if (!r.enabled) return { ...base, verdict: null };
  if (host.session !== 'connected' || s.health === undefined || s.health === 'unknown') return { ...base, verdict: 'unknown' };
  if (s.health !== 'down' || s.asleep === true) return { ...base, verdict: null };
  return {
    ...base,
    verdict: { severity: 'critical', model: s.model, value: null, threshold: null, message: `${s.model ?? s.serviceId} on ${host.host} does not answer (health down) while the host is connected` },
  };
}

/** Share of answers that failed on the server's side, over the proxy's window. */
export function errorRateFinding(subject: Subject, s: ServiceTick, r: RuleSettings['error_rate']): Finding {
  const e = s.proxy?.errors;
  const rate = e === undefined || e.answered === 0 ? null : (e.failed / e.answered) * 100;
  const base = { subject, sustainMs: r.sustainMs, clearMs: r.clearMs, windowMs: e?.windowMs ?? null, point: { unit: '% failed answers', value: rate } };
  if (!r.enabled) return { ...base, verdict: null };
  if (e === undefined) return { ...base, verdict: 'unknown' };
  // A handful of requests never pages: below minAnswers the share says nothing.
  if (rate === null || e.answered < r.minAnswers) return { ...base, verdict: null };
  const severity: AlertSeverity | null = rate >= r.criticalPct ? 'critical' : rate >= r.thresholdPct ? 'warning' : null;
  if (severity === null) return { ...base, verdict: null };
  const min = Math.round(e.windowMs / 60_000);
  return {
    ...base,
    verdict: {
      severity,
      model: s.model,
      value: Math.round(rate * 10) / 10,
      threshold: severity === 'critical' ? r.criticalPct : r.thresholdPct,
      message: `${fmt(rate)}% of answers failed at the proxy over ${min} min (${e.failed} of ${e.answered}; above ${severity === 'critical' ? r.criticalPct : r.thresholdPct}%)`,
    },
  };
}

/** Requests in flight too long with no byte from the server for too long. */
export function hangingFinding(subject: Subject, s: ServiceTick, r: RuleSettings['hanging_requests']): Finding {
  const stalled = s.proxy?.stalled;
  const hung = stalled?.filter((x) => x.inFlightMs >= r.inFlightMs && x.sinceByteMs >= r.silentMs) ?? null;
  const base = { subject, sustainMs: r.sustainMs, clearMs: r.clearMs, windowMs: null, point: { unit: 'hung requests', value: hung?.length ?? null } };
  if (!r.enabled) return { ...base, verdict: null };
  if (hung === null) return { ...base, verdict: 'unknown' };
  if (hung.length === 0) return { ...base, verdict: null };
  const longest = Math.max(...hung.map((x) => x.sinceByteMs));
  return {
    ...base,
    verdict: {
      severity: 'warning',
      model: s.model,
      value: hung.length,
      threshold: 1,
      message: `${hung.length} request${hung.length === 1 ? '' : 's'} in flight over ${Math.round(r.inFlightMs / 1000)} s with no byte for ${Math.round(r.silentMs / 1000)} s or more (longest silence ${Math.round(longest / 1000)} s)`,
    },
  };
}

const enoughAnswers = (c: ProxyClassTick, min: number): boolean => c.requestsPerS * 60 >= min;

/** TTFT p95 of each class over its target, with enough answers in the minute behind it. */
export function ttftFindings(subjectOf: (part: string) => Subject, s: ServiceTick, r: RuleSettings['ttft_slow']): Finding[] {
  const out: Finding[] = [];
  for (const c of s.proxy?.classes ?? []) {
    const target = r.targetsMs[c.class];
    if (target === undefined) continue;
    const value = c.ttftP95Ms === null ? null : c.ttftP95Ms / 1000;
    const base = { subject: subjectOf(c.class), sustainMs: r.sustainMs, clearMs: r.clearMs, windowMs: 60_000, point: { unit: 's TTFT p95', value } };
    if (!r.enabled) out.push({ ...base, verdict: null });
    else if (value === null || !enoughAnswers(c, r.minRequests)) out.push({ ...base, verdict: 'unknown' });
    else if (c.ttftP95Ms! <= target) out.push({ ...base, verdict: null });
    else {
      const message = `${c.class} time to first token p95 ${fmt(value)} s over its target ${fmt(target / 1000)} s (${s.model ?? s.serviceId}, last minute)`;
      out.push({ ...base, verdict: { severity: 'warning', model: s.model, value: Math.round(value * 100) / 100, threshold: target / 1000, message } });
    }
  }
  return out;
}

/** Queue wait p95 of each class above a share of its hold budget: clients are about to be refused. */
export function queueWaitFindings(subjectOf: (part: string) => Subject, s: ServiceTick, r: RuleSettings['queue_wait']): Finding[] {
  const out: Finding[] = [];
  for (const c of s.proxy?.classes ?? []) {
    const value = c.waitP95Ms === null ? null : c.waitP95Ms / 1000;
    const base = { subject: subjectOf(c.class), sustainMs: r.sustainMs, clearMs: r.clearMs, windowMs: 60_000, point: { unit: 's queue wait p95', value } };
    if (!r.enabled) out.push({ ...base, verdict: null });
    else if (c.holdBudgetMs === undefined || c.holdBudgetMs <= 0 || value === null || !enoughAnswers(c, r.minRequests)) out.push({ ...base, verdict: 'unknown' });
    else if (c.waitP95Ms! < (c.holdBudgetMs * r.sharePct) / 100) out.push({ ...base, verdict: null });
    else {
      const limit = (c.holdBudgetMs * r.sharePct) / 100000;
      const message = `${c.class} queue wait p95 ${fmt(value)} s is ${Math.round((c.waitP95Ms! / c.holdBudgetMs) * 100)}% of its ${fmt(c.holdBudgetMs / 1000)} s hold budget (alert at ${r.sharePct}%)`;
      out.push({ ...base, verdict: { severity: 'warning', model: s.model, value: Math.round(value * 100) / 100, threshold: Math.round(limit * 100) / 100, message } });
    }
  }
  return out;
}
