// Which upstream (host × service) serves a model name. Names and aliases
// match case-insensitively; the config refuses a name claimed by two services.
import type { PoolCaps } from '../../../src-preload/contract/index.js';
import type { Config } from '../config/index.js';
import { defaultCaps } from './pool.js';

export interface UpstreamSpec {
  /** `label/serviceId`. */
  key: string;
  label: string;
  serviceId: string;
  kind: 'vllm' | 'llama-server';
  model: string;
  aliases: string[];
  slots: number;
  caps: PoolCaps;
  apiKeyRef: string | null;
}

export interface ModelEntry {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  root: string;
  parent: string | null;
}

export class ModelRegistry {
  private readonly byName = new Map<string, UpstreamSpec>();
  readonly upstreams: readonly UpstreamSpec[];

  constructor(upstreams: UpstreamSpec[]) {
    this.upstreams = upstreams;
    for (const u of upstreams) {
      for (const name of [u.model, ...u.aliases]) {
        const key = name.toLowerCase();
        if (!this.byName.has(key)) this.byName.set(key, u);
      }
    }
  }

  static fromConfig(config: Config): ModelRegistry {
    const specs: UpstreamSpec[] = [];
    for (const host of config.hosts) {
      for (const s of host.services) {
        const key = `${host.label}/${s.id}`;
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
        });
      }
    }
    return new ModelRegistry(specs);
  }

  lookup(model: string): UpstreamSpec | undefined {
    return this.byName.get(model.toLowerCase());
  }

  get(key: string): UpstreamSpec | undefined {
    return this.upstreams.find((u) => u.key === key);
  }

  /** The union of every service's model and aliases, as OpenAI's /v1/models lists them. */
  models(createdS: number): ModelEntry[] {
    const out: ModelEntry[] = [];
    for (const u of this.upstreams) {
      out.push({ id: u.model, object: 'model', created: createdS, owned_by: u.key, root: u.model, parent: null });
      for (const a of u.aliases) out.push({ id: a, object: 'model', created: createdS, owned_by: u.key, root: u.model, parent: u.model });
    }
    return out;
  }
}
