// Each rule's settings in force for one host (and model): the defaults below,
// then config's fleet-wide `alerts.rules`, the host's `alerts.rules`, the
// model's `alerts.models.<name>.rules`, field by field (config/alerts-schema.ts
// documents the YAML). Resolved once per config and cached: the engine asks
// for them on every tick of every service.
import { GPU_HOT_WARN_C_DEFAULT } from '../../../src-preload/contract/index.js';
import type { AlertRulesConfig, AlertsConfig, HostAlertsConfig } from '../config/index.js';

interface Common {
  readonly enabled: boolean;
  readonly sustainMs: number;
  readonly clearMs: number;
}

export interface RuleSettings {
  readonly throughput: Common & { warnBelowPct: number; criticalBelowPct: number; windowMs: number; busyMs: number; bandFactor: number };
  readonly kv_cache: Common & { thresholdPct: number };
  readonly waiting_growing: Common & { windowMs: number };
  readonly host_stale: Common;
  readonly service_down: Common;
  readonly error_rate: Common & { thresholdPct: number; criticalPct: number; minAnswers: number };
  readonly hanging_requests: Common & { inFlightMs: number; silentMs: number };
  readonly ttft_slow: Common & { targetsMs: { interactive?: number; system?: number; batch?: number }; minRequests: number };
  readonly queue_wait: Common & { sharePct: number; minRequests: number };
  readonly gpu_hot: Common & { warnC: number; criticalC: number | null };
  readonly tunnel_flapping: Common & { reconnects: number; windowMs: number };
}
export type RuleName = keyof RuleSettings;

const on = (sustainMs: number, clearMs: number): Common => ({ enabled: true, sustainMs, clearMs });

/**
 * Defaults. The degradation window (busyMs of traffic within windowMs) is its
 * own sustain: a verdict over 60 busy seconds is already sustained, so the
 * rule raises as soon as it is reached.
 */
export const DEFAULT_RULE_SETTINGS: RuleSettings = {
  throughput: { ...on(0, 30_000), warnBelowPct: 30, criticalBelowPct: 50, windowMs: 300_000, busyMs: 60_000, bandFactor: 2 },
  kv_cache: { ...on(60_000, 30_000), thresholdPct: 95 },
  waiting_growing: { ...on(60_000, 30_000), windowMs: 60_000 },
  host_stale: on(30_000, 30_000),
  service_down: on(15_000, 10_000),
  error_rate: { ...on(60_000, 60_000), thresholdPct: 5, criticalPct: 25, minAnswers: 20 },
  hanging_requests: { ...on(0, 30_000), inFlightMs: 120_000, silentMs: 60_000 },
  ttft_slow: { ...on(60_000, 60_000), targetsMs: { interactive: 10_000 }, minRequests: 10 },
  queue_wait: { ...on(30_000, 60_000), sharePct: 50, minRequests: 5 },
  gpu_hot: { ...on(60_000, 60_000), warnC: GPU_HOT_WARN_C_DEFAULT, criticalC: null },
  tunnel_flapping: { ...on(0, 60_000), reconnects: 3, windowMs: 600_000 },
};

function over(base: RuleSettings, layer: AlertRulesConfig | undefined): RuleSettings {
  if (layer === undefined) return base;
  const out: Record<string, unknown> = { ...base };
  for (const [name, fields] of Object.entries(layer)) {
    if (fields === undefined) continue;
    const prev = base[name as RuleName] as unknown as Record<string, unknown>;
    const merged: Record<string, unknown> = { ...prev, ...fields };
    // Targets per class merge too: a model that sets interactive keeps the fleet's batch target.
    if ('targetsMs' in fields) merged.targetsMs = { ...(prev.targetsMs as object), ...(fields as { targetsMs?: object }).targetsMs };
    out[name] = merged;
  }
  return out as unknown as RuleSettings;
}

/** Legacy engine thresholds (constructor's AlertThresholds) as the bottom layer, under config. */
export interface LegacyThresholds {
  warnBelowFraction: number;
  criticalBelowFraction: number;
  kvCachePct: number;
  sustainMs: number;
  clearMs: number;
  waitingWindowMs: number;
  staleAfterMs: number;
}

/** The engine's constructor thresholds: the legacy ones and how long a health finding must be seen. */
export interface AlertThresholds extends LegacyThresholds {
  /** A low disk or an unknown GPU process must be seen this long before it is raised. */
  healthSustainMs: number;
}

export function baseRuleSettings(t: LegacyThresholds): RuleSettings {
  const d = DEFAULT_RULE_SETTINGS;
  return {
    ...d,
    // The degradation rule's sustain is its busy window: the same 60 s by default, seconds in tests that shorten sustainMs.
    throughput: { ...d.throughput, clearMs: t.clearMs, busyMs: t.sustainMs, warnBelowPct: t.warnBelowFraction * 100, criticalBelowPct: t.criticalBelowFraction * 100 },
    kv_cache: { ...d.kv_cache, sustainMs: t.sustainMs, clearMs: t.clearMs, thresholdPct: t.kvCachePct },
    waiting_growing: { ...d.waiting_growing, sustainMs: t.sustainMs, clearMs: t.clearMs, windowMs: t.waitingWindowMs },
    host_stale: { ...d.host_stale, sustainMs: t.staleAfterMs, clearMs: t.clearMs },
  };
}

/** Resolves (and caches) a host's and its models' rule settings. */
export class RuleResolver {
  private readonly cache = new Map<string, RuleSettings>();
  constructor(
    private readonly base: RuleSettings,
    private readonly fleet: AlertsConfig | undefined,
    private readonly hostOf: (label: string) => HostAlertsConfig | undefined,
  ) {}

  of(host: string, model: string | null): RuleSettings {
    const key = `${host}\u0000${model ?? ''}`;
    let r = this.cache.get(key);
    if (r === undefined) {
      r = over(over(this.base, this.fleet?.rules), this.hostOf(host)?.rules);
      if (model !== null) r = over(r, this.modelRules(model));
      this.cache.set(key, r);
    }
    return r;
  }

  private modelRules(model: string): AlertRulesConfig | undefined {
    const m = model.toLowerCase();
    const entry = Object.entries(this.fleet?.models ?? {}).find(([name]) => name.toLowerCase() === m);
    return entry?.[1].rules;
  }
}
