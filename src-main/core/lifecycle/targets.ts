import { healthPathOf, type Config, type ServiceConfig } from '../config/index.js';
import type { LifecycleDriverName } from '../../../src-preload/contract/index.js';
import { upstreamKey } from '../upstream/index.js';
import type { LifecycleTargetConfig } from './drivers/index.js';
import { restartOf } from './restart-templates.js';

/** Every configured model service with its lifecycle settings filled in. */
export function lifecycleTargets(config: Config): readonly LifecycleTargetConfig[] {
  // Policies ask per upstream on every tick; a config is replaced, never changed, so its targets are built once.
  const known = targetsByConfig.get(config);
  if (known !== undefined) return known;
  const out = buildTargets(config);
  targetsByConfig.set(config, out);
  return out;
}

const targetsByConfig = new WeakMap<Config, readonly LifecycleTargetConfig[]>();

function buildTargets(config: Config): readonly LifecycleTargetConfig[] {
  const out: LifecycleTargetConfig[] = [];
  for (const host of config.hosts) {
    for (const s of host.services) {
      const lc = s.lifecycle;
      const restart = restartOf(s.restartCommand, lc);
      out.push({
        label: host.label,
        serviceId: s.id,
        upstream: upstreamKey(host.label, s.id),
        kind: s.kind,
        model: s.model,
        healthPath: healthPathOf(s),
        remoteHost: s.remoteHost,
        remotePort: s.remotePort,
        driver: lc?.driver ?? defaultDriver(s.kind),
        routerBaseUrl: lc?.routerBaseUrl ?? null,
        restartCommand: restart.template,
        restartSource: restart.source,
        sleepLevel: lc?.sleepLevel ?? 1,
      });
    }
  }
  return out;
}

/**
 * The driver a kind gets when config names none. SGLang, TEI and other OpenAI-compatible servers
 * have no wake/sleep driver: ssh-command restarts them (by command, systemd unit or compose
 * service) and refuses the rest, naming the kind.
 */
export function defaultDriver(kind: ServiceConfig['kind']): LifecycleDriverName {
  switch (kind) {
    case 'vllm':
      return 'vllm-sleep';
    case 'llama-server':
      return 'llama-server';
    case 'sglang':
    case 'tei':
    case 'openai':
      return 'ssh-command';
  }
}

export interface PolicySettings {
  idleSleepMinutes: number;
  idleOffloadMinutes: number;
  stuckSeconds: number;
  healthFailures: number;
  wakeOnDemand: boolean;
}

export const DEFAULT_POLICY: PolicySettings = { idleSleepMinutes: 15, idleOffloadMinutes: 180, stuckSeconds: 120, healthFailures: 5, wakeOnDemand: true };

export function policySettings(config: Config, upstream: string): PolicySettings {
  const [label, id] = upstream.split('/');
  const s = config.hosts.find((h) => h.label === label)?.services.find((x) => x.id === id);
  const lc = s?.lifecycle;
  if (!lc) return DEFAULT_POLICY;
  return {
    idleSleepMinutes: lc.idleSleepMinutes,
    idleOffloadMinutes: lc.idleOffloadMinutes,
    stuckSeconds: lc.stuckSeconds,
    healthFailures: lc.healthFailures,
    wakeOnDemand: lc.wakeOnDemand,
  };
}
