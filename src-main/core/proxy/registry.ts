// Which upstreams (host × service) serve a model name. Names and aliases match
// case-insensitively. One model served by several services is one model with
// replicas; a group alias names an ordered fallback over models. The config
// check (config/schema.ts) refuses what would make a name ambiguous.
import type { ModelRouteView, PoolCaps, ServiceKind } from '../../../src-preload/contract/index.js';
import type { Config } from '../config/index.js';
import { upstreamKey } from '../upstream/index.js';
import { defaultCaps } from './pool.js';

export interface UpstreamSpec {
  /** `label/serviceId`. */
  key: string;
  label: string;
  serviceId: string;
  kind: ServiceKind;
  model: string;
  aliases: string[];
  slots: number;
  caps: PoolCaps;
  apiKeyRef: string | null;
  /** Share of the model's traffic against its other replicas (default 1). */
  weight: number;
}

export interface ModelEntry {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  root: string;
  parent: string | null;
  /** The services that serve it (`label/serviceId`), in config order. */
  replicas: string[];
  /** A group alias: the models it tries, in order. */
  fallback?: string[];
  /** The context length its servers report (the smallest over its replicas); absent when unknown. */
  max_model_len?: number;
}

/**
 * Where a requested name is placed: the models to try, in order (one for a plain model or alias), and
 * the replicas of each. ("Placement" is the model side; the HTTP path a request names is its endpoint.)
 */
export interface ModelPlacement {
  /** The name as configured (model, alias or group). */
  name: string;
  /** Canonical model names, first choice first; later ones only after a failure before the first byte. */
  chain: readonly string[];
  /** The replicas of each model in `chain`, same order. */
  replicas: readonly (readonly UpstreamSpec[])[];
}

export class ModelRegistry {
  private readonly placements = new Map<string, ModelPlacement>();
  private readonly byModel = new Map<string, UpstreamSpec[]>();
  private readonly groups: ReadonlyMap<string, readonly string[]>;
  readonly upstreams: readonly UpstreamSpec[];

  /** `groups`: alias → model names (or other group names) in fallback order; the config check keeps them acyclic. */
  constructor(upstreams: UpstreamSpec[], groups: Record<string, readonly string[]> = {}) {
    this.upstreams = upstreams;
    this.groups = new Map(Object.entries(groups));
    for (const u of upstreams) {
      const key = u.model.toLowerCase();
      const list = this.byModel.get(key);
      if (list) list.push(u);
      else this.byModel.set(key, [u]);
    }
    for (const u of upstreams) {
      for (const name of [u.model, ...u.aliases]) {
        const key = name.toLowerCase();
        if (this.placements.has(key)) continue;
        const replicas = this.byModel.get(u.model.toLowerCase())!;
        this.placements.set(key, { name, chain: [replicas[0]!.model], replicas: [replicas] });
      }
    }
    for (const [name] of this.groups) {
      const key = name.toLowerCase();
      if (this.placements.has(key)) continue;
      const chain = this.flatten(name, new Set());
      const replicas = chain.map((m) => this.byModel.get(m.toLowerCase()) ?? []);
      if (chain.length > 0) this.placements.set(key, { name, chain, replicas });
    }
  }

  static fromConfig(config: Config): ModelRegistry {
    const specs: UpstreamSpec[] = [];
    for (const host of config.hosts) {
      for (const s of host.services) {
        const key = upstreamKey(host.label, s.id);
        const extra = config.proxy.upstreams[key];
        const slots = extra?.slots ?? s.slots;
        const base = defaultCaps(slots);
        const caps: PoolCaps = {
          reservedInteractive: Math.min(slots, extra?.reservedInteractive ?? base.reservedInteractive),
          interactive: Math.min(slots, extra?.caps?.interactive ?? base.interactive),
          system: Math.min(slots, extra?.caps?.system ?? base.system),
          batch: Math.min(slots, extra?.caps?.batch ?? (extra?.reservedInteractive !== undefined ? slots - Math.min(slots, extra.reservedInteractive) : base.batch)),
        };
        specs.push({
          key,
          label: host.label,
          serviceId: s.id,
          kind: s.kind,
          model: s.model,
          aliases: [...s.aliases],
          slots,
          caps,
          apiKeyRef: extra?.apiKeyRef ?? null,
          weight: extra?.weight ?? 1,
        });
      }
    }
    return new ModelRegistry(specs, config.proxy.groups);
  }

  /** The placement a requested name leads to, or undefined (404 model_not_found). */
  lookup(name: string): ModelPlacement | undefined {
    return this.placements.get(name.toLowerCase());
  }

  get(key: string): UpstreamSpec | undefined {
    return this.upstreams.find((u) => u.key === key);
  }

  /** The replicas serving one model (by its canonical name), in config order. */
  replicasOf(model: string): readonly UpstreamSpec[] {
    return this.byModel.get(model.toLowerCase()) ?? [];
  }

  /** Every name a client may request, as OpenAI's /v1/models lists them: one entry per model, alias and group. */
  models(createdS: number): ModelEntry[] {
    const out: ModelEntry[] = [];
    const seen = new Set<string>();
    const add = (entry: ModelEntry) => {
      const key = entry.id.toLowerCase();
      if (seen.has(key)) return;
      seen.add(key);
      out.push(entry);
    };
    for (const replicas of this.byModel.values()) {
      const first = replicas[0]!;
      const keys = replicas.map((r) => r.key);
      const owner = keys.length === 1 ? first.key : 'gpu-console';
      add({ id: first.model, object: 'model', created: createdS, owned_by: owner, root: first.model, parent: null, replicas: keys });
      for (const r of replicas) {
        for (const a of r.aliases) add({ id: a, object: 'model', created: createdS, owned_by: owner, root: first.model, parent: first.model, replicas: keys });
      }
    }
    for (const [name] of this.groups) {
      const placed = this.placements.get(name.toLowerCase());
      if (!placed || placed.name !== name) continue;
      add({
        id: name,
        object: 'model',
        created: createdS,
        owned_by: 'gpu-console',
        root: placed.chain[0]!,
        parent: null,
        replicas: placed.replicas.flat().map((r) => r.key),
        fallback: [...placed.chain],
      });
    }
    return out;
  }

  /** Every model (with its replicas and aliases) and group, for the Proxy view. */
  placementViews(): ModelRouteView[] {
    const out: ModelRouteView[] = [];
    for (const replicas of this.byModel.values()) {
      const aliases: string[] = [];
      for (const r of replicas) for (const a of r.aliases) if (!aliases.some((x) => x.toLowerCase() === a.toLowerCase())) aliases.push(a);
      out.push({ name: replicas[0]!.model, kind: 'model', chain: [replicas[0]!.model], replicas: replicas.map((r) => r.key), aliases });
    }
    for (const [name] of this.groups) {
      const placed = this.placements.get(name.toLowerCase());
      if (!placed || placed.name !== name) continue;
      out.push({ name, kind: 'group', chain: [...placed.chain], replicas: placed.replicas.flat().map((r) => r.key), aliases: [] });
    }
    return out;
  }

  /** A group's models in order, groups inside it expanded, each model once; `seen` stops a cycle the config check missed. */
  private flatten(name: string, seen: Set<string>): string[] {
    const key = name.toLowerCase();
    if (seen.has(key)) return [];
    seen.add(key);
    const members = [...this.groups].find(([g]) => g.toLowerCase() === key)?.[1];
    if (!members) {
      const replicas = this.byModel.get(key) ?? this.aliasTarget(key);
      return replicas ? [replicas[0]!.model] : [];
    }
    const out: string[] = [];
    for (const m of members) for (const model of this.flatten(m, seen)) if (!out.includes(model)) out.push(model);
    return out;
  }

  private aliasTarget(key: string): UpstreamSpec[] | undefined {
    const u = this.upstreams.find((s) => s.aliases.some((a) => a.toLowerCase() === key));
    return u ? this.byModel.get(u.model.toLowerCase()) : undefined;
  }
}
