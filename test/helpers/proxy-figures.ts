// Proxy figures for view tests: one upstream's UpstreamFigures with every class present and idle.
import type { UpstreamFigures } from '../../src-preload/contract/index.js';

/** `key` = label/serviceId; idle, 8 slots, weight 1, nothing routed; `extra` overrides any field. */
export function upstreamFigures(key: string, model: string, extra: Partial<UpstreamFigures> = {}): UpstreamFigures {
  const [label, serviceId] = key.split('/') as [string, string];
  return {
    upstream: key,
    label,
    serviceId,
    model,
    aliases: [],
    state: 'ready',
    slots: 8,
    caps: { reservedInteractive: 2, interactive: 8, system: 6, batch: 3 },
    inFlight: 0,
    queued: 0,
    serviceMsEstimate: null,
    classes: (['interactive', 'system', 'batch'] as const).map((c) => ({
      class: c,
      inFlight: 0,
      queued: 0,
      waitP50Ms: null,
      waitP95Ms: null,
      ttftP50Ms: null,
      ttftP95Ms: null,
      requestsPerS: 0,
      tokensOutPerS: 0,
      completed: 0,
      rejected: 0,
    })),
    weight: 1,
    routed: 0,
    failing: false,
    ...extra,
  };
}
