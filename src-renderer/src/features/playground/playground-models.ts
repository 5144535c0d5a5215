// The names the playground offers: every model and group the proxy routes,
// each with whether a request could be answered now (a model whose replicas
// all sleep is marked, and main refuses it at once, coded).
import { asleepReplicas, type ModelRouteView, type UpstreamFigures, type UpstreamState } from '../../../../src-preload/contract/index.js';

export interface ModelChoice {
  name: string;
  kind: 'model' | 'group';
  /** Every replica that could answer is asleep. */
  asleep: boolean;
}

export function modelChoices(models: readonly ModelRouteView[], upstreams: readonly UpstreamFigures[]): ModelChoice[] {
  const state = new Map<string, UpstreamState>(upstreams.map((u) => [u.upstream, u.state]));
  return models.map((m) => {
    return { name: m.name, kind: m.kind, asleep: asleepReplicas(m.replicas, (r) => state.get(r)).length > 0 };
  });
}
