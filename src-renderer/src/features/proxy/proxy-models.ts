// The Models section's view model: each name clients request, its replicas with
// their state and where the proxy's requests went, and a group's fallback chain.
// Pure (no JSX) so it is tested in plain Node.
import type { ModelRouteView, UpstreamFigures, UpstreamState } from '../../../../src-preload/contract/index.js';

export interface ReplicaView {
  /** `label/serviceId`. */
  readonly key: string;
  readonly label: string;
  readonly serviceId: string;
  /** False when the proxy listed the replica but sent no figures for it: every figure below is unknown. */
  readonly known: boolean;
  readonly state: UpstreamState | null;
  readonly failing: boolean;
  readonly weight: number | null;
  /** weight ÷ the model's summed weights, 0–100; null when unknown. */
  readonly weightSharePct: number | null;
  readonly inFlight: number | null;
  readonly slots: number | null;
  readonly queued: number | null;
  readonly routed: number | null;
  /** routed ÷ the model's summed routed, 0–100; null before the model's first request. */
  readonly routedSharePct: number | null;
}

export interface ChainStepView {
  readonly model: string;
  readonly replicas: number;
  /** Replicas that are ready and not failing: the ones this step would use first. */
  readonly usable: number;
}

export interface ModelRowView {
  readonly name: string;
  readonly kind: ModelRouteView['kind'];
  readonly aliases: readonly string[];
  /** A plain model's replicas; empty for a group (its models have their own rows). */
  readonly replicas: readonly ReplicaView[];
  /** The replicas' weights are not all equal, so the weight share means something. */
  readonly weighted: boolean;
  /** Requests the model's replicas got since start; null when the proxy does not count them. */
  readonly routedTotal: number | null;
  /** A group's models in fallback order; empty for a plain model. */
  readonly chain: readonly ChainStepView[];
}

export interface ModelsView {
  readonly rows: readonly ModelRowView[];
  readonly failovers: number | null;
  /** Some model has unequal weights: the weight column is worth its room. */
  readonly anyWeighted: boolean;
}

/** Config default when the proxy sends no weight (`proxy.upstreams.<key>.weight`). */
const DEFAULT_WEIGHT = 1;

function splitKey(key: string): { label: string; serviceId: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { label: key, serviceId: '' } : { label: key.slice(0, slash), serviceId: key.slice(slash + 1) };
}

function sharePct(part: number | null, total: number): number | null {
  return part === null || total <= 0 ? null : (part / total) * 100;
}

function replicaViews(keys: readonly string[], figures: ReadonlyMap<string, UpstreamFigures>): { replicas: ReplicaView[]; weighted: boolean; routedTotal: number | null } {
  const found = keys.map((key) => ({ key, u: figures.get(key) }));
  const weights = found.flatMap(({ u }) => (u ? [u.weight ?? DEFAULT_WEIGHT] : []));
  const weightSum = weights.reduce((a, b) => a + b, 0);
  const weighted = weights.some((w) => w !== weights[0]);
  const counted = found.flatMap(({ u }) => (u?.routed === undefined ? [] : [u.routed]));
  const routedTotal = counted.length === 0 ? null : counted.reduce((a, b) => a + b, 0);
  const replicas = found.map(({ key, u }): ReplicaView => {
    const names = u ? { label: u.label, serviceId: u.serviceId } : splitKey(key);
    if (!u) {
      return { key, ...names, known: false, state: null, failing: false, weight: null, weightSharePct: null, inFlight: null, slots: null, queued: null, routed: null, routedSharePct: null };
    }
    const weight = u.weight ?? DEFAULT_WEIGHT;
    const routed = u.routed ?? null;
    return {
      key,
      ...names,
      known: true,
      state: u.state,
      failing: u.failing === true,
      weight,
      weightSharePct: sharePct(weight, weightSum),
      inFlight: u.inFlight,
      slots: u.slots,
      queued: u.queued,
      routed,
      routedSharePct: sharePct(routed, routedTotal ?? 0),
    };
  });
  return { replicas, weighted, routedTotal };
}

function chainSteps(route: ModelRouteView, routes: readonly ModelRouteView[], figures: ReadonlyMap<string, UpstreamFigures>): ChainStepView[] {
  const plain = new Map(routes.filter((r) => r.kind === 'model').map((r) => [r.name.toLowerCase(), r]));
  return route.chain.map((model) => {
    const keys = plain.get(model.toLowerCase())?.replicas ?? [];
    const usable = keys.filter((k) => {
      const u = figures.get(k);
      return u !== undefined && u.state === 'ready' && u.failing !== true;
    }).length;
    return { model, replicas: keys.length, usable };
  });
}

/** What the view reads of `ProxyStats` (a whole ProxyStats will do). */
export interface ModelsInput {
  readonly models?: readonly ModelRouteView[] | undefined;
  readonly upstreams: readonly UpstreamFigures[];
  readonly failovers?: number | undefined;
}

export function modelsView(stats: ModelsInput): ModelsView {
  const routes = stats.models ?? [];
  const figures = new Map(stats.upstreams.map((u) => [u.upstream, u]));
  const rows = routes.map((route): ModelRowView => {
    if (route.kind === 'group') {
      return { name: route.name, kind: 'group', aliases: route.aliases, replicas: [], weighted: false, routedTotal: null, chain: chainSteps(route, routes, figures) };
    }
    return { name: route.name, kind: 'model', aliases: route.aliases, ...replicaViews(route.replicas, figures), chain: [] };
  });
  return { rows, failovers: stats.failovers ?? null, anyWeighted: rows.some((r) => r.weighted) };
}

/** "qwen → gemma": a group's chain as one line, for titles and tests. */
export function chainText(chain: readonly ChainStepView[]): string {
  return chain.map((s) => s.model).join(' → ');
}
